//go:build linux

package blockdev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/beneath"
)

// The volume methods that take a caller's path resolve it beneath its
// working directory (package beneath), exactly as the filesystem group
// does: links that stay inside the working directories are followed in
// every parent directory, a link that leads out is
// errdefs.ErrPermissionDenied, and the mount or unmount then acts on the
// descriptor the resolution opened (/proc/self/fd/N), so a link swapped in
// after the check is never followed. The last element of a MountVolume or
// UnmountVolume target is never followed: a mount point is the directory
// at the path itself, as a filesystem Rmdir removes the link itself.

// mountTarget is a mount target opened beneath its working directory.
type mountTarget struct {
	target  string // as the caller named it, for messages
	dirfd   int    // the directory holding it (O_PATH)
	name    string // its name in dirfd
	fd      int    // the target directory itself (O_PATH), -1 when not open
	created bool   // whether openMountTarget made the directory
}

// close releases the descriptors.
func (t *mountTarget) close() {
	if t.fd >= 0 {
		beneath.Close(t.fd)
		t.fd = -1
	}
	beneath.Close(t.dirfd)
}

// undo removes the directory openMountTarget made, if it made one, through
// the parent's descriptor. The mount error that calls it is what matters,
// so a failed removal is not reported.
func (t *mountTarget) undo() {
	if t.created {
		_ = unix.Unlinkat(t.dirfd, t.name, unix.AT_REMOVEDIR)
	}
}

// refuseLink explains why a target that is itself a symbolic link is
// refused for verb ("mount", "unmount"): errdefs.ErrPermissionDenied when
// the link leads out of the working directories, so the caller learns it
// tried to reach outside, and errdefs.ErrFailedPrecondition when it stays
// inside (a mount point is the directory at the path, never a link to it).
func (b *Backend) refuseLink(verb, target string) error {
	fd, err := b.roots.Open(target)
	if err == nil {
		beneath.Close(fd)
	}
	if errors.Is(err, errdefs.ErrPermissionDenied) {
		return fmt.Errorf("refusing to %s at %s: %w", verb, target, err)
	}
	return errdefs.Errorf(errdefs.ErrFailedPrecondition, "target %s is a symlink; refusing to %s through it (a mount point is the directory at the path itself)", target, verb)
}

// openParent opens the directory holding target beneath its working
// directory for verb, mapping the resolution's errors to messages about
// the target. A target that is a working directory itself is
// errdefs.ErrPermissionDenied.
func (b *Backend) openParent(verb, target string) (int, string, error) {
	// Never mount on or unmount a working directory itself, however the
	// target is spelt (a link to the directory holding an inner working
	// directory): ParentBelow compares by device and inode.
	dirfd, name, err := b.roots.ParentBelow(target)
	switch {
	case err == nil:
		return dirfd, name, nil
	case errors.Is(err, errdefs.ErrPermissionDenied):
		return -1, "", fmt.Errorf("refusing to %s at %s: %w", verb, target, err)
	case errors.Is(err, unix.ENOTDIR):
		return -1, "", errdefs.Errorf(errdefs.ErrFailedPrecondition, "the parent %s of target %s is not a directory", path.Dir(target), target)
	case errors.Is(err, errdefs.ErrNotFound):
		return -1, "", errdefs.Errorf(errdefs.ErrNotFound, "the parent directory %s of target %s does not exist; create it first (filesystem Mkdir): %v", path.Dir(target), target, err)
	}
	return -1, "", err
}

// openMountTarget opens target for a mount: its parent beneath its working
// directory, then the target itself without following it. A missing
// target directory is created (0750); a target that is a symlink, not a
// directory, or a non-empty directory is refused.
func (b *Backend) openMountTarget(target string) (*mountTarget, error) {
	dirfd, name, err := b.openParent("mount", target)
	if err != nil {
		return nil, err
	}
	t := &mountTarget{target: target, dirfd: dirfd, name: name, fd: -1}
	ok := false
	defer func() {
		if !ok {
			t.undo()
			t.close()
		}
	}()
	var st unix.Stat_t
	err = unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT)
	switch {
	case errors.Is(err, unix.ENOENT):
		if err := unix.Mkdirat(dirfd, name, 0o750); err != nil {
			return nil, fmt.Errorf("create target %s: %w", target, beneath.PathError("mkdir", target, err))
		}
		t.created = true
	case err != nil:
		return nil, beneath.PathError("lstat", target, err)
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return nil, b.refuseLink("mount", target)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return nil, errdefs.Errorf(errdefs.ErrFailedPrecondition, "target %s exists and is not a directory", target)
	}
	// The name is opened with nothing left to resolve but itself, and
	// without following it: if it was swapped for a link or a file since
	// the check above, this fails instead of reaching elsewhere.
	t.fd, err = beneath.Openat2(dirfd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW, beneath.Resolve|unix.RESOLVE_NO_SYMLINKS)
	switch {
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ENOENT):
		return nil, errdefs.Errorf(errdefs.ErrUnavailable, "target %s changed while it was being prepared for the mount; retry", target)
	case err != nil:
		return nil, beneath.PathError("open", target, err)
	}
	// Reading the directory needs a real descriptor; "." beneath the
	// O_PATH one is the same directory, with nothing to resolve.
	dfd, err := unix.Openat(t.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, beneath.PathError("open", target, err)
	}
	d := os.NewFile(uintptr(dfd), target)
	_, err = d.Readdirnames(1)
	_ = d.Close() // read only: a close error changes nothing
	if !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, fmt.Errorf("read target %s: %w", target, err)
		}
		return nil, errdefs.Errorf(errdefs.ErrFailedPrecondition, "target %s is not empty; refusing to hide its contents under a mount", target)
	}
	ok = true
	return t, nil
}

// MountVolume implements volume.Host with mount(2) and the filesystem type
// the probe finds (XFS with nouuid, so a clone of a mounted volume mounts
// too). An ext2/3/4 volume not mounted anywhere yet is checked first with
// e2fsck -p, as mount-utils' FormatAndMount runs fsck -a (see checkExt). The target is resolved beneath its working directory (a link in
// it that leads out is errdefs.ErrPermissionDenied) and the mount is made
// on the resolved descriptor. The target's parent must exist; a missing
// target directory is created (0750) and removed again if the mount fails.
// A target that is a symlink, not a directory, or a non-empty directory is
// refused: mounting there would follow the link or hide data.
func (b *Backend) MountVolume(ctx context.Context, id, target string) error {
	v, dev, info, err := b.writableProbed(ctx, id, "mount a volume of")
	if err != nil {
		return err
	}
	fstype := info.MountType()
	switch {
	case info.Type == "":
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "volume %s is not formatted; FormatVolume it first", id)
	case fstype == "":
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "volume %s holds %s, which is not a filesystem the proxy mounts", id, info.Type)
	}
	if fstype == "ext4" && len(v.Mounts(b.cfg.DevRoot)) == 0 {
		if err := b.checkExt(ctx, dev); err != nil {
			return fmt.Errorf("mount volume %s: %w", id, err)
		}
	}
	t, err := b.openMountTarget(target)
	if err != nil {
		return err
	}
	defer t.close()
	data := ""
	if fstype == "xfs" {
		data = "nouuid"
	}
	if err := b.k.mount(dev, beneath.FdPath(t.fd), fstype, data); err != nil {
		t.undo()
		return mountError(err, dev, target, fstype)
	}
	return nil
}

// UnmountVolume implements volume.Host: syncfs, then umount2(2) of the
// target with UMOUNT_NOFOLLOW, both through the target's parent directory
// resolved beneath its working directory (a link in it that leads out is
// errdefs.ErrPermissionDenied and nothing is unmounted). Before either,
// the filesystem at the target directory, opened once, must be the
// volume's (errdefs.ErrFailedPrecondition otherwise), so a path swapped
// after the Service's check cannot redirect the unmount to another mount;
// what remains is the moment between that check and umount2, which takes
// the name again (see docs/security.md). A target that is
// itself a symlink is refused the same way MountVolume refuses it. The
// target directory stays, as Windows leaves the folder of a deleted mount
// point; drivers remove it with filesystem Rmdir.
func (b *Backend) UnmountVolume(ctx context.Context, id, target string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dirfd, name, err := b.openParent("unmount", target)
	if err != nil {
		return err
	}
	defer beneath.Close(dirfd)
	var st unix.Stat_t
	err = unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil // nothing there, so nothing mounted: someone unmounted and removed it meanwhile
	case err != nil:
		return beneath.PathError("lstat", target, err)
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return b.refuseLink("unmount", target)
	}
	fd, err := beneath.Openat2(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, beneath.Resolve|unix.RESOLVE_NO_SYMLINKS)
	if err != nil {
		return fmt.Errorf("flush volume %s before unmounting it: %w", id, beneath.PathError("open", target, err))
	}
	// The Service checked which volume is mounted at target (VolumeAt),
	// but that resolved the path on its own, following a last link too;
	// check on the descriptor about to be flushed and unmounted that the
	// filesystem there is the volume's, so a link or directory swapped in
	// since cannot make this unmount another mount.
	if err := b.checkMountedAt(ctx, id, fd, target); err != nil {
		beneath.Close(fd)
		return err
	}
	err = b.k.syncFS(beneath.FdPath(fd))
	beneath.Close(fd) // before the unmount: an open descriptor keeps the mount busy
	if err != nil {
		return fmt.Errorf("flush volume %s before unmounting it: %w", id, err)
	}
	if err := b.unmountRetryingBusy(ctx, beneath.FdPath(dirfd)+"/"+name); err != nil {
		switch {
		case errors.Is(err, unix.EINVAL):
			return nil // not a mount point any more: someone unmounted it meanwhile
		case errors.Is(err, unix.EBUSY):
			return errdefs.Errorf(errdefs.ErrUnavailable, "unmount %s: it is busy (open files, or mounts below it)", target)
		}
		return fmt.Errorf("unmount %s: %w", target, err)
	}
	return nil
}

// unmountRetryingBusy unmounts path, trying again for about a second while
// the kernel answers EBUSY. A freshly grown or flushed filesystem can be
// busy for a moment with nothing of the caller's open in it: on loop disks
// about one unmount in twenty-five right after resize2fs or xfs_growfs
// returned failed so. Longer than that it is really in use, and the caller
// gets EBUSY (the kubelet retries the unstage).
func (b *Backend) unmountRetryingBusy(ctx context.Context, path string) error {
	for try := 1; ; try++ {
		err := b.k.unmount(path)
		if !errors.Is(err, unix.EBUSY) || try == unmountBusyTries {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(unmountBusyDelay):
		}
	}
}

// checkMountedAt checks that the directory open at fd (target, for
// messages) holds volume id's filesystem: errdefs.ErrFailedPrecondition,
// and nothing changed, when it holds another.
func (b *Backend) checkMountedAt(ctx context.Context, id string, fd int, target string) error {
	dev, err := b.k.deviceOf(beneath.FdPath(fd))
	if err != nil {
		return fmt.Errorf("unmount %s: find the filesystem there: %w", target, err)
	}
	s, err := b.scan(ctx, scanTables)
	if err != nil {
		return fmt.Errorf("unmount %s: %w", target, err)
	}
	// The device mounted there decides: with a clone attached, the ID is
	// on two disks, and the one mounted at target is the one meant.
	if _, v := s.ByDevice(dev, "", b.cfg.DevRoot); v != nil && strings.EqualFold(v.ID, id) {
		return nil
	}
	if _, err := s.Volume(id); errors.Is(err, errdefs.ErrNotFound) {
		return fmt.Errorf("unmount %s: %w", target, err)
	}
	return errdefs.Errorf(errdefs.ErrFailedPrecondition, "refusing to unmount %s: the filesystem there (device %s) is not volume %s's; nothing was unmounted (did the path change since it was checked?)", target, dev, id)
}

// lookupPath resolves p beneath its working directory for a question
// about it (see resolvedPath), following links that stay inside; a link
// that leads out is errdefs.ErrPermissionDenied naming p, a missing
// element errdefs.ErrNotFound.
func (b *Backend) lookupPath(what, p string) (*resolvedPath, error) {
	fd, err := b.roots.Open(p)
	if errors.Is(err, errdefs.ErrPermissionDenied) {
		return nil, fmt.Errorf("refusing to look up the volume %s %s: %w", what, p, err)
	}
	if err != nil {
		return nil, err
	}
	// The kernel's name for the descriptor is the resolved path, as the
	// mount table records it.
	resolved, err := os.Readlink(beneath.FdPath(fd))
	if err != nil {
		beneath.Close(fd)
		return nil, fmt.Errorf("find where %s resolves: %w", p, err)
	}
	return &resolvedPath{resolved: resolved, handle: beneath.FdPath(fd), release: func() { beneath.Close(fd) }}, nil
}

// checkExt runs e2fsck -p (preen: repair what is safe without asking;
// what fsck -a runs for ext2/3/4) on an unmounted ext volume before it is
// mounted, as k8s.io/mount-utils' FormatAndMount does before every mount
// of a formatted volume: a journal is replayed and small inconsistencies
// (left by a node that crashed) are repaired before the kernel sees them.
// e2fsck -p itself checks nothing when the superblock records a clean
// filesystem; the same reading is done here first (extCheckReason), so a
// clean volume (every freshly formatted one) mounts without spawning
// e2fsck, 7 ms a stage (docs/benchmarks.md). A superblock that cannot be
// read counts as a reason to check.
// Like mount-utils, errors e2fsck could not correct (exit status 4, here
// also with bits 1-2 set) stop the mount; a missing e2fsck, an
// operational error (8 and up) or a timeout leave the decision to the
// kernel's mount. XFS is not checked: mount-utils' fsck -a runs fsck.xfs,
// which does nothing, because XFS replays its log when mounted.
func (b *Backend) checkExt(ctx context.Context, dev string) error {
	if b.extSuperblockReason(dev) == "" {
		return nil
	}
	_, err := b.exec.Run(ctx, []string{"e2fsck", "-p", dev})
	var ee *ExitError
	if errors.As(err, &ee) && ee.Err == nil && ee.Code&4 != 0 && ee.Code < 8 {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "e2fsck found errors it could not correct on %s (exit status %d: %s); repair it with e2fsck -f before mounting", dev, ee.Code, ee.Stderr)
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return nil
}

// extSuperblockReason reads dev's ext superblock past the page cache (the
// kernel's openDevice, as the probe reads) and returns extCheckReason's
// answer, or why it could not be read.
func (b *Backend) extSuperblockReason(dev string) string {
	f, err := b.k.openDevice(dev)
	if err != nil {
		return fmt.Sprintf("cannot open %s: %v", dev, err)
	}
	defer f.Close() //nolint:errcheck // read-only: a close error changes nothing
	// Whole aligned blocks, for O_DIRECT.
	head := make([]byte, 4096)
	if _, err := f.ReadAt(head, 0); err != nil {
		return fmt.Sprintf("cannot read %s's superblock: %v", dev, err)
	}
	return extCheckReason(head[1024:2048], time.Now())
}
