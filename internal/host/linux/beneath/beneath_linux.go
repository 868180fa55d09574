//go:build linux

package beneath

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

const (
	// maxLinks bounds the links one walk follows, as the kernel's own
	// limit (40) bounds a lookup.
	maxLinks = 40
	// DirMode is the mode MkdirAll creates directories with (before the
	// umask), as upstream's os.MkdirAll(path, 0755).
	DirMode = 0o755
)

// Resolve is the resolution every open relative to a working directory
// uses: never above the starting directory, never through /proc magic
// links. RESOLVE_NO_XDEV is deliberately absent: mount points inside a
// working directory are normal (every staged volume is one).
const Resolve = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS

// Probe checks that openat2(2) works, so a backend's constructor fails at
// start-up rather than every call failing later. Without openat2 (Linux <
// 5.6, or a seccomp profile that hides it) paths cannot be confined, and a
// backend that acts on caller-named paths must not act at all: the error
// wraps errdefs.ErrUnimplemented.
func Probe() error {
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /: %w", err)
	}
	defer Close(fd)
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: Resolve}
	sub, err := unix.Openat2(fd, ".", &how)
	if err != nil {
		// ENOSYS: kernel older than 5.6, or a seccomp filter that hides
		// the call; EPERM: a seccomp filter that refuses it.
		return errNoOpenat2(err)
	}
	Close(sub)
	return nil
}

func errNoOpenat2(err error) error {
	return fmt.Errorf("openat2(2) is not available (%w); it needs Linux 5.6 or later and a seccomp profile that allows it, and without it paths cannot be confined to the working directories, so the proxy refuses to act on them: %w", err, errdefs.ErrUnimplemented)
}

// Openat2 is unix.Openat2 with O_CLOEXEC, retrying the EAGAIN that
// RESOLVE_BENEATH returns when a rename or mount raced with a ".." lookup
// (and EINTR). ENOSYS is reported as Probe reports it.
func Openat2(dirfd int, name string, flags int, resolve uint64) (int, error) {
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

// FdPath names what the descriptor fd refers to, for system calls that
// take a path (mount(2), umount2(2), readlink(2)): the kernel resolves it
// to the very object fd holds, whatever happened to the path since it was
// opened.
func FdPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// Close closes a descriptor that was only read from or used as a
// directory handle (every descriptor this package returns is one): nothing
// is lost if closing it fails.
func Close(fd int) { _ = unix.Close(fd) }

// sysError is a failed system call on a path; see PathError.
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

// PathError wraps err, the failure of system call op on path: the result
// unwraps to both the errno (for callers that test unix.ENOENT) and the
// errdefs sentinel it means for a caller (ENOENT and ENOTDIR NotFound,
// EEXIST AlreadyExists, EACCES/EPERM/EXDEV PermissionDenied, EBUSY
// Unavailable, ...), while its text stays the familiar "op path: errno".
// Errors that already carry a sentinel (from a nested step) pass through
// unchanged.
func PathError(op, path string, err error) error {
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
	return -1, PathError("open working directory", root, err)
}

// step is one element of a walk; viaLink marks elements that come from a
// link's target, which Mkdir must not create (os.MkdirAll never creates
// the target of a dangling link either).
type step struct {
	name    string
	viaLink bool
}

// Open opens (O_PATH) what p names, following links that stay beneath the
// working directories (the last element too). A path that cannot be
// resolved without leaving them is errdefs.ErrPermissionDenied; a missing
// element is errdefs.ErrNotFound, reported only after every existing
// element before it resolved beneath, so ErrNotFound also means "no escape
// so far". The caller closes the descriptor.
func (r *Roots) Open(p string) (int, error) {
	c, root, err := r.Clean(p)
	if err != nil {
		return -1, err
	}
	return r.resolve(c, root, false)
}

// MkdirAll opens (O_PATH) the directory p names as Open does, creating
// missing directories on the way (mkdirat, DirMode) as os.MkdirAll does,
// but never the target of a dangling link (errdefs.ErrAlreadyExists, as is
// an element that exists and is not a directory). The caller closes the
// descriptor.
func (r *Roots) MkdirAll(p string) (int, error) {
	c, root, err := r.Clean(p)
	if err != nil {
		return -1, err
	}
	return r.resolve(c, root, true)
}

// Parent opens (O_PATH) the directory holding p's last element, resolved
// beneath p's working directory as Open resolves it, and returns it with
// that element's name, so the caller acts on the element itself with an
// *at call (or /proc/self/fd/<dirfd>/<name> with a NOFOLLOW flag) and never
// follows it. A missing parent is errdefs.ErrNotFound. The caller closes
// the descriptor.
func (r *Roots) Parent(p string) (dirfd int, name string, err error) {
	c, root, err := r.Clean(p)
	if err != nil {
		return -1, "", err
	}
	return r.locate(c, root)
}

// resolve opens (O_PATH) what the cleaned path p names, following links,
// beneath its working directory root. With create, missing directories
// are made on the way, as os.MkdirAll does, and every element must end up
// a directory. A path that cannot be resolved without leaving the working
// directories is errdefs.ErrPermissionDenied; a missing element is
// errdefs.ErrNotFound, reported only after every existing element before
// it resolved beneath, so ErrNotFound also means "no escape so far".
func (r *Roots) resolve(p, root string, create bool) (int, error) {
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
		fd, err := Openat2(rootFd, rel, unix.O_PATH, Resolve)
		switch {
		case err == nil:
			Close(rootFd)
			return fd, nil
		case !errors.Is(err, unix.EXDEV) && !errors.Is(err, unix.ELOOP):
			Close(rootFd)
			return -1, PathError("open", p, err)
		}
	}
	var queue []step
	for _, e := range split(rel) {
		queue = append(queue, step{name: e})
	}
	return r.walk(p, root, rootFd, queue, create)
}

// walk resolves queue element by element from rootFd (which it takes
// over). Each step opens one name relative to the previous directory with
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, so the kernel follows nothing; links
// are read and interpreted here (see the package documentation). ".." pops
// back to the directory the walk came from, which is where the kernel's
// ".." would lead too, and cannot pop above the working directory.
//
// The walk keeps the path text of every directory on its stack as well
// (".." pops it too), so when it reaches an inner working directory by
// that text and finds a link there (-working-dir=/k/plugins, with
// /k/plugins a link to a data disk), it opens the configured working
// directory as openRoot does (its path is configuration, not caller input)
// instead of judging the link as one a caller planted.
func (r *Roots) walk(p, root string, rootFd int, queue []step, create bool) (int, error) {
	stack := []int{rootFd}
	names := []string{root}
	defer func() {
		for _, d := range stack {
			Close(d)
		}
	}()
	links, mkdirs := 0, 0
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s.name == ".." {
			if len(stack) == 1 {
				return -1, EscapeError(p, root)
			}
			Close(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
			names = names[:len(names)-1]
			continue
		}
		here := hostpath.POSIX.Join(names[len(names)-1], s.name)
		top := stack[len(stack)-1]
		fd, err := Openat2(top, s.name, unix.O_PATH|unix.O_NOFOLLOW, Resolve|unix.RESOLVE_NO_SYMLINKS)
		if errors.Is(err, unix.ENOENT) && create {
			if s.viaLink {
				return -1, errdefs.Errorf(errdefs.ErrAlreadyExists, "%q passes through a symbolic link whose target (at %q) does not exist", p, s.name)
			}
			if mkdirs++; mkdirs > len(queue)+32 { // each element is made at most once, bar races
				return -1, errdefs.Errorf(errdefs.ErrUnavailable, "%q keeps changing while its directories are created", p)
			}
			if err := unix.Mkdirat(top, s.name, DirMode); err != nil && !errors.Is(err, unix.EEXIST) {
				return -1, PathError("mkdir", p, err)
			}
			queue = append([]step{s}, queue...) // open what is there now
			continue
		}
		if err != nil {
			return -1, PathError("open", p, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			Close(fd)
			return -1, PathError("stat", p, err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK && here != root && r.IsRoot(here) {
			Close(fd)
			if fd, err = openRoot(here); err != nil {
				return -1, err
			}
			stack, names = append(stack, fd), append(names, here)
			continue
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			stack, names = append(stack, fd), append(names, here)
		case unix.S_IFLNK:
			target, err := Readlinkat(fd, "")
			Close(fd)
			if err != nil {
				return -1, PathError("readlink", p, err)
			}
			if links++; links > maxLinks {
				return -1, PathError("open", p, unix.ELOOP)
			}
			elems := split(target)
			if strings.HasPrefix(target, "/") {
				r, rest, ok := r.rebaseLink(target)
				if !ok {
					return -1, EscapeError(p, root)
				}
				nfd, err := openRoot(r)
				if err != nil {
					return -1, err
				}
				for _, d := range stack {
					Close(d)
				}
				stack, root, names, elems = []int{nfd}, r, []string{r}, rest
			}
			next := make([]step, 0, len(elems)+len(queue))
			for _, n := range elems {
				next = append(next, step{name: n, viaLink: true})
			}
			queue = append(next, queue...)
		default:
			if len(queue) == 0 && !create {
				stack, names = append(stack, fd), append(names, here) // the final object may be a file
				continue
			}
			Close(fd)
			if create {
				return -1, errdefs.Errorf(errdefs.ErrAlreadyExists, "%q: %q exists and is not a directory", p, s.name)
			}
			return -1, PathError("open", p, unix.ENOTDIR)
		}
	}
	fd := stack[len(stack)-1]
	stack = stack[:len(stack)-1]
	return fd, nil
}

// rebaseLink is rebase for an absolute link's target, which may also be
// spelt with a working directory's resolved path (/data/kubelet/... when
// the working directory /var/lib/kubelet is a link to /data/kubelet, as
// the kernel names it and as a tool that resolves paths writes it): the
// configured path is tried first, then each working directory's path with
// its links resolved now; the outermost match wins, as in rebase. The
// rest is still resolved beneath the working directory opened as openRoot
// opens it.
func (r *Roots) rebaseLink(target string) (root string, rest []string, ok bool) {
	if root, rest, ok := r.rebase(target); ok {
		return root, rest, true
	}
	elems := split(target)
	best := -1
	for _, d := range r.dirs {
		res, err := filepath.EvalSymlinks(d)
		if err != nil || res == d {
			continue
		}
		re := split(res)
		if len(re) > len(elems) || (best >= 0 && len(re) >= best) {
			continue
		}
		match := true
		for j := range re {
			if re[j] != elems[j] {
				match = false
				break
			}
		}
		if match {
			best, root, rest, ok = len(re), d, elems[len(re):], true
		}
	}
	return root, rest, ok
}

// Readlinkat reads the target of the link name in dirfd; with name "" it
// reads the link an O_PATH|O_NOFOLLOW descriptor refers to.
func Readlinkat(dirfd int, name string) (string, error) {
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
func (r *Roots) locate(p, root string) (int, string, error) {
	name := hostpath.POSIX.Base(p)
	if r.IsRoot(p) {
		// A working directory itself: its path is trusted configuration.
		fd, err := unix.Open(hostpath.POSIX.Dir(p), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, "", PathError("open", hostpath.POSIX.Dir(p), err)
		}
		return fd, name, nil
	}
	dir := hostpath.POSIX.Dir(p)
	fd, err := r.resolve(dir, root, false)
	if err != nil {
		return -1, "", err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		Close(fd)
		return -1, "", PathError("stat", dir, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		Close(fd)
		return -1, "", PathError("open", dir, unix.ENOTDIR)
	}
	return fd, name, nil
}
