// Package files is the Windows backend of the filesystem group
// (filesystem.Host): path checks, directories, symbolic links and the
// removal of links and volume mounted folders, with Win32 calls only.
//
// Every decision is made from the reparse tag read directly
// (GetFileAttributesExW + FindFirstFileW), never from Go's os.FileMode:
// Go 1.23 changed what os.Lstat reports for mount points (ModeIrregular
// instead of ModeSymlink, GODEBUG winsymlink), and csi-proxy's IsSymlink
// and Rmdir broke with it. Reading the tag keeps the answers independent of
// the Go version and GODEBUG settings.
//
// Drivers depend on two behaviours here (upstream csi-proxy):
//   - Rmdir, with or without force, on a symlink, junction or volume
//     mounted folder removes the reparse point itself and never the data
//     behind it; a tree is removed without entering any reparse point.
//   - IsSymlink is true for a symlink or mount point whose target exists.
//
// The logic lives in platform-neutral code over the fsAPI seam, so it is
// tested on Linux with a recording fake; fsapi_windows.go is the thin
// Win32 implementation of the seam.
package files

import (
	"context"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
)

// Host implements filesystem.Host on Windows. Paths arrive cleaned and
// inside the working directories (the filesystem Service checks them);
// Host itself only refuses drive roots as removal targets.
type Host struct {
	api fsAPI
}

var _ filesystem.Host = (*Host)(nil)

// newHost returns a Host over api; New wires the Win32 implementation.
func newHost(api fsAPI) *Host { return &Host{api: api} }

// LinkState is what CheckLink finds at a link path.
type LinkState int

const (
	// LinkAbsent means nothing exists at the path.
	LinkAbsent LinkState = iota
	// LinkToTarget means the path is a symlink or junction to the target
	// asked about.
	LinkToTarget
	// LinkOther means something else exists at the path (a file, a
	// directory, a mounted folder, or a link elsewhere).
	LinkOther
)

// PathExists implements filesystem.Host with Lstat semantics: a link whose
// target is gone still exists. A missing parent is "does not exist"; any
// other failure (a volume that is not ready, access denied) is an error.
func (h *Host) PathExists(ctx context.Context, path string) (bool, error) {
	if _, err := h.api.Lstat(path); err != nil {
		if isNotExist(err) {
			return false, nil
		}
		return false, fail(err, "stat %q", path)
	}
	return true, nil
}

// Mkdir implements filesystem.Host as MkdirAll: missing parents are
// created; an existing directory, volume mounted folder (even of an
// unformatted volume) or link to a directory is success; an existing file or a link that does not lead to a directory is
// errdefs.ErrAlreadyExists.
func (h *Host) Mkdir(ctx context.Context, path string) error {
	return h.mkdirAll(ctx, path)
}

func (h *Host) mkdirAll(ctx context.Context, p string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	fi, err := h.api.Lstat(p)
	switch {
	case err == nil:
		return h.checkDirLike(p, fi)
	case !isNotExist(err):
		return fail(err, "stat %q", p)
	}
	if parent := parentDir(p); parent != p {
		if err := h.mkdirAll(ctx, parent); err != nil {
			return err
		}
	}
	if err := h.api.CreateDirectory(p); err != nil {
		if e := errnoOf(err); e == errAlreadyExists || e == errFileExists {
			// Created concurrently: accept it if it is a directory.
			if fi, err2 := h.api.Lstat(p); err2 == nil {
				return h.checkDirLike(p, fi)
			}
		}
		return fail(err, "create directory %q", p)
	}
	return nil
}

// checkDirLike accepts an existing entry as the result of Mkdir when it is
// a directory or leads to one. A volume mounted folder is a directory
// whatever state its volume is in (an unformatted volume cannot be
// opened), so it is accepted without following it.
func (h *Host) checkDirLike(p string, fi fileInfo) error {
	if fi.isReparse() {
		if fi.tag == tagMountPoint && h.isVolumeMountPoint(p) {
			return nil
		}
		if st, err := h.api.Stat(p); err == nil && st.isDir() {
			return nil
		}
		return errdefs.Errorf(errdefs.ErrAlreadyExists, "%q exists and is a link or mount point that does not lead to a directory", p)
	}
	if fi.isDir() {
		return nil
	}
	return errdefs.Errorf(errdefs.ErrAlreadyExists, "%q exists and is not a directory", p)
}

// Rmdir implements filesystem.Host.
//
//   - A symlink, junction or volume mounted folder is removed itself,
//     force or not, and nothing behind it is touched. For a mounted folder
//     DeleteVolumeMountPointW runs first (so the mount manager forgets the
//     mount point, as UnmountVolume would), then RemoveDirectoryW.
//   - A file is deleted, as os.Remove does for upstream.
//   - A directory must be empty unless force; with force its tree goes,
//     without entering any reparse point inside it.
//   - A missing path is errdefs.ErrNotFound; a drive root is
//     errdefs.ErrFailedPrecondition.
func (h *Host) Rmdir(ctx context.Context, path string, force bool) error {
	if isDriveRoot(path) {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q is the root of a drive and cannot be removed", path)
	}
	fi, err := h.api.Lstat(path)
	if err != nil {
		return fail(err, "stat %q", path)
	}
	return h.remove(ctx, path, fi, force)
}

// remove removes the entry p described by fi (found without following it).
func (h *Host) remove(ctx context.Context, p string, fi fileInfo, force bool) error {
	switch {
	case fi.isReparse():
		return h.removeReparsePoint(p, fi)
	case !fi.isDir():
		return h.deleteFile(p, fi)
	case force:
		return h.removeTree(ctx, p, fi)
	}
	return h.removeDir(p, fi)
}

// removeReparsePoint removes a reparse point itself. Any reparse point is
// treated this way, not only name surrogates: a tree walk never enters one
// (as Go's os.RemoveAll does not), so cloud-file or container-layer
// placeholders are removed as entries or, if they are non-empty
// directories, reported.
func (h *Host) removeReparsePoint(p string, fi fileInfo) error {
	if fi.tag == tagMountPoint && h.isVolumeMountPoint(p) {
		// The conservative order (fact sheet §3.3): tell the mount
		// manager first. If it fails, RemoveDirectoryW below still
		// removes the reparse point, which is what callers need; its
		// error is the one reported if that fails too.
		_ = h.api.DeleteVolumeMountPoint(p)
	}
	if fi.isDir() {
		return h.removeDir(p, fi)
	}
	return h.deleteFile(p, fi)
}

// isVolumeMountPoint tells a volume mounted folder from a junction by the
// substitute name of its reparse data.
func (h *Host) isVolumeMountPoint(p string) bool {
	b, err := h.api.ReadReparsePoint(p)
	if err != nil {
		return false
	}
	rp, err := parseReparsePoint(b)
	return err == nil && rp.isVolume()
}

// removeTree removes the directory p and everything below it. Entries that
// are reparse points are removed themselves, never entered.
func (h *Host) removeTree(ctx context.Context, p string, fi fileInfo) error {
	if err := h.removeEntries(ctx, p); err != nil {
		return err
	}
	return h.removeDir(p, fi)
}

// removeEntries removes every entry of the directory p as Rmdir with force
// removes it. An entry that vanished meanwhile is not an error.
func (h *Host) removeEntries(ctx context.Context, p string) error {
	entries, err := h.api.ReadDir(p)
	if err != nil {
		return fail(err, "list %q", p)
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := h.remove(ctx, joinPath(p, e.name), e.info, true); err != nil && !isNotExist(err) {
			return err
		}
	}
	return nil
}

// removeDir removes an empty directory or a directory reparse point,
// clearing a read-only attribute that blocks it.
func (h *Host) removeDir(p string, fi fileInfo) error {
	err := h.api.RemoveDirectory(p)
	if errnoOf(err) == errAccessDenied && fi.attrs&attrReadonly != 0 {
		if h.clearReadonly(p, fi) == nil {
			err = h.api.RemoveDirectory(p)
		}
	}
	switch {
	case err == nil:
		return nil
	case errnoOf(err) == errDirNotEmpty:
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "directory %q is not empty; remove it with force", p)
	}
	return fail(err, "remove directory %q", p)
}

// deleteFile deletes a file or file symlink, clearing a read-only attribute
// that blocks it (as os.Remove does).
func (h *Host) deleteFile(p string, fi fileInfo) error {
	err := h.api.DeleteFile(p)
	if errnoOf(err) == errAccessDenied && fi.attrs&attrReadonly != 0 {
		if h.clearReadonly(p, fi) == nil {
			err = h.api.DeleteFile(p)
		}
	}
	if err != nil {
		return fail(err, "delete %q", p)
	}
	return nil
}

func (h *Host) clearReadonly(p string, fi fileInfo) error {
	a := fi.attrs & attrSettable &^ attrReadonly
	if a == 0 {
		a = attrNormal
	}
	return h.api.SetAttributes(p, a)
}

// RmdirContents implements filesystem.Host: path is followed if it is a
// link or mounted folder (as opening it would, and as upstream's
// Readdirnames does), must be a directory, and every entry in it is
// removed as Rmdir with force removes it.
func (h *Host) RmdirContents(ctx context.Context, path string) error {
	st, err := h.api.Stat(path)
	if err != nil {
		return fail(err, "stat %q", path)
	}
	if !st.isDir() {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q is not a directory", path)
	}
	return h.removeEntries(ctx, path)
}

// CreateSymlink implements filesystem.Host with CreateSymbolicLinkW. The
// link is a directory link unless source exists and is a file: unlike
// os.Symlink (upstream), a source that does not exist yet still gets a
// directory link, which works once the directory appears. An existing link
// to source is success; anything else at link is errdefs.ErrAlreadyExists.
func (h *Host) CreateSymlink(ctx context.Context, source, link string) error {
	if inPlace, err := h.linkInPlace(ctx, link, source); inPlace || err != nil {
		return err
	}
	var flags uint32 = symlinkDirectory
	if st, err := h.api.Stat(source); err == nil && !st.isDir() {
		flags = 0
	}
	return h.createSymlink(link, source, flags)
}

// CreateDirLink creates a directory symlink at link to target, which may
// be a UNC path (\\server\share\dir\, as the SMB backend links shares).
// It does not look at the target: SMB targets are reached through a global
// mapping and need no check here. An existing link to target is success.
func (h *Host) CreateDirLink(ctx context.Context, target, link string) error {
	if inPlace, err := h.linkInPlace(ctx, link, target); inPlace || err != nil {
		return err
	}
	return h.createSymlink(link, target, symlinkDirectory)
}

// linkInPlace is the check both link makers start with: true when link
// already leads to target (success, nothing to make), and
// errdefs.ErrAlreadyExists when something else is there.
func (h *Host) linkInPlace(ctx context.Context, link, target string) (bool, error) {
	state, err := h.CheckLink(ctx, link, target)
	switch {
	case err != nil:
		return false, err
	case state == LinkToTarget:
		return true, nil
	case state == LinkOther:
		return false, errdefs.Errorf(errdefs.ErrAlreadyExists, "%q already exists and is not a link to %q", link, target)
	}
	return false, nil
}

// createSymlink asks for an unprivileged link first and retries without
// the flag where Windows does not know it (before Windows 10 1703 it is
// ERROR_INVALID_PARAMETER), as os.Symlink does.
func (h *Host) createSymlink(link, target string, flags uint32) error {
	err := h.api.CreateSymlink(link, target, flags|symlinkAllowUnprivileged)
	if errnoOf(err) == errInvalidParameter {
		err = h.api.CreateSymlink(link, target, flags)
	}
	switch {
	case err == nil:
		return nil
	case errnoOf(err) == errPrivilegeNotHeld:
		return fail(err, "create link %q: the proxy needs SeCreateSymbolicLinkPrivilege (run it as an administrator or LocalSystem)", link)
	case isNotExist(err):
		return fail(err, "create link %q: its parent directory does not exist", link)
	}
	return fail(err, "create link %q to %q", link, target)
}

// CheckLink tells what is at link: nothing, a symlink or junction leading
// to target (compared as Windows compares paths, see SameTarget), or
// something else. It never follows link.
func (h *Host) CheckLink(ctx context.Context, link, target string) (LinkState, error) {
	fi, err := h.api.Lstat(link)
	switch {
	case err != nil && isNotExist(err):
		return LinkAbsent, nil
	case err != nil:
		return LinkOther, fail(err, "stat %q", link)
	case !fi.isReparse() || (fi.tag != tagSymlink && fi.tag != tagMountPoint):
		return LinkOther, nil
	}
	b, err := h.api.ReadReparsePoint(link)
	if err != nil {
		return LinkOther, fail(err, "read link %q", link)
	}
	rp, err := parseReparsePoint(b)
	if err != nil {
		return LinkOther, fail(err, "read link %q", link)
	}
	if !rp.isVolume() && SameTarget(rp.target(link), target) {
		return LinkToTarget, nil
	}
	return LinkOther, nil
}

// IsSymlink implements filesystem.Host: true for a symlink whose target
// resolves (opening the link follows it to the end), for a junction whose
// directory exists, and for a volume mounted folder whose volume the mount
// manager still resolves (GetVolumeNameForVolumeMountPointW succeeds);
// false for everything else. A missing path is errdefs.ErrNotFound, as
// upstream's Lstat error.
func (h *Host) IsSymlink(ctx context.Context, path string) (bool, error) {
	fi, err := h.api.Lstat(path)
	if err != nil {
		return false, fail(err, "stat %q", path)
	}
	if !fi.isReparse() {
		return false, nil
	}
	switch fi.tag {
	case tagSymlink:
		return h.resolves(path), nil
	case tagMountPoint:
		if b, err := h.api.ReadReparsePoint(path); err == nil {
			if rp, err := parseReparsePoint(b); err == nil && !rp.isVolume() {
				return h.resolves(path), nil // a junction
			}
		}
		_, err := h.api.VolumeNameForMountPoint(path)
		return err == nil, nil
	}
	return false, nil
}

// resolves tells whether opening path (following every link) succeeds. Any
// failure, not only "not found" (an unreachable share, a link loop, access
// denied), means the target is not usable, which is what IsSymlink
// callers ask.
func (h *Host) resolves(path string) bool {
	_, err := h.api.Stat(path)
	return err == nil
}
