// Package disk is upstream v2's pkg/disk (kubernetes-csi/csi-proxy branch
// library-development at e776c65, pkg/disk/disk.go; disk with PR #438's SetDiskReadOnly and GetDiskReadOnly, commit 874f535) on csi-node-proxy's
// library mode: New(hostapi.New()) gives the disk group of the process's
// library-mode node (package upstreamv2), whose calls pass the daemon's
// validation, policy gate and audit log.
package disk

import (
	model "github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	diskapi "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/disk/hostapi"
)

// Interface is upstream v2's disk.Interface: the group model's, which has
// upstream's methods, names and types.
type Interface = model.Interface

// Disk is what New returns, as upstream's *disk.Disk: the group.
type Disk struct {
	model.Interface
}

var _ Interface = (*Disk)(nil)

// New returns the disk group hostAPI leads to. It fails when the shared
// library-mode node cannot be built (upstreamv2.SharedNode).
func New(hostAPI diskapi.HostAPI) (*Disk, error) {
	g, err := hostAPI.Group()
	if err != nil {
		return nil, err
	}
	return &Disk{Interface: g}, nil
}
