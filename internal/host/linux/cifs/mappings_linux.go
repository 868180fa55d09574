package cifs

import (
	"context"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
)

var _ smbmappings.Host = (*Host)(nil)

// errNoMappingList is what the SMB mappings group gets on Linux. Not done
// yet, rather than impossible: a mapping here is a CIFS mount under
// Config.MountRoot, whose status a stat(2) would give and whose links a
// walk of the working directories would find; docs/compatibility.md
// ("SMB mapping hygiene") says so.
func errNoMappingList() error {
	return errdefs.Errorf(errdefs.ErrUnimplemented, "listing, reconciling and collecting SMB mappings is not implemented on Linux nodes yet: a mapping here is a CIFS mount under the proxy's mount root; use RemoveSmbGlobalMapping per share")
}

// ListSmbGlobalMappings implements smbmappings.Host: not implemented on
// Linux (errdefs.ErrUnimplemented).
func (h *Host) ListSmbGlobalMappings(context.Context) ([]smbmappings.Mapping, error) {
	return nil, errNoMappingList()
}

// ListSmbLinks implements smbmappings.Host: not implemented on Linux
// (errdefs.ErrUnimplemented).
func (h *Host) ListSmbLinks(context.Context, []string) ([]smbmappings.Link, error) {
	return nil, errNoMappingList()
}
