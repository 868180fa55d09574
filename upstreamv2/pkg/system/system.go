// Package system is upstream v2's pkg/system (kubernetes-csi/csi-proxy branch
// library-development at e776c65, pkg/system/system.go) on csi-node-proxy's
// library mode: New(hostapi.New()) gives the system group of the process's
// library-mode node (package upstreamv2), whose calls pass the daemon's
// validation, policy gate and audit log.
package system

import (
	model "github.com/csi-node-proxy/csi-node-proxy/groups/system"
	systemapi "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/system/hostapi"
)

// Interface is upstream v2's system.Interface: the group model's, which has
// upstream's methods, names and types.
type Interface = model.Interface

// System is what New returns, as upstream's *system.System: the group.
type System struct {
	model.Interface
}

var _ Interface = (*System)(nil)

// New returns the system group hostAPI leads to. It fails when the shared
// library-mode node cannot be built (upstreamv2.SharedNode).
func New(hostAPI systemapi.HostAPI) (*System, error) {
	g, err := hostAPI.Group()
	if err != nil {
		return nil, err
	}
	return &System{Interface: g}, nil
}
