package mounter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
)

// SMBCredentials are the account an SMB share is mapped with. Password is
// a secret: the mounter never logs it nor puts it in an error, and the
// proxy does not either.
type SMBCredentials struct {
	// Username as the share expects it: user, DOMAIN\user or user@domain.
	Username string
	// Password is the account's password.
	Password string
}

// String hides the password, so that printing credentials by mistake
// (%v of a struct holding them) does not leak it.
func (c SMBCredentials) String() string {
	return fmt.Sprintf("{Username:%s Password:<redacted>}", c.Username)
}

// GoString hides the password from %#v too.
func (c SMBCredentials) GoString() string { return c.String() }

// SMBMount maps the share of source (\\server\share\dir or
// //server/share/dir) for the node with creds and makes target a link to
// source, as csi-driver-smb's NodeStage does. An empty directory at target
// (the kubelet makes the staging directory) is replaced; one holding data
// is refused, never deleted. The proxy reuses a healthy mapping of the
// share and re-creates a stale one. With Options.SMBStateDir the link is
// recorded, so that SMBUnmount removes the mapping when the share's last
// link goes.
func (m *Mounter) SMBMount(ctx context.Context, source, target string, creds SMBCredentials) error {
	remote, share, err := smbPaths(source)
	if err != nil {
		return err
	}
	unlock := m.lockShare(share)
	locked := true
	defer func() {
		if locked {
			unlock()
		}
	}()
	if parent := parentDir(target); parent != "" {
		if _, err := m.node.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: parent}); err != nil {
			return fmt.Errorf("create the parent of %s: %w", target, err)
		}
	}
	if err := m.clearStagingDir(ctx, target); err != nil {
		return err
	}
	req := &smb.NewSmbGlobalMappingRequest{RemotePath: remote, LocalPath: target, Username: creds.Username, Password: creds.Password}
	if _, err := m.node.SMB().NewSmbGlobalMapping(ctx, req); err != nil {
		return fmt.Errorf("map %s at %s: %w", remote, target, err)
	}
	if m.refs != nil {
		if err := m.refs.add(share, target, remote); err != nil {
			return err
		}
	}
	m.log.V(2).Info("SMB share mapped", "remote", remote, "target", target)
	// Other shares' mappings next, without this one's lock (each takes
	// its own); this share's was just mapped.
	locked = false
	unlock()
	m.reconcileSMBQuietly(ctx, share)
	return nil
}

// SMBCredentialsFunc returns the credentials to map share (the lower-case
// \\server\share root) with, as the driver keeps them (the secret of a
// volume on that share). ok false means the share is not the driver's:
// its mapping is left alone. A returned error is reported and the share
// skipped. It is called only for mappings that need re-creating.
type SMBCredentialsFunc func(ctx context.Context, share string) (creds SMBCredentials, ok bool, err error)

// ReconcileSMBMappings re-creates every SMB global mapping that links
// under the node's working directories still lead into and whose status
// is not OK (or which is gone), with the credentials Options.SMBCredentials
// gives for its share, through the proxy's smbmappings group
// (ListSmbGlobalMappings, then ReconcileSmbGlobalMapping per share, under
// the same per-share lock as SMBMount and SMBUnmount). It returns what the
// proxy did for each share it asked about; shares the callback does not
// know are skipped. Without Options.SMBCredentials it is
// errdefs.ErrFailedPrecondition. Errors of single shares are joined; the
// other shares are still tried.
func (m *Mounter) ReconcileSMBMappings(ctx context.Context) ([]*smbmappings.ReconcileSmbGlobalMappingResponse, error) {
	if m.creds == nil {
		return nil, errdefs.Errorf(errdefs.ErrFailedPrecondition, "no Options.SMBCredentials: the mounter cannot re-create SMB mappings")
	}
	return m.reconcileSMB(ctx, "")
}

// smbMappingsNode is a node with csi-node-proxy's own SMB mappings group
// besides upstream's six: library mode's inprocess.Node and the client's
// Client both are; groups.Node keeps upstream's shape without it.
type smbMappingsNode interface {
	SMBMappings() smbmappings.Interface
}

// reconcileSMB is ReconcileSMBMappings, skipping share except ("" none).
func (m *Mounter) reconcileSMB(ctx context.Context, except string) ([]*smbmappings.ReconcileSmbGlobalMappingResponse, error) {
	g, ok := m.node.(smbMappingsNode)
	if !ok {
		return nil, errdefs.Errorf(errdefs.ErrUnimplemented, "the node (%T) has no SMB mappings group to re-create mappings through", m.node)
	}
	list, err := g.SMBMappings().ListSmbGlobalMappings(ctx, &smbmappings.ListSmbGlobalMappingsRequest{})
	if err != nil {
		return nil, fmt.Errorf("list SMB global mappings: %w", err)
	}
	var (
		out  []*smbmappings.ReconcileSmbGlobalMappingResponse
		errs []error
	)
	for _, mp := range list.Mappings {
		share := strings.ToLower(mp.RemotePath)
		if mp.Status == smbmappings.StatusOK || len(mp.Links) == 0 || share == except {
			continue
		}
		creds, ok, err := m.creds(ctx, share)
		if err != nil {
			errs = append(errs, fmt.Errorf("credentials of %s: %w", share, err))
			continue
		}
		if !ok {
			continue
		}
		r, err := m.reconcileShare(ctx, g.SMBMappings(), share, creds)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		m.log.V(2).Info("SMB mapping reconciled", "share", share, "status", r.PreviousStatus, "action", r.Action)
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

// reconcileShare asks the proxy to repair one share's mapping, holding
// the share's lock so that it does not race this process's SMBUnmount.
func (m *Mounter) reconcileShare(ctx context.Context, g smbmappings.Interface, share string, creds SMBCredentials) (*smbmappings.ReconcileSmbGlobalMappingResponse, error) {
	unlock := m.lockShare(share)
	defer unlock()
	r, err := g.ReconcileSmbGlobalMapping(ctx, &smbmappings.ReconcileSmbGlobalMappingRequest{
		RemotePath: share, Username: creds.Username, Password: creds.Password,
	})
	if err != nil {
		return nil, fmt.Errorf("re-create the mapping of %s: %w", share, err)
	}
	return r, nil
}

// reconcileSMBQuietly runs reconcileSMB when the driver gave credentials,
// at a stage or publish: a failure there is logged, not returned, since
// the call's own work is done and a share that cannot be re-mapped now
// is no reason to fail another volume.
func (m *Mounter) reconcileSMBQuietly(ctx context.Context, except string) {
	if m.creds == nil {
		return
	}
	if _, err := m.reconcileSMB(ctx, except); err != nil {
		m.log.Error(err, "re-creating SMB mappings that are not OK")
	}
}

// clearStagingDir removes the empty directory the kubelet makes at a
// staging path before NodeStageVolume (pkg/volume/csi csi_attacher.go,
// MountDevice), where the mapping's link must go: the proxy refuses to
// link over it (AlreadyExists). csi-driver-smb does the same before
// mapping (@ 95c69680 pkg/smb/smb_common_windows.go, prepareStagePath).
// Not Force: a directory holding data makes Rmdir fail and is kept. A
// link already there is left to the proxy to answer for.
func (m *Mounter) clearStagingDir(ctx context.Context, target string) error {
	fsys := m.node.Filesystem()
	ex, err := fsys.PathExists(ctx, &filesystem.PathExistsRequest{Path: target})
	if err != nil {
		return fmt.Errorf("check %s: %w", target, err)
	}
	if !ex.Exists {
		return nil
	}
	link, err := fsys.IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: target})
	if err != nil {
		return fmt.Errorf("check %s: %w", target, err)
	}
	if link.IsSymlink {
		return nil
	}
	if _, err := fsys.Rmdir(ctx, &filesystem.RmdirRequest{Path: target}); err != nil {
		return fmt.Errorf("%s exists and is not an empty directory that could be replaced by the share's link: %w", target, err)
	}
	return nil
}

// SMBUnmount removes the link SMBMount made at target and, when
// Options.SMBStateDir records it and it was the share's last link, the
// share's global mapping. A link that was not recorded (no SMBStateDir, or
// made by someone else) is removed and the mapping left alone: other links
// may use it. Nothing at target is success.
func (m *Mounter) SMBUnmount(ctx context.Context, target string) error {
	if m.refs != nil {
		ref, ok, err := m.refs.lookup(target)
		if err != nil {
			return err
		}
		if ok {
			return m.smbUnmount(ctx, target, ref)
		}
	}
	if _, err := m.node.Filesystem().Rmdir(ctx, &filesystem.RmdirRequest{Path: target, Force: true}); err != nil {
		return fmt.Errorf("remove the link %s: %w", target, err)
	}
	m.log.V(2).Info("SMB link removed; its share's mapping is kept (no record of its links)", "target", target)
	return nil
}

// smbUnmount removes a recorded link and, if it was the last, the mapping.
func (m *Mounter) smbUnmount(ctx context.Context, target string, ref smbRef) error {
	unlock := m.lockShare(ref.share)
	defer unlock()
	if _, err := m.node.Filesystem().Rmdir(ctx, &filesystem.RmdirRequest{Path: target, Force: true}); err != nil {
		return fmt.Errorf("remove the link %s: %w", target, err)
	}
	left, err := m.refs.remove(ref)
	if err != nil {
		return err
	}
	if left > 0 {
		m.log.V(2).Info("SMB link removed; the share's mapping stays for its other links", "target", target, "share", ref.share, "links", left)
		return nil
	}
	if _, err := m.node.SMB().RemoveSmbGlobalMapping(ctx, &smb.RemoveSmbGlobalMappingRequest{RemotePath: ref.remote}); err != nil && !errors.Is(err, errdefs.ErrNotFound) {
		return fmt.Errorf("remove the mapping of %s: %w", ref.share, err)
	}
	m.log.V(2).Info("SMB link and mapping removed", "target", target, "share", ref.share)
	return nil
}

// lockShare serialises mapping and unmapping one share in this process, so
// that a mount racing the last unmount cannot lose its mapping.
func (m *Mounter) lockShare(share string) func() {
	v, _ := m.shareLocks.LoadOrStore(share, &sync.Mutex{})
	mu := v.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// isSMB tells whether a Mount is an SMB mount.
func isSMB(source, fstype string) bool {
	return strings.HasPrefix(source, `\\`) || strings.HasPrefix(source, "//") ||
		strings.EqualFold(fstype, "smb") || strings.EqualFold(fstype, "cifs")
}

// smbPaths returns source with '\' separators and no trailing one, and the
// lower-case \\server\share it maps (a mapping is per share root).
func smbPaths(source string) (remote, share string, err error) {
	remote = strings.TrimRight(strings.ReplaceAll(source, "/", `\`), `\`)
	var parts []string
	for _, p := range strings.Split(strings.TrimPrefix(remote, `\\`), `\`) {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if !strings.HasPrefix(remote, `\\`) || len(parts) < 2 {
		return "", "", errdefs.Errorf(errdefs.ErrInvalidArgument, "SMB source %q is not \\\\server\\share or a path below it", source)
	}
	return remote, strings.ToLower(`\\` + parts[0] + `\` + parts[1]), nil
}

// smbRef is one recorded link: a file <dir>/<share key>/<target key>
// holding the three paths, one per line.
type smbRef struct {
	share, target, remote string
	file                  string
}

// refStore keeps SMB link records in the driver's own directory (see
// Options.SMBStateDir): files, so that they survive a driver restart.
type refStore struct {
	dir string
}

// key names a path in the store: a hash, as paths hold characters file
// names may not. Windows paths compare without case, so keys do too.
func key(s string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimRight(s, `\/`))))
	return hex.EncodeToString(sum[:12])
}

// add records the link target to remote on share.
func (r *refStore) add(share, target, remote string) error {
	dir := filepath.Join(r.dir, key(share))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("record the SMB link %s: %w", target, err)
	}
	body := share + "\n" + target + "\n" + remote + "\n"
	if err := os.WriteFile(filepath.Join(dir, key(target)), []byte(body), 0o600); err != nil {
		return fmt.Errorf("record the SMB link %s: %w", target, err)
	}
	return nil
}

// lookup finds the record of the link at target.
func (r *refStore) lookup(target string) (smbRef, bool, error) {
	matches, err := filepath.Glob(filepath.Join(r.dir, "*", key(target)))
	if err != nil || len(matches) == 0 {
		return smbRef{}, false, err
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		return smbRef{}, false, fmt.Errorf("read the SMB link record of %s: %w", target, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 {
		return smbRef{}, false, fmt.Errorf("SMB link record %s is damaged: %d lines, want 3", matches[0], len(lines))
	}
	return smbRef{share: lines[0], target: lines[1], remote: lines[2], file: matches[0]}, true, nil
}

// remove deletes a record and returns how many links the share has left.
func (r *refStore) remove(ref smbRef) (int, error) {
	if err := os.Remove(ref.file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("remove the SMB link record of %s: %w", ref.target, err)
	}
	entries, err := os.ReadDir(filepath.Dir(ref.file))
	if err != nil {
		return 0, fmt.Errorf("count the links of %s: %w", ref.share, err)
	}
	return len(entries), nil
}
