// Package smbmap is the Windows backend of the SMB group (smb.Host): SMB
// global mappings, which make a share usable by every process and
// container on the node, and the directory links into them.
//
// Windows has no Win32 API for global mappings, so the mapping itself goes
// through the SMB WMI provider (MSFT_SmbGlobalMapping in
// Root\Microsoft\Windows\Smb, via package wmi); reachability is one
// GetFileAttributesW on the share, and the local link is a
// CreateSymbolicLinkW made by package files. No process is started.
//
// Behaviour drivers depend on (upstream csi-proxy):
//   - one mapping per \\server\share, whatever subdirectory a volume uses;
//   - an existing healthy mapping is reused; a stale one (not OK, or OK
//     but the share no longer answers, as after a password change) is
//     removed and re-created;
//   - RequirePrivacy (SMB encryption) follows the daemon's
//     -require-privacy flag, true by default;
//   - error 1219 (another user name for the same server) is reported as
//     errdefs.ErrAlreadyExists with an explanation, wrong credentials as
//     errdefs.ErrPermissionDenied, a missing share as errdefs.ErrNotFound.
//
// Passwords are secrets: they go into the Create method's Credential
// parameter only, and every error text from the host is scrubbed of them.
package smbmap

import (
	"context"
	"strings"
	"sync"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/host/windows/files"
)

// Config is the SMB backend's configuration.
type Config struct {
	// RequirePrivacy makes every new mapping require SMB encryption
	// (MSFT_SmbGlobalMapping.Create RequirePrivacy). The daemon sets it
	// from -require-privacy, which defaults to true as upstream's does;
	// servers without SMB 3 encryption then refuse with Windows error 65.
	RequirePrivacy bool
}

// DefaultConfig returns the configuration matching the daemon's flag
// defaults: RequirePrivacy true.
func DefaultConfig() Config { return Config{RequirePrivacy: true} }

// linker is what the SMB backend needs from the filesystem backend;
// *files.Host implements it.
type linker interface {
	// CheckLink tells what is at link relative to target.
	CheckLink(ctx context.Context, link, target string) (files.LinkState, error)
	// CreateDirLink creates a directory symlink at link to target; an
	// existing link to target is success.
	CreateDirLink(ctx context.Context, target, link string) error
}

var _ linker = (*files.Host)(nil)

// Host implements smb.Host on Windows.
type Host struct {
	cfg      Config
	mappings smbMappings
	// reachable checks that the share answers through the mapping
	// (GetFileAttributesW on \\server\share).
	reachable func(share string) error
	links     linker

	mu sync.Mutex
	// users records, by lower-case share, the user name (lower case) of
	// each mapping this process created. MSFT_SmbGlobalMapping does not
	// report the user of a mapping, so after a restart an existing
	// mapping's user is unknown and it is reused as upstream does.
	users map[string]string
}

var _ smb.Host = (*Host)(nil)

func newHost(cfg Config, m smbMappings, reachable func(string) error, l linker) *Host {
	return &Host{cfg: cfg, mappings: m, reachable: reachable, links: l, users: map[string]string{}}
}

// linkTarget is what the local link points to: the full remote path with
// a trailing separator, as upstream and the PowerShell-era code create it.
func linkTarget(remotePath string) string { return strings.TrimRight(remotePath, `\`) + `\` }

// NewSmbGlobalMapping implements smb.Host.
//
// The local link is checked before the mapping is touched, so a link path
// already taken fails without mapping anything. Then:
//   - no mapping: create it;
//   - a mapping this process created for another user: refused with
//     errdefs.ErrAlreadyExists (Windows would answer 1219 anyway, and
//     reusing it would hand this volume another user's access);
//   - status OK and the share answers: reuse it;
//   - otherwise (stale): Remove(Force) and create it again.
//
// Finally the directory link LocalPath → RemotePath\ is created; an
// existing link to the same place is success.
func (h *Host) NewSmbGlobalMapping(ctx context.Context, m smb.Mapping) error {
	target := linkTarget(m.RemotePath)
	if m.LocalPath != "" {
		st, err := h.links.CheckLink(ctx, m.LocalPath, target)
		if err != nil {
			return err
		}
		if st == files.LinkOther {
			return errdefs.Errorf(errdefs.ErrAlreadyExists, "local path %q already exists and is not a link to %s", m.LocalPath, target)
		}
	}
	if err := h.ensureMapping(ctx, m); err != nil {
		return err
	}
	if m.LocalPath != "" {
		return h.links.CreateDirLink(ctx, target, m.LocalPath)
	}
	return nil
}

func (h *Host) ensureMapping(ctx context.Context, m smb.Mapping) error {
	share := strings.ToLower(m.Share)
	cur, found, err := h.mappings.Get(ctx, share)
	if err != nil {
		return err
	}
	if found {
		if prev, known := h.user(share); known && !strings.EqualFold(prev, m.Username) {
			return errdefs.Errorf(errdefs.ErrAlreadyExists,
				"%s is already mapped on this node for user %q, not %q (Windows error 1219: one user name per server); use the same credentials for every volume on this share, or remove the mapping first", share, prev, m.Username)
		}
		if cur.Status == statusOK && h.reachable(share) == nil {
			return nil
		}
		// Stale: disconnected, or "OK" but the share does not answer
		// (the server restarted, the password changed). Re-create it
		// with the credentials of this request.
		if err := h.mappings.Remove(ctx, share); err != nil && !errorsIsNotFound(err) {
			return err
		}
		h.forget(share)
	}
	var cred *credential
	if m.Username != "" {
		cred = &credential{User: m.Username, Password: m.Password}
	}
	if err := h.mappings.Create(ctx, share, cred, h.cfg.RequirePrivacy); err != nil {
		return err
	}
	h.remember(share, m.Username)
	return nil
}

// RemoveSmbGlobalMapping implements smb.Host with Remove(Force = true); a
// share that is not mapped is errdefs.ErrNotFound. Links into the share
// stay, and stop resolving.
func (h *Host) RemoveSmbGlobalMapping(ctx context.Context, share string) error {
	share = strings.ToLower(share)
	if err := h.mappings.Remove(ctx, share); err != nil {
		return err
	}
	h.forget(share)
	return nil
}

func (h *Host) user(share string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	u, ok := h.users[share]
	return u, ok
}

func (h *Host) remember(share, user string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.users[share] = strings.ToLower(user)
}

func (h *Host) forget(share string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.users, share)
}
