// Package volume is upstream v2's pkg/volume (kubernetes-csi/csi-proxy branch
// library-development at e776c65, pkg/volume/volume.go) on csi-node-proxy's
// library mode: New(hostapi.New()) gives the volume group of the process's
// library-mode node (package upstreamv2), whose calls pass the daemon's
// validation, policy gate and audit log.
package volume

import (
	model "github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	volumeapi "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/volume/hostapi"
)

// Interface is upstream v2's volume.Interface: the group model's, which has
// upstream's methods, names and types.
type Interface = model.Interface

// Volume is what New returns, as upstream's *volume.Volume: the group.
type Volume struct {
	model.Interface
}

var _ Interface = (*Volume)(nil)

// New returns the volume group hostAPI leads to. It fails when the shared
// library-mode node cannot be built (upstreamv2.SharedNode).
func New(hostAPI volumeapi.HostAPI) (*Volume, error) {
	g, err := hostAPI.Group()
	if err != nil {
		return nil, err
	}
	return &Volume{Interface: g}, nil
}
