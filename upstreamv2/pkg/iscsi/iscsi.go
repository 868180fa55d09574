// Package iscsi is upstream v2's pkg/iscsi (kubernetes-csi/csi-proxy branch
// library-development at e776c65, pkg/iscsi/iscsi.go) on csi-node-proxy's
// library mode: New(hostapi.New()) gives the iscsi group of the process's
// library-mode node (package upstreamv2), whose calls pass the daemon's
// validation, policy gate and audit log.
package iscsi

import (
	model "github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	iscsiapi "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/iscsi/hostapi"
)

// Interface is upstream v2's iscsi.Interface: the group model's, which has
// upstream's methods, names and types.
type Interface = model.Interface

// ISCSI is what New returns, as upstream's *iscsi.ISCSI: the group.
type ISCSI struct {
	model.Interface
}

var _ Interface = (*ISCSI)(nil)

// New returns the iscsi group hostAPI leads to. It fails when the shared
// library-mode node cannot be built (upstreamv2.SharedNode).
func New(hostAPI iscsiapi.HostAPI) (*ISCSI, error) {
	g, err := hostAPI.Group()
	if err != nil {
		return nil, err
	}
	return &ISCSI{Interface: g}, nil
}
