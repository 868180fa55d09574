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
//   - an existing healthy mapping (Status OK and the share answers) is
//     reused whatever user name the request carries, as upstream does:
//     csi-driver-smb stages several PVs of one share, possibly with the
//     user spelled differently (user, DOMAIN\user);
//   - a stale one (not OK, or OK but the share no longer answers, as after
//     a password change) is removed and re-created with the request's
//     credentials;
//   - RequirePrivacy (SMB encryption) follows the daemon's
//     -require-privacy flag, true by default;
//   - error 1219 (Windows refusing a new mapping under another user name
//     for a server that already has one) is reported as
//     errdefs.ErrAlreadyExists with an explanation, wrong credentials as
//     errdefs.ErrPermissionDenied, a missing share as errdefs.ErrNotFound.
//
// Passwords are secrets: they go into the Create method's Credential
// parameter only, and every error text from the host is scrubbed of them.
package smbmap

import (
	"context"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/files"
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
	// ListLinks returns the links under roots, following none.
	ListLinks(ctx context.Context, roots []string) ([]files.FoundLink, error)
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
}

var _ smb.Host = (*Host)(nil)

func newHost(cfg Config, m smbMappings, reachable func(string) error, l linker) *Host {
	return &Host{cfg: cfg, mappings: m, reachable: reachable, links: l}
}

// linkTarget is what the local link points to: the full remote path with
// a trailing separator, as upstream creates it. It stays a plain UNC path
// (package files adds \\?\UNC\ only to long ones), not upstream's
// \\?\\\server\share\...\: Windows stores it as \??\UNC\server\share\...\,
// which Go's os.Readlink gives back as \\server\share\...\, the form
// csi-driver-smb parses in SMBUnmount (pkg/mounter/safe_mounter_windows.go,
// commit 95c69680) to find the share it unmaps. A link upstream made is
// read as the same target (files.SameTarget), so re-staging over it works.
func linkTarget(remotePath string) string { return strings.TrimRight(remotePath, `\`) + `\` }

// NewSmbGlobalMapping implements smb.Host.
//
// The local link is checked before the mapping is touched, so a link path
// already taken fails without mapping anything. Then, as upstream
// (kubernetes-csi/csi-proxy pkg/server/smb/server.go NewSmbGlobalMapping,
// pkg/os/smb/api.go IsSmbMapped, commit eeba4706):
//   - no mapping: create it;
//   - a mapping of the same remote path (compared without case) whose
//     Status is OK and whose share answers: reuse it, whatever the user
//     name. MSFT_SmbGlobalMapping does not report a mapping's user, and
//     upstream never compares it; the volume gets the access of the user
//     who made the mapping, as it does upstream;
//   - OK but the share does not answer: Remove(Force) and create it again
//     (upstream does the same after PathValid fails);
//   - any other Status (Disconnected, Reconnecting, ...): Remove(Force)
//     and create it again. Here upstream calls Create over the stale
//     mapping without removing it, which leaves the stale object in place
//     (kubernetes-sigs/azurefile-csi-driver#3416 fixed the same flaw in its
//     copy of this logic by removing it first); this backend removes it.
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
		if cur.Status == statusOK && h.reachable(share) == nil {
			return nil
		}
		// Stale: disconnected, or "OK" but the share does not answer
		// (the server restarted, the password changed). Re-create it
		// with the credentials of this request.
		if err := h.mappings.Remove(ctx, share); err != nil && !errorsIsNotFound(err) {
			return err
		}
	}
	var cred *credential
	if m.Username != "" {
		cred = &credential{User: m.Username, Password: m.Password}
	}
	return h.mappings.Create(ctx, share, cred, h.cfg.RequirePrivacy)
}

// RemoveSmbGlobalMapping implements smb.Host with Remove(Force = true); a
// share that is not mapped is errdefs.ErrNotFound. Links into the share
// stay, and stop resolving.
func (h *Host) RemoveSmbGlobalMapping(ctx context.Context, share string) error {
	share = strings.ToLower(share)
	return h.mappings.Remove(ctx, share)
}
