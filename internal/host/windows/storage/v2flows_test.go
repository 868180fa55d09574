package storage_test

import (
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/storage"
	"github.com/csi-node-proxy/csi-node-proxy/test/drivers/v2mounters"
	"github.com/csi-node-proxy/csi-node-proxy/upstreamv2"
)

// The node flows of the drivers on upstream's v2 library (aws-ebs's and
// vSphere's v2 mounters, test/drivers/v2mounters), built with upstream's
// constructors from the upstreamv2 tree, against the real Windows storage
// backend over winModel (storage.ModelNode): the Windows seam test of the
// v2 library.

const v2Kubelet = `C:\var\lib\kubelet`

// v2World makes a model node the shared node of the upstreamv2 tree.
func v2World(t *testing.T) v2mounters.World {
	t.Helper()
	n, grow, setReadOnly := storage.ModelNode(t, v2mounters.Config(v2Kubelet))
	if err := upstreamv2.Use(n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := upstreamv2.Close(); err != nil {
			t.Error(err)
		}
	})
	return v2mounters.World{KubeletDir: v2Kubelet, Grow: grow, ReattachReadOnly: setReadOnly}
}

// TestV2DriverFlowsWindowsModel runs both drivers' v2 flows on the model.
func TestV2DriverFlowsWindowsModel(t *testing.T) {
	t.Run("aws-ebs", func(t *testing.T) { v2mounters.RunAWSEBS(t, v2World(t)) })
	t.Run("vsphere", func(t *testing.T) { v2mounters.RunVSphere(t, v2World(t)) })
}
