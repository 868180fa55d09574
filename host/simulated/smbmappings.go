package simulated

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// clock is the world's time: SetClock's, or time.Now.
func (w *world) clock() time.Time {
	if w.now != nil {
		return w.now()
	}
	return time.Now()
}

// SetClock makes the host stamp SMB global mappings with now's time
// instead of time.Now, so that a test can age them (the SMB mappings
// group collects only mappings older than a grace period).
func (h *Host) SetClock(now func() time.Time) {
	_ = h.locked(func(w *world) error {
		w.now = now
		return nil
	})
}

// RebootSMB models what a node reboot does to SMB global mappings, the
// pain of kubernetes-csi/csi-driver-smb#1219 and kubernetes-sigs/
// azurefile-csi-driver#3416: every mapping comes back Disconnected (its
// session is gone and Windows does not re-authenticate it by itself), and
// the links into it stay but no longer resolve until NewSmbGlobalMapping
// (or the SMB mappings group's Reconcile) makes it again.
func (h *Host) RebootSMB() {
	_ = h.locked(func(w *world) error {
		for _, m := range w.mappings {
			m.status = SMBDisconnected
		}
		return nil
	})
}

// SetSMBStatus sets the status of share's mapping (\\server\share, any
// case), as the SMB client does on its own: SMBUnavailable when the server
// stops answering, SMBOK when it reconnects. A share that is not mapped
// is errdefs.ErrNotFound.
func (h *Host) SetSMBStatus(shareRoot string, st SMBStatus) error {
	switch st {
	case SMBOK, SMBDisconnected, SMBUnavailable:
	default:
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "SMB status %q is not one the simulation models", st)
	}
	return h.locked(func(w *world) error {
		m := w.mappings[strings.ToLower(shareRoot)]
		if m == nil {
			return errdefs.Errorf(errdefs.ErrNotFound, "no SMB global mapping for %s", shareRoot)
		}
		m.status = st
		return nil
	})
}

// smbMappingsView is the SMB mappings group backend.
type smbMappingsView struct{ h *Host }

// ListSmbGlobalMappings implements smbmappings.Host: every mapping with
// its status and the time it was made.
func (v smbMappingsView) ListSmbGlobalMappings(ctx context.Context) ([]smbmappings.Mapping, error) {
	return read(ctx, v.h, func(w *world) ([]smbmappings.Mapping, error) {
		out := make([]smbmappings.Mapping, 0, len(w.mappings))
		for k, m := range w.mappings {
			out = append(out, smbmappings.Mapping{Share: k, Status: string(m.status), Created: m.created})
		}
		return out, nil
	})
}

// ListSmbLinks implements smbmappings.Host: it walks each root's tree,
// reporting every link with its stored target, and enters neither links
// nor mounted volumes, as the Windows backend's walk does not.
func (v smbMappingsView) ListSmbLinks(ctx context.Context, roots []string) ([]smbmappings.Link, error) {
	return read(ctx, v.h, func(w *world) ([]smbmappings.Link, error) {
		var out []smbmappings.Link
		for _, r := range roots {
			root, err := cleanView(r)
			if err != nil {
				return nil, err
			}
			pl, err := (&walker{w: w}).resolve(root, false)
			if err != nil {
				if errors.Is(err, errdefs.ErrNotFound) {
					continue // a working directory not made yet holds no links
				}
				return nil, err
			}
			if pl.n == nil || pl.n.kind != kindDir {
				continue
			}
			out = appendLinks(out, root, pl.n)
		}
		return out, nil
	})
}

// appendLinks adds the links below dir, whose path is p.
func appendLinks(out []smbmappings.Link, p string, dir *node) []smbmappings.Link {
	for _, c := range dir.children {
		cp := hostpath.Windows.Join(p, c.name)
		switch c.kind {
		case kindLink:
			out = append(out, smbmappings.Link{Path: cp, Target: c.target})
		case kindDir:
			out = appendLinks(out, cp, c)
		}
	}
	return out
}
