package simulated

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
)

// SMBStatus is the state of an SMB global mapping, as
// MSFT_SmbGlobalMapping.Status names it.
type SMBStatus string

// The mapping states the simulation models.
const (
	// SMBOK is a healthy mapping.
	SMBOK SMBStatus = "OK"
	// SMBDisconnected is a stale mapping: the server dropped the session.
	// NewSmbGlobalMapping removes and re-creates it.
	SMBDisconnected SMBStatus = "Disconnected"
	// SMBUnavailable is a mapping whose share cannot be reached; like
	// Disconnected, only re-creating it helps.
	SMBUnavailable SMBStatus = "Unavailable"
)

// share is a share the simulated network offers, with its files.
type share struct {
	path     string // \\server\share as configured
	server   string // lower-case server name
	username string
	password string
	root     *node
}

// mapping is an SMB global mapping.
type mapping struct {
	share    *share
	username string
	status   SMBStatus
	created  time.Time // the world's clock when the mapping was made
}

func (w *world) addShare(s SMBShare) error {
	key, full, _ := smb.ParseRemotePath(s.Path) // Validate checked it
	sh := &share{path: full, server: strings.ToLower(split(full)[0]), username: s.Username, password: s.Password, root: newDir("")}
	w.shares[key] = sh
	for _, d := range s.Dirs {
		elems, _ := shareDir(d)
		if err := w.mkdirAll(&walker{w: w, server: true}, full+`\`+strings.Join(elems, `\`)); err != nil {
			return err
		}
	}
	return nil
}

// smbView is the SMB group backend.
type smbView struct{ h *Host }

// NewSmbGlobalMapping implements smb.Host.
//
//   - The share must be offered (errdefs.ErrNotFound, "the network name
//     cannot be found" or, for an unknown server, "the network path was not
//     found").
//   - An OK mapping of the share is reused whatever the user name,
//     without checking the password again, as upstream does
//     (kubernetes-csi/csi-proxy pkg/server/smb/server.go
//     NewSmbGlobalMapping, commit eeba4706, never looks at the user of an
//     OK mapping); the mapping keeps the user that made it.
//   - Creating a mapping while an OK mapping of another share on the same
//     server belongs to another user is errdefs.ErrAlreadyExists,
//     mirroring Windows error 1219: one user name per server.
//   - A Disconnected mapping is removed and re-created.
//   - Credentials must match the share's (errdefs.ErrPermissionDenied,
//     "logon failure", never quoting the password).
//   - With m.LocalPath, a directory link to m.RemotePath is created there:
//     its parent must exist, and an existing entry is
//     errdefs.ErrAlreadyExists unless it is a link to the same path. These
//     checks run before anything changes, so a failure leaves no mapping.
func (v smbView) NewSmbGlobalMapping(ctx context.Context, m smb.Mapping) error {
	// The Service hands over normalised paths; check again for direct
	// callers.
	key, _, err := smb.ParseRemotePath(m.Share)
	if err != nil {
		return err
	}
	if share, _, err := smb.ParseRemotePath(m.RemotePath); err != nil || share != key {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "remote path %q is not on share %s", m.RemotePath, m.Share)
	}
	return v.h.do(ctx, func(w *world) error {
		sh := w.shares[key]
		if sh == nil {
			for _, other := range w.shares {
				if other.server == strings.ToLower(split(key)[0]) {
					return errdefs.Errorf(errdefs.ErrNotFound, "share %s not found: the network name cannot be found", m.Share)
				}
			}
			return errdefs.Errorf(errdefs.ErrNotFound, "share %s not found: the network path was not found", m.Share)
		}
		existing := w.mappings[key]
		if existing != nil && existing.status != SMBOK {
			existing = nil // stale: re-created below
		}
		if existing == nil {
			for k, other := range w.mappings {
				if k != key && other.status == SMBOK && other.share.server == sh.server && !strings.EqualFold(other.username, m.Username) {
					return errorMultipleUsers(other.share.path, other.username)
				}
			}
			if sh.username != "" && (!strings.EqualFold(sh.username, m.Username) || sh.password != m.Password) {
				return errdefs.Errorf(errdefs.ErrPermissionDenied, "logon failure for user %q on %s: unknown user name or bad password (Windows error 1326)", m.Username, sh.path)
			}
		}
		if m.LocalPath != "" {
			lp, err := cleanView(m.LocalPath)
			if err != nil {
				return err
			}
			wk := &walker{w: w}
			pl, err := wk.resolve(lp, false)
			if err != nil {
				return err
			}
			if existing == nil {
				// Check the link first so that a failure maps nothing.
				sameLink := pl.n != nil && pl.n.kind == kindLink && strings.EqualFold(pl.n.target, m.RemotePath)
				if pl.dir == nil || pl.n != nil && !sameLink {
					return errdefs.Errorf(errdefs.ErrAlreadyExists, "local path %q already exists", lp)
				}
				w.mappings[key] = &mapping{share: sh, username: m.Username, status: SMBOK, created: w.clock()}
			}
			return w.link(wk, pl, lp, m.RemotePath, true)
		}
		if existing == nil {
			w.mappings[key] = &mapping{share: sh, username: m.Username, status: SMBOK, created: w.clock()}
		}
		return nil
	})
}

func errorMultipleUsers(share, user string) error {
	return errdefs.Errorf(errdefs.ErrAlreadyExists,
		"%s is already mapped as user %q; Windows error 1219: multiple connections to a server or shared resource by the same user, using more than one user name, are not allowed", share, user)
}

// RemoveSmbGlobalMapping implements smb.Host. Links to the share stay and
// no longer resolve.
func (v smbView) RemoveSmbGlobalMapping(ctx context.Context, shareRoot string) error {
	return v.h.do(ctx, func(w *world) error {
		key := strings.ToLower(shareRoot)
		if w.mappings[key] == nil {
			return errdefs.Errorf(errdefs.ErrNotFound, "no SMB global mapping for %s", shareRoot)
		}
		delete(w.mappings, key)
		return nil
	})
}

// DisconnectSMB makes the mapping of share (\\server\share, any case) stale,
// as a server restart would: links through it stop resolving until
// NewSmbGlobalMapping re-creates it. A share that is not mapped is
// errdefs.ErrNotFound.
func (h *Host) DisconnectSMB(shareRoot string) error {
	key, _, err := smb.ParseRemotePath(shareRoot)
	if err != nil {
		return err
	}
	return h.locked(func(w *world) error {
		m := w.mappings[key]
		if m == nil {
			return errdefs.Errorf(errdefs.ErrNotFound, "no SMB global mapping for %s", key)
		}
		m.status = SMBDisconnected
		return nil
	})
}

// SMBMappingInfo is a snapshot of an SMB global mapping.
type SMBMappingInfo struct {
	// Share is the lower-case \\server\share.
	Share    string
	Username string
	Status   SMBStatus
}

// SMBMappings returns a snapshot of the SMB global mappings, by share.
func (h *Host) SMBMappings() []SMBMappingInfo {
	var out []SMBMappingInfo
	_ = h.locked(func(w *world) error {
		for k, m := range w.mappings {
			out = append(out, SMBMappingInfo{Share: k, Username: m.username, Status: m.status})
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Share < out[j].Share })
	return out
}
