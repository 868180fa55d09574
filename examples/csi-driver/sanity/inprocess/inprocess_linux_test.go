//go:build linux

package inprocess

import (
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/examples/csi-driver/sanity/sanitytest"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

func TestSanity(t *testing.T) {
	sanitytest.RequireLinuxNode(t)
	s := linuxnode.New(t)
	node, err := inprocess.New(t.Context(), inprocess.Options{Host: inprocess.HostLinux, KubeletPath: s.Kubelet, LinuxFilesystem: "xfs"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := node.Close(); err != nil {
			t.Errorf("close the in-process node: %v", err)
		}
	})
	sanitytest.RunLinux(t, "library mode on the Linux backend", s, node)
}
