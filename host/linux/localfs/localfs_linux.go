//go:build linux

package localfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/host/linux/mountinfo"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

const (
	// maxLinks bounds the links one walk follows, as the kernel's own
	// limit (40) bounds a lookup.
	maxLinks = 40
	// maxStackedMounts bounds the mounts unmounted from one directory:
	// mounts can be stacked, but not without end.
	maxStackedMounts = 64
	// maxEmptyPasses bounds how often a forced removal re-reads a
	// directory that something keeps filling while it is being emptied.
	maxEmptyPasses = 3
	// dirMode is the mode Mkdir creates directories with (before the
	// umask), as upstream's os.MkdirAll(path, 0755).
	dirMode = 0o755
)

// beneath is the resolution every open relative to a working directory
// uses: never above the starting directory, never through /proc magic
// links. RESOLVE_NO_XDEV is deliberately absent: mount points inside a
// working directory are normal (every staged volume is one).
const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS

// probe checks that openat2(2) works, so New fails at start-up rather than
// every call failing later.
func probe() error {
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("localfs: open /: %w", err)
	}
	defer closeFd(fd)
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: beneath}
	sub, err := unix.Openat2(fd, ".", &how)
	if err != nil {
		// ENOSYS: kernel older than 5.6, or a seccomp filter that hides
		// the call; EPERM: a seccomp filter that refuses it.
		return errNoOpenat2(err)
	}
	closeFd(sub)
	return nil
}

func errNoOpenat2(err error) error {
	return fmt.Errorf("localfs: openat2(2) is not available (%w); it needs Linux 5.6 or later and a seccomp profile that allows it, and without it paths cannot be confined to the working directories, so the filesystem group refuses to run: %w", err, errdefs.ErrUnimplemented)
}

// openat2 is unix.Openat2 with O_CLOEXEC, retrying the EAGAIN that
// RESOLVE_BENEATH returns when a rename or mount raced with a ".." lookup.
func openat2(dirfd int, name string, flags int, resolve uint64) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: resolve}
	for i := 0; ; i++ {
		fd, err := unix.Openat2(dirfd, name, &how)
		if (errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR)) && i < 16 {
			continue
		}
		if errors.Is(err, unix.ENOSYS) {
			return -1, errNoOpenat2(err)
		}
		return fd, err
	}
}

// closeFd closes a descriptor that was only read from or used as a
// directory handle: nothing is lost if closing it fails.
func closeFd(fd int) { _ = unix.Close(fd) }

// sysError is a failed system call on a path. It unwraps to both the errno
// (for callers that test unix.ENOENT) and the errdefs sentinel it means
// (for the gRPC code), while its text stays the familiar "op path: errno".
type sysError struct {
	op, path string
	errno    error
	kind     error
}

func (e *sysError) Error() string {
	return e.op + " " + strconv.Quote(e.path) + ": " + e.errno.Error()
}

func (e *sysError) Unwrap() []error {
	if e.kind == nil {
		return []error{e.errno}
	}
	return []error{e.errno, e.kind}
}

// sysErr wraps err from op on path. Errors that already carry a sentinel
// (from a nested step) pass through unchanged.
func sysErr(op, path string, err error) error {
	var se *sysError
	if errors.As(err, &se) || isKind(err) {
		return err
	}
	return &sysError{op: op, path: path, errno: err, kind: kindOf(err)}
}

func isKind(err error) bool {
	for _, k := range []error{errdefs.ErrNotFound, errdefs.ErrAlreadyExists, errdefs.ErrFailedPrecondition,
		errdefs.ErrPermissionDenied, errdefs.ErrUnavailable, errdefs.ErrUnimplemented, errdefs.ErrInvalidArgument} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// kindOf maps an errno to the errdefs sentinel it means for a caller.
func kindOf(err error) error {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return nil
	}
	switch errno {
	case unix.ENOENT, unix.ENOTDIR:
		return errdefs.ErrNotFound
	case unix.EEXIST:
		return errdefs.ErrAlreadyExists
	case unix.ENOTEMPTY, unix.EROFS, unix.ELOOP:
		return errdefs.ErrFailedPrecondition
	case unix.EACCES, unix.EPERM, unix.EXDEV:
		return errdefs.ErrPermissionDenied
	case unix.EBUSY:
		return errdefs.ErrUnavailable
	case unix.ENAMETOOLONG:
		return errdefs.ErrInvalidArgument
	case unix.ENOSYS:
		return errdefs.ErrUnimplemented
	}
	return nil
}

// openRoot opens a working directory. Its own path is configuration, not
// caller input, so it is resolved normally: /var/lib/kubelet is often a
// link to a data disk.
func openRoot(root string) (int, error) {
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	switch {
	case err == nil:
		return fd, nil
	case errors.Is(err, unix.ENOENT):
		return -1, errdefs.Errorf(errdefs.ErrNotFound, "working directory %q does not exist (the proxy never creates its working directories)", root)
	case errors.Is(err, unix.ENOTDIR):
		return -1, errdefs.Errorf(errdefs.ErrFailedPrecondition, "working directory %q is not a directory", root)
	}
	return -1, sysErr("open working directory", root, err)
}

// step is one element of a walk; viaLink marks elements that come from a
// link's target, which Mkdir must not create (os.MkdirAll never creates
// the target of a dangling link either).
type step struct {
	name    string
	viaLink bool
}

// resolve opens (O_PATH) what the cleaned path p names, following links,
// beneath its working directory root. With create, missing directories
// are made on the way, as os.MkdirAll does, and every element must end up
// a directory. A path that cannot be resolved without leaving the working
// directories is errdefs.ErrPermissionDenied; a missing element is
// errdefs.ErrNotFound, reported only after every existing element before
// it resolved beneath, so ErrNotFound also means "no escape so far".
func (f *FS) resolve(p, root string, create bool) (int, error) {
	rootFd, err := openRoot(root)
	if err != nil {
		return -1, err
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
	if rel == "" {
		return rootFd, nil
	}
	if !create {
		// The common case: one syscall, and the kernel enforces the
		// confinement. It refuses absolute links even when they point
		// back inside, so EXDEV (and ELOOP, which the walk reports with
		// the path) fall through to the walk, which can tell the two
		// apart.
		fd, err := openat2(rootFd, rel, unix.O_PATH, beneath)
		switch {
		case err == nil:
			closeFd(rootFd)
			return fd, nil
		case !errors.Is(err, unix.EXDEV) && !errors.Is(err, unix.ELOOP):
			closeFd(rootFd)
			return -1, sysErr("open", p, err)
		}
	}
	var queue []step
	for _, e := range split(rel) {
		queue = append(queue, step{name: e})
	}
	return f.walk(p, root, rootFd, queue, create)
}

// walk resolves queue element by element from rootFd (which it takes
// over). Each step opens one name relative to the previous directory with
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, so the kernel follows nothing; links
// are read and interpreted here (see the package documentation). ".." pops
// back to the directory the walk came from, which is where the kernel's
// ".." would lead too, and cannot pop above the working directory.
func (f *FS) walk(p, root string, rootFd int, queue []step, create bool) (int, error) {
	stack := []int{rootFd}
	defer func() {
		for _, d := range stack {
			closeFd(d)
		}
	}()
	links, mkdirs := 0, 0
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s.name == ".." {
			if len(stack) == 1 {
				return -1, errEscape(p, root)
			}
			closeFd(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
			continue
		}
		top := stack[len(stack)-1]
		fd, err := openat2(top, s.name, unix.O_PATH|unix.O_NOFOLLOW, beneath|unix.RESOLVE_NO_SYMLINKS)
		if errors.Is(err, unix.ENOENT) && create {
			if s.viaLink {
				return -1, errdefs.Errorf(errdefs.ErrAlreadyExists, "%q passes through a symbolic link whose target (at %q) does not exist", p, s.name)
			}
			if mkdirs++; mkdirs > len(queue)+32 { // each element is made at most once, bar races
				return -1, errdefs.Errorf(errdefs.ErrUnavailable, "%q keeps changing while its directories are created", p)
			}
			if err := unix.Mkdirat(top, s.name, dirMode); err != nil && !errors.Is(err, unix.EEXIST) {
				return -1, sysErr("mkdir", p, err)
			}
			queue = append([]step{s}, queue...) // open what is there now
			continue
		}
		if err != nil {
			return -1, sysErr("open", p, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			closeFd(fd)
			return -1, sysErr("stat", p, err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			stack = append(stack, fd)
		case unix.S_IFLNK:
			target, err := readlinkat(fd, "")
			closeFd(fd)
			if err != nil {
				return -1, sysErr("readlink", p, err)
			}
			if links++; links > maxLinks {
				return -1, sysErr("open", p, unix.ELOOP)
			}
			names := split(target)
			if strings.HasPrefix(target, "/") {
				r, rest, ok := f.rebase(target)
				if !ok {
					return -1, errEscape(p, root)
				}
				nfd, err := openRoot(r)
				if err != nil {
					return -1, err
				}
				for _, d := range stack {
					closeFd(d)
				}
				stack, root, names = []int{nfd}, r, rest
			}
			next := make([]step, 0, len(names)+len(queue))
			for _, n := range names {
				next = append(next, step{name: n, viaLink: true})
			}
			queue = append(next, queue...)
		default:
			if len(queue) == 0 && !create {
				stack = append(stack, fd) // the final object may be a file
				continue
			}
			closeFd(fd)
			if create {
				return -1, errdefs.Errorf(errdefs.ErrAlreadyExists, "%q: %q exists and is not a directory", p, s.name)
			}
			return -1, sysErr("open", p, unix.ENOTDIR)
		}
	}
	fd := stack[len(stack)-1]
	stack = stack[:len(stack)-1]
	return fd, nil
}

// readlinkat reads the target of the link name in dirfd; with name "" it
// reads the link an O_PATH|O_NOFOLLOW descriptor refers to.
func readlinkat(dirfd int, name string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dirfd, name, buf)
	if err != nil {
		return "", err
	}
	if n == len(buf) {
		return "", unix.ENAMETOOLONG
	}
	return string(buf[:n]), nil
}

// locate opens (O_PATH) the directory holding p's last element, resolved
// beneath root, and returns it with that element's name, so the caller
// acts on the element itself with an *at call and never follows it.
func (f *FS) locate(p, root string) (int, string, error) {
	name := hostpath.POSIX.Base(p)
	if f.isRoot(p) {
		// A working directory itself: its path is trusted configuration.
		fd, err := unix.Open(hostpath.POSIX.Dir(p), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, "", sysErr("open", hostpath.POSIX.Dir(p), err)
		}
		return fd, name, nil
	}
	dir := hostpath.POSIX.Dir(p)
	fd, err := f.resolve(dir, root, false)
	if err != nil {
		return -1, "", err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		closeFd(fd)
		return -1, "", sysErr("stat", dir, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		closeFd(fd)
		return -1, "", sysErr("open", dir, unix.ENOTDIR)
	}
	return fd, name, nil
}

// PathExists implements filesystem.Host with lstat semantics: a dangling
// link exists. A path whose parent is missing or not a directory does not
// exist; one whose parent resolves outside the working directories is
// errdefs.ErrPermissionDenied rather than an answer about somewhere else.
func (f *FS) PathExists(ctx context.Context, path string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	p, root, err := f.cleanIn(path)
	if err != nil {
		return false, err
	}
	dirfd, name, err := f.locate(p, root)
	if errors.Is(err, errdefs.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer closeFd(dirfd)
	var st unix.Stat_t
	err = unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR):
		return false, nil
	}
	return false, sysErr("lstat", p, err)
}

// Mkdir implements filesystem.Host with os.MkdirAll semantics, but every
// element is created (mkdirat) and opened beneath the working directory:
// links on the way are followed only where they stay inside the working
// directories, and never to create a dangling link's target. An existing
// directory (or link to one) is success; an existing non-directory is
// errdefs.ErrAlreadyExists. A missing working directory is
// errdefs.ErrNotFound: the proxy does not create its working directories.
func (f *FS) Mkdir(ctx context.Context, path string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, root, err := f.cleanIn(path)
	if err != nil {
		return err
	}
	fd, err := f.resolve(p, root, true)
	if err != nil {
		return err
	}
	closeFd(fd)
	return nil
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
// A working directory itself is errdefs.ErrPermissionDenied.
func (f *FS) Rmdir(ctx context.Context, path string, force bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, root, err := f.cleanIn(path)
	if err != nil {
		return err
	}
	if f.isRoot(p) {
		return errdefs.Errorf(errdefs.ErrPermissionDenied, "%q is a working directory itself and cannot be removed", p)
	}
	dirfd, name, err := f.locate(p, root)
	if err != nil {
		return err
	}
	defer closeFd(dirfd)
	return removeEntry(ctx, dirfd, name, p, force)
}

// RmdirContents implements filesystem.Host: path is resolved like any
// path (a link to a directory inside the working directories is followed,
// and a mount point is entered, as opening the directory would) and must be
// a directory; every entry in it is then removed as Rmdir with force
// removes it. So emptying a mount point deletes the files of the mounted
// filesystem (that is what was asked), but a mount point or link inside it
// is only unmounted or unlinked.
func (f *FS) RmdirContents(ctx context.Context, path string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, root, err := f.cleanIn(path)
	if err != nil {
		return err
	}
	if f.isRoot(p) {
		return errdefs.Errorf(errdefs.ErrPermissionDenied, "%q is a working directory itself and cannot be emptied", p)
	}
	pfd, err := f.resolve(p, root, false)
	if err != nil {
		return err
	}
	defer closeFd(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return sysErr("stat", p, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q is not a directory", p)
	}
	// Reading a directory needs a real descriptor; "." beneath the O_PATH
	// one is the same directory, with nothing to resolve.
	dfd, err := unix.Openat(pfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return sysErr("open", p, err)
	}
	return emptyDir(ctx, dfd, p)
}

// CreateSymlink implements filesystem.Host: a link at link whose target is
// the absolute path source (upstream links to the absolute path too). The
// link's parent is resolved beneath its working directory and must exist
// (errdefs.ErrNotFound); source must lie in a working directory and must
// not resolve outside the working directories (errdefs.ErrPermissionDenied),
// but it need not exist, as upstream allows dangling links. An existing
// link to the same source is success; anything else at link is
// errdefs.ErrAlreadyExists.
func (f *FS) CreateSymlink(ctx context.Context, source, link string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	src, srcRoot, err := f.cleanIn(source)
	if err != nil {
		return err
	}
	l, root, err := f.cleanIn(link)
	if err != nil {
		return err
	}
	if f.isRoot(l) {
		return errdefs.Errorf(errdefs.ErrPermissionDenied, "%q is a working directory itself and cannot become a link", l)
	}
	// Resolve the source beneath its working directory. ErrNotFound is
	// fine: it is reported only after every existing element resolved
	// beneath, so a dangling source cannot hide an escape.
	sfd, err := f.resolve(src, srcRoot, false)
	switch {
	case err == nil:
		closeFd(sfd)
	case errors.Is(err, errdefs.ErrNotFound):
	default:
		return fmt.Errorf("source %q: %w", src, err)
	}
	dirfd, name, err := f.locate(l, root)
	if errors.Is(err, errdefs.ErrNotFound) {
		return errdefs.Errorf(errdefs.ErrNotFound, "the directory that would hold the link %q does not exist (%v)", l, err)
	}
	if err != nil {
		return err
	}
	defer closeFd(dirfd)
	err = unix.Symlinkat(src, dirfd, name)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EEXIST) {
		return sysErr("symlink", l, err)
	}
	if cur, rerr := readlinkat(dirfd, name); rerr == nil && cur == src {
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
	if err := ctx.Err(); err != nil {
		return false, err
	}
	p, root, err := f.cleanIn(path)
	if err != nil {
		return false, err
	}
	dirfd, name, err := f.locate(p, root)
	if err != nil {
		return false, err
	}
	defer closeFd(dirfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT); err != nil {
		return false, sysErr("lstat", p, err)
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
		return false, sysErr("stat", p, err)
	case unix.S_IFDIR:
		mp, err := isMountPoint(dirfd, name)
		if err != nil {
			return false, sysErr("statx", p, err)
		}
		return mp, nil
	}
	return false, nil
}

// removeEntry removes name in dirfd (display is its path, for messages)
// the way Rmdir describes.
func removeEntry(ctx context.Context, dirfd int, name, display string, force bool) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT); err != nil {
		return sysErr("lstat", display, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		if err := unix.Unlinkat(dirfd, name, 0); err != nil {
			return sysErr("unlink", display, err)
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
			return sysErr("rmdir", display, err)
		case !force:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "directory %q is not empty", display)
		case pass == maxEmptyPasses:
			return errdefs.Errorf(errdefs.ErrUnavailable, "directory %q is still not empty after %d passes: something keeps creating files in it", display, pass)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := removeChildren(ctx, dirfd, name, display); err != nil {
			return err
		}
	}
}

// removeChildren empties the directory name in dirfd. It opens it with
// RESOLVE_NO_XDEV as well: removeEntry unmounted it, so if it is a mount
// point again (or was swapped for a link) something raced with the removal,
// and the walk stops rather than enter another filesystem.
func removeChildren(ctx context.Context, dirfd int, name, display string) error {
	fd, err := openat2(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW,
		beneath|unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_XDEV)
	switch {
	case errors.Is(err, unix.EXDEV):
		return errdefs.Errorf(errdefs.ErrUnavailable, "%q became a mount point while being removed; retry", display)
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR):
		return errdefs.Errorf(errdefs.ErrUnavailable, "%q was replaced while being removed; retry", display)
	case err != nil:
		return sysErr("open", display, err)
	}
	return emptyDir(ctx, fd, display)
}

// emptyDir removes every entry in the directory open at fd (which it
// closes) with force.
func emptyDir(ctx context.Context, fd int, display string) error {
	d := os.NewFile(uintptr(fd), display)
	defer func() { _ = d.Close() }()
	for {
		names, rerr := d.Readdirnames(1024)
		for _, n := range names {
			if err := ctx.Err(); err != nil {
				return err
			}
			err := removeEntry(ctx, fd, n, display+"/"+n, true)
			if err != nil && !errors.Is(err, unix.ENOENT) { // gone meanwhile: fine
				return err
			}
		}
		if rerr == io.EOF || (rerr == nil && len(names) == 0) {
			return nil
		}
		if rerr != nil {
			return sysErr("readdir", display, rerr)
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
	dir, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(dirfd))
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
			return sysErr("statx", display, err)
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
	err := unix.Unmount("/proc/self/fd/"+strconv.Itoa(dirfd)+"/"+name, unix.UMOUNT_NOFOLLOW)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EBUSY):
		return errdefs.Errorf(errdefs.ErrUnavailable, "cannot unmount %q: it is busy (a process still uses the filesystem mounted there); it is not detached lazily, retry once it is released", display)
	case errors.Is(err, unix.EINVAL):
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "cannot unmount %q: not a mount point any more, or a mount locked by another mount namespace", display)
	}
	return sysErr("umount", display, err)
}
