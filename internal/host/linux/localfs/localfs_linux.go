//go:build linux

package localfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/beneath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

const (
	// maxStackedMounts bounds the mounts unmounted from one directory:
	// mounts can be stacked, but not without end.
	maxStackedMounts = 64
	// maxEmptyPasses bounds how often a forced removal re-reads a
	// directory that something keeps filling while it is being emptied.
	maxEmptyPasses = 3
)

// PathExists implements filesystem.Host with lstat semantics: a dangling
// link exists. A path whose parent is missing or not a directory does not
// exist; one whose parent resolves outside the working directories is
// errdefs.ErrPermissionDenied rather than an answer about somewhere else.
func (f *FS) PathExists(ctx context.Context, path string) (bool, error) {
	p, dirfd, name, err := f.parent(ctx, path)
	if errors.Is(err, errdefs.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer beneath.Close(dirfd)
	var st unix.Stat_t
	err = unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR):
		return false, nil
	}
	return false, beneath.PathError("lstat", p, err)
}

// Mkdir implements filesystem.Host with os.MkdirAll semantics, but every
// element is created (mkdirat) and opened beneath the working directory:
// links on the way are followed only where they stay inside the working
// directories, and never to create a dangling link's target. An existing
// directory (or link to one) is success; an existing non-directory is
// errdefs.ErrAlreadyExists. A missing working directory is
// errdefs.ErrNotFound: the proxy does not create its working directories.
func (f *FS) Mkdir(ctx context.Context, path string) error {
	p, err := f.clean(ctx, path)
	if err != nil {
		return err
	}
	fd, err := f.roots.MkdirAll(p)
	if err == nil {
		beneath.Close(fd)
	}
	return err
}

// Rmdir implements filesystem.Host. What is at path is removed, never what
// it points to: a symbolic link (or any non-directory, as os.Remove does)
// is unlinked; a mount point is unmounted (every mount stacked there) and
// its directory then removed like any directory, even without force (as
// removing a Windows mount point folder removes the mount point); an empty
// directory is removed; a non-empty one is errdefs.ErrFailedPrecondition
// without force, and with force its tree is removed without following a
// link or entering a mount point: nested links are unlinked and nested
// mount points unmounted first, so neither link targets nor mounted data
// are touched. A busy mount point is errdefs.ErrUnavailable (see unmount).
// A working directory itself is errdefs.ErrPermissionDenied, whatever the
// path is spelt like (a link to it, or to the directory holding an inner
// working directory): the entry is compared with the working directories
// by device and inode (beneath.Guard), and so is every directory a forced
// removal meets, so a forced removal stops at a working directory nested
// below the one removed.
func (f *FS) Rmdir(ctx context.Context, path string, force bool) error {
	p, dirfd, name, err := f.parent(ctx, path)
	if err != nil {
		return err
	}
	defer beneath.Close(dirfd)
	return removeEntry(ctx, f.roots.Guard(), dirfd, name, p, force)
}

// RmdirContents implements filesystem.Host: path is resolved like any
// path (a link to a directory inside the working directories is followed,
// and a mount point is entered, as opening the directory would) and must be
// a directory; every entry in it is then removed as Rmdir with force
// removes it. So emptying a mount point deletes the files of the mounted
// filesystem (that is what was asked), but a mount point or link inside it
// is only unmounted or unlinked. A working directory itself is
// errdefs.ErrPermissionDenied however it is reached (a link to it): the
// directory opened is compared with the working directories by device and
// inode before anything is removed.
func (f *FS) RmdirContents(ctx context.Context, path string) error {
	p, err := f.clean(ctx, path)
	if err != nil {
		return err
	}
	pfd, err := f.roots.Open(p)
	if err != nil {
		return err
	}
	defer beneath.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return beneath.PathError("stat", p, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q is not a directory", p)
	}
	g := f.roots.Guard()
	if err := g.CheckFd(pfd, p); err != nil {
		return err
	}
	// Reading a directory needs a real descriptor; "." beneath the O_PATH
	// one is the same directory, with nothing to resolve.
	dfd, err := unix.Openat(pfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return beneath.PathError("open", p, err)
	}
	return emptyDir(ctx, g, dfd, p)
}

// CreateSymlink implements filesystem.Host: a link at link whose target is
// the absolute path source (upstream links to the absolute path too). The
// link's parent is resolved beneath its working directory and must exist
// (errdefs.ErrNotFound); source must lie in a working directory and must
// not resolve outside the working directories (errdefs.ErrPermissionDenied),
// but it need not exist, as upstream allows dangling links. Neither end may
// be a working directory itself (errdefs.ErrPermissionDenied), by path or
// by identity (a link to one): drivers link a publish path to a staging
// directory below a working directory, never to a working directory's
// root, and a link to one would let RmdirContents or a mount reach it
// under another name. An existing link to the same source is success;
// anything else at link is errdefs.ErrAlreadyExists.
func (f *FS) CreateSymlink(ctx context.Context, source, link string) error {
	src, err := f.clean(ctx, source)
	if err != nil {
		return err
	}
	l, _, err := f.roots.Clean(link)
	if err != nil {
		return err
	}
	if f.roots.IsRoot(src) {
		return errdefs.Errorf(errdefs.ErrPermissionDenied, "source %q is a working directory itself; a link may lead below one, not to it", src)
	}
	g := f.roots.Guard()
	// Resolve the source beneath its working directory. ErrNotFound is
	// fine: it is reported only after every existing element resolved
	// beneath, so a dangling source cannot hide an escape.
	sfd, err := f.roots.Open(src)
	switch {
	case err == nil:
		err = g.CheckFd(sfd, src)
		beneath.Close(sfd)
		if err != nil {
			return fmt.Errorf("source: %w", err)
		}
	case errors.Is(err, errdefs.ErrNotFound):
	default:
		return fmt.Errorf("source %q: %w", src, err)
	}
	dirfd, name, err := f.roots.Parent(l)
	if errors.Is(err, errdefs.ErrNotFound) {
		return errdefs.Errorf(errdefs.ErrNotFound, "the directory that would hold the link %q does not exist (%v)", l, err)
	}
	if err != nil {
		return err
	}
	defer beneath.Close(dirfd)
	if err := g.CheckEntry(dirfd, name, nil, l); err != nil {
		return err
	}
	err = unix.Symlinkat(src, dirfd, name)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EEXIST) {
		return beneath.PathError("symlink", l, err)
	}
	if cur, rerr := beneath.Readlinkat(dirfd, name); rerr == nil && cur == src {
		return nil // the same link: a retried call
	} else if rerr == nil {
		return errdefs.Errorf(errdefs.ErrAlreadyExists, "%q already exists and is a link to %q, not to %q", l, cur, src)
	}
	return errdefs.Errorf(errdefs.ErrAlreadyExists, "%q already exists and is not a link", l)
}

// IsSymlink implements filesystem.Host: true for a symbolic link whose
// target exists and for a mount point; false for anything else; a missing
// path is errdefs.ErrNotFound. The target's existence is checked with one
// stat that follows the link wherever it points, even outside the working
// directories, since that is all upstream asks (a link to an SMB share or
// volume outside them is normal); nothing else ever follows it.
func (f *FS) IsSymlink(ctx context.Context, path string) (bool, error) {
	p, dirfd, name, err := f.parent(ctx, path)
	if err != nil {
		return false, err
	}
	defer beneath.Close(dirfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT); err != nil {
		return false, beneath.PathError("lstat", p, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		var tst unix.Stat_t
		err := unix.Fstatat(dirfd, name, &tst, unix.AT_NO_AUTOMOUNT)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP):
			return false, nil
		}
		return false, beneath.PathError("stat", p, err)
	case unix.S_IFDIR:
		mp, err := isMountPoint(dirfd, name)
		if err != nil {
			return false, beneath.PathError("statx", p, err)
		}
		return mp, nil
	}
	return false, nil
}

// clean is how every call begins: a cancelled call does nothing, and path
// is cleaned and checked to lie in a working directory (beneath.Roots.Clean).
func (f *FS) clean(ctx context.Context, path string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	p, _, err := f.roots.Clean(path)
	return p, err
}

// parent is clean followed by resolving p's parent directory beneath its
// working directory (beneath.Roots.Parent), for the calls that act on the
// entry at path itself rather than on what it leads to: it returns the
// cleaned path (for messages), the parent's descriptor, which the caller
// closes unless err is set, and the entry's name in it.
func (f *FS) parent(ctx context.Context, path string) (p string, dirfd int, name string, err error) {
	if p, err = f.clean(ctx, path); err != nil {
		return "", -1, "", err
	}
	dirfd, name, err = f.roots.Parent(p)
	return p, dirfd, name, err
}

// removeEntry removes name in dirfd (display is its path, for messages)
// the way Rmdir describes. g refuses a working directory itself (or the
// link a working directory's path ends in), at the top and at every level
// of a forced removal.
func removeEntry(ctx context.Context, g *beneath.Guard, dirfd int, name, display string, force bool) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT); err != nil {
		return beneath.PathError("lstat", display, err)
	}
	if err := g.CheckEntry(dirfd, name, &st, display); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		if err := unix.Unlinkat(dirfd, name, 0); err != nil {
			return beneath.PathError("unlink", display, err)
		}
		return nil
	}
	if err := unmountAll(dirfd, name, display); err != nil {
		return err
	}
	for pass := 0; ; pass++ {
		err := unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EBUSY):
			return errdefs.Errorf(errdefs.ErrUnavailable, "%q became a mount point again while being removed; retry", display)
		case !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST):
			return beneath.PathError("rmdir", display, err)
		case !force:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "directory %q is not empty", display)
		case pass == maxEmptyPasses:
			return errdefs.Errorf(errdefs.ErrUnavailable, "directory %q is still not empty after %d passes: something keeps creating files in it", display, pass)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := removeChildren(ctx, g, dirfd, name, display); err != nil {
			return err
		}
	}
}

// removeChildren empties the directory name in dirfd. It opens it with
// RESOLVE_NO_XDEV as well: removeEntry unmounted it, so if it is a mount
// point again (or was swapped for a link) something raced with the removal,
// and the walk stops rather than enter another filesystem.
func removeChildren(ctx context.Context, g *beneath.Guard, dirfd int, name, display string) error {
	fd, err := beneath.Openat2(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW,
		beneath.Resolve|unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_XDEV)
	switch {
	case errors.Is(err, unix.EXDEV):
		return errdefs.Errorf(errdefs.ErrUnavailable, "%q became a mount point while being removed; retry", display)
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR):
		return errdefs.Errorf(errdefs.ErrUnavailable, "%q was replaced while being removed; retry", display)
	case err != nil:
		return beneath.PathError("open", display, err)
	}
	return emptyDir(ctx, g, fd, display)
}

// emptyDir removes every entry in the directory open at fd (which it
// closes) with force.
func emptyDir(ctx context.Context, g *beneath.Guard, fd int, display string) error {
	d := os.NewFile(uintptr(fd), display)
	defer func() { _ = d.Close() }()
	for {
		names, rerr := d.Readdirnames(1024)
		for _, n := range names {
			if err := ctx.Err(); err != nil {
				return err
			}
			err := removeEntry(ctx, g, fd, n, display+"/"+n, true)
			if err != nil && !errors.Is(err, unix.ENOENT) { // gone meanwhile: fine
				return err
			}
		}
		if rerr == io.EOF || (rerr == nil && len(names) == 0) {
			return nil
		}
		if rerr != nil {
			return beneath.PathError("readdir", display, rerr)
		}
	}
}

// isMountPoint tells whether name in dirfd (not followed) is the root of a
// mount. statx's STATX_ATTR_MOUNT_ROOT (Linux 5.8) answers exactly, for
// bind mounts of the same filesystem too; older kernels fall back to
// mountedByTable.
func isMountPoint(dirfd int, name string) (bool, error) {
	var stx unix.Statx_t
	if err := unix.Statx(dirfd, name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_TYPE|unix.STATX_INO, &stx); err != nil {
		return false, err
	}
	if stx.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 {
		return stx.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0, nil
	}
	return mountedByTable(dirfd, name, unix.Mkdev(stx.Dev_major, stx.Dev_minor))
}

// mountedByTable tells whether name in dirfd, whose device is dev, is a
// mount point without statx's help: a device differing from its parent's
// means a mount of another filesystem; a bind mount of the same filesystem
// shows only in the mount table, looked up by the directory's real path
// (the kernel's name for dirfd, which is what mountinfo lists).
func mountedByTable(dirfd int, name string, dev uint64) (bool, error) {
	var pst unix.Stat_t
	if err := unix.Fstat(dirfd, &pst); err != nil {
		return false, err
	}
	if pst.Dev != dev {
		return true, nil
	}
	dir, err := os.Readlink(beneath.FdPath(dirfd))
	if err != nil {
		return false, fmt.Errorf("find the real path of %q's directory: %w", name, err)
	}
	mounts, err := mountinfo.Read()
	if err != nil {
		return false, err
	}
	return len(mountinfo.At(mounts, hostpath.POSIX.Join(dir, name))) > 0, nil
}

// unmountAll unmounts every mount stacked on name in dirfd.
func unmountAll(dirfd int, name, display string) error {
	for i := 0; i < maxStackedMounts; i++ {
		mp, err := isMountPoint(dirfd, name)
		if err != nil {
			return beneath.PathError("statx", display, err)
		}
		if !mp {
			return nil
		}
		if err := unmount(dirfd, name, display); err != nil {
			return err
		}
	}
	return errdefs.Errorf(errdefs.ErrUnavailable, "%q still has a mount after %d unmounts", display, maxStackedMounts)
}

// unmount unmounts the mount on name in dirfd. The path handed to
// umount2(2) is /proc/self/fd/<dirfd>/<name>: the directory is the one
// already resolved beneath the working directory (no path string is
// resolved again), and UMOUNT_NOFOLLOW refuses a name swapped for a link
// meanwhile. (Unmounting through a descriptor of the mount root itself
// would always fail with EBUSY, as that descriptor pins the mount.)
//
// A busy mount is not detached with MNT_DETACH: the filesystem would stay
// alive, invisible, for as long as its users hold it, and a driver that
// then detaches the disk believing the volume unmounted could lose data
// not yet written. The error is errdefs.ErrUnavailable, which a retry
// (kubelet retries unpublish and unstage) resolves once the mount is
// released.
func unmount(dirfd int, name, display string) error {
	err := unix.Unmount(beneath.FdPath(dirfd)+"/"+name, unix.UMOUNT_NOFOLLOW)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EBUSY):
		return errdefs.Errorf(errdefs.ErrUnavailable, "cannot unmount %q: it is busy (a process still uses the filesystem mounted there); it is not detached lazily, retry once it is released", display)
	case errors.Is(err, unix.EINVAL):
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "cannot unmount %q: not a mount point any more, or a mount locked by another mount namespace", display)
	}
	return beneath.PathError("umount", display, err)
}
