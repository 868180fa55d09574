// Package smb is upstream v2's pkg/smb (kubernetes-csi/csi-proxy branch
// library-development at e776c65, pkg/smb/smb.go) on csi-node-proxy's
// library mode: New(hostapi.New()) gives the smb group of the process's
// library-mode node (package upstreamv2), whose calls pass the daemon's
// validation, policy gate and audit log.
package smb

import (
	"context"

	model "github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/filesystem"
	smbapi "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/smb/hostapi"
)

// Interface is upstream v2's smb.Interface, with its spelling of the
// method names (the group model spells them NewSmbGlobalMapping, as the
// v1 wire does; *SMB has both).
type Interface interface {
	// NewSMBGlobalMapping maps a share for the node (model.Interface's
	// NewSmbGlobalMapping).
	NewSMBGlobalMapping(context.Context, *NewSMBGlobalMappingRequest) (*NewSMBGlobalMappingResponse, error)
	// RemoveSMBGlobalMapping removes a mapping (model.Interface's
	// RemoveSmbGlobalMapping).
	RemoveSMBGlobalMapping(context.Context, *RemoveSMBGlobalMappingRequest) (*RemoveSMBGlobalMappingResponse, error)
}

// SMB is what New returns, as upstream's *smb.SMB: the group with both
// spellings of its methods.
type SMB = model.SMB

var _ Interface = (*SMB)(nil)

// New returns the smb group hostAPI leads to. fsClient is accepted for
// upstream's signature and not used: upstream's SMB checks and links the
// local path through it, the group does that itself (with path
// confinement to the working directories).
func New(hostAPI smbapi.HostAPI, fsClient filesystem.Interface) (*SMB, error) {
	_ = fsClient
	g, err := hostAPI.Group()
	if err != nil {
		return nil, err
	}
	return &SMB{Interface: g}, nil
}
