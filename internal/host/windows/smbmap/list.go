package smbmap

import (
	"context"
	"fmt"

	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

var _ smbmappings.Host = (*Host)(nil)

// statusNames are the MSFT_SmbGlobalMapping.Status values by number: the
// MSFT_SmbMapping enumeration (Learn "MSFT_SmbMapping class"; the global
// mapping class uses the same values, facts in windows-apis.md §4.1).
var statusNames = [...]string{
	0: smbmappings.StatusOK,
	1: smbmappings.StatusPaused,
	2: smbmappings.StatusDisconnected,
	3: smbmappings.StatusNetworkError,
	4: smbmappings.StatusConnecting,
	5: smbmappings.StatusReconnecting,
	6: smbmappings.StatusUnavailable,
}

// statusName names a Status value; one the enumeration does not have is
// StatusUnknown, never OK.
func statusName(st uint32) string {
	if int(st) < len(statusNames) {
		return statusNames[st]
	}
	return smbmappings.StatusUnknown
}

// List implements smbMappings: every MSFT_SmbGlobalMapping's RemotePath
// and Status, in one query.
func (w wmiMappings) List(ctx context.Context) ([]mapping, error) {
	rows, err := w.c.Query(ctx, wmi.Query(mappingClass).Select("RemotePath", "Status"))
	if err != nil {
		return nil, hostError(err, noHint, nil, "query %s", mappingClass)
	}
	out := make([]mapping, 0, len(rows))
	for _, r := range rows {
		rp, err := r.String("RemotePath")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mappingClass, err)
		}
		st, err := r.Uint32("Status")
		if err != nil {
			return nil, fmt.Errorf("%s of %s: %w", mappingClass, rp, err)
		}
		out = append(out, mapping{RemotePath: rp, Status: st})
	}
	return out, nil
}

// ListSmbGlobalMappings implements smbmappings.Host. MSFT_SmbGlobalMapping
// has no creation time, so Created stays zero and the group counts age
// from when it first saw a mapping.
func (h *Host) ListSmbGlobalMappings(ctx context.Context) ([]smbmappings.Mapping, error) {
	ms, err := h.mappings.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]smbmappings.Mapping, len(ms))
	for i, m := range ms {
		out[i] = smbmappings.Mapping{Share: m.RemotePath, Status: statusName(m.Status)}
	}
	return out, nil
}

// ListSmbLinks implements smbmappings.Host with the filesystem backend's
// walk (files.Host.ListLinks), which follows no reparse point.
func (h *Host) ListSmbLinks(ctx context.Context, roots []string) ([]smbmappings.Link, error) {
	ls, err := h.links.ListLinks(ctx, roots)
	if err != nil {
		return nil, err
	}
	out := make([]smbmappings.Link, len(ls))
	for i, l := range ls {
		out[i] = smbmappings.Link{Path: l.Path, Target: l.Target}
	}
	return out, nil
}
