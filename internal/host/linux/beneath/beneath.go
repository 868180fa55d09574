// Package beneath opens paths confined to a set of working directories,
// even when the trees below them hold symbolic links that point elsewhere.
// It is what the Linux backends that act on caller-named paths (the
// filesystem, volume and SMB groups) share, so all of them draw the line
// between "inside" and "outside" in the same place.
//
// The group Services check request paths lexically (hostpath.Policy), but a
// lexical check cannot see links: /var/lib/kubelet/pods/x/link/etc may name
// /etc/... if link points at /. Whoever can write below a working directory
// (a pod with a hostPath or a volume, a compromised driver) can plant such a
// link, so a backend must never hand a caller's path string to a syscall
// that follows links. Roots instead opens paths with openat2(2) and
// RESOLVE_BENEATH relative to the working directory, so the kernel, not a
// string check, guarantees the object opened lies beneath it; the backend
// then acts on the descriptor (an *at syscall, or /proc/self/fd/N for
// mount(2) and umount2(2)).
//
// RESOLVE_BENEATH refuses every absolute link, even one that points back
// inside a working directory, and drivers make exactly such links
// (upstream drivers link /var/lib/kubelet/pods/.../mount to the absolute
// staging path). When the kernel refuses a path, Roots therefore walks it
// one element at a time, each step again an openat2 with
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS relative to the previous directory's
// file descriptor, and interprets links itself:
//
//   - a relative link continues from the link's directory and may not climb
//     above the working directory with "..";
//   - an absolute link continues from the working directory that lexically
//     contains its target;
//   - a link to anywhere else is refused with errdefs.ErrPermissionDenied.
//
// So links that stay inside the working directories are followed, and
// links that lead out are refused. Either way no path string is resolved
// twice, so a link swapped in between a check and a use is never followed.
// An absolute link may also spell a working directory by its resolved path
// (/data/kubelet/... for a -kubelet-path /var/lib/kubelet that is a link to
// /data/kubelet). A working directory nested in another whose own path
// ends in a link (-working-dir=/k/plugins with /k/plugins -> /data/plugins)
// is opened by its configured path when a walk reaches that path.
//
// What "beneath" guarantees, and what it does not:
//
//   - Every object opened lies beneath a working directory in the
//     directory tree, as the kernel sees it at that moment: no link and no
//     ".." leads above it.
//   - It does not guarantee that the object is on the working directory's
//     filesystem or that its data lies "inside" in any other sense.
//     RESOLVE_NO_XDEV is not set, because volumes are mounts below the
//     working directories by design; so a mount below one is entered, and
//     a bind mount there of a directory from elsewhere on the host (kubelet
//     makes these for local and hostPath persistent volumes and for
//     subPath mounts, below /var/lib/kubelet/pods) leads to that directory.
//     A caller can therefore create, remove and mount on what such a mount
//     exposes. Mounts are made by kubelet, drivers and the proxy, not by a
//     pod that merely writes below a working directory, so a planted link
//     cannot do this; the policy's path roots (not the working
//     directories) are what keeps a caller away from other pods' volumes.
//   - A working directory itself is not a place to remove, empty, mount on
//     or replace with a link, however a path reaches it: Guard compares the
//     object a path reached with every working directory by device and
//     inode, and the backends refuse it (errdefs.ErrPermissionDenied).
//
// The lexical part (Roots, Clean) builds on every OS, so cross-platform
// wiring and its tests compile; the opening part is Linux's (elsewhere it
// fails with errdefs.ErrUnimplemented).
package beneath

import (
	"sort"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// Roots is a set of working directories that paths are confined to. It
// holds no open files or mutable state, so one Roots may serve concurrent
// calls.
type Roots struct {
	// dirs are the cleaned working directories, longest first.
	dirs []string
}

// New returns Roots for workingDirs: absolute POSIX paths (the same list a
// Service's hostpath.Policy holds). The directories need not exist yet;
// Roots never creates or removes a working directory itself. "/" is
// refused, as it would confine nothing. New checks only the list; Probe
// tells whether the kernel can confine at all.
func New(workingDirs []string) (*Roots, error) {
	if len(workingDirs) == 0 {
		return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "no working directories")
	}
	r := &Roots{}
	seen := map[string]bool{}
	for _, d := range workingDirs {
		c, err := hostpath.POSIX.Clean(d)
		if err != nil {
			return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "working dir %q: %v", d, err)
		}
		if c == "/" {
			return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "working dir %q is the filesystem root and would confine nothing", d)
		}
		if !seen[c] {
			seen[c] = true
			r.dirs = append(r.dirs, c)
		}
	}
	sort.Slice(r.dirs, func(i, j int) bool { return len(r.dirs[i]) > len(r.dirs[j]) })
	return r, nil
}

// Dirs returns the cleaned working directories, longest first.
func (r *Roots) Dirs() []string { return append([]string(nil), r.dirs...) }

// RootOf returns the working directory a cleaned path lies in, or "" when
// it lies in none. With nested working directories it is the outermost
// one: everything beneath it is allowed, so a relative link that climbs out
// of an inner working directory into the outer one is not an escape. The
// inner directory's own path is resolved like any other directory, except
// that when it is a link the walk opens it as configured (see walk).
func (r *Roots) RootOf(p string) string {
	root := ""
	for _, d := range r.dirs {
		if hostpath.POSIX.Within(p, d) {
			root = d // dirs are longest first, so the last match is outermost
		}
	}
	return root
}

// IsRoot tells whether a cleaned path is one of the working directories.
func (r *Roots) IsRoot(p string) bool {
	for _, d := range r.dirs {
		if p == d {
			return true
		}
	}
	return false
}

// Clean cleans p and finds its working directory. A path that does not
// clean is errdefs.ErrInvalidArgument; one in no working directory is
// errdefs.ErrPermissionDenied (the Services refuse such paths first, so
// this guards direct callers).
func (r *Roots) Clean(p string) (clean, root string, err error) {
	c, err := hostpath.POSIX.Clean(p)
	if err != nil {
		return "", "", err
	}
	root = r.RootOf(c)
	if root == "" {
		return "", "", errdefs.Errorf(errdefs.ErrPermissionDenied, "%q is outside the working directories %v", c, r.dirs)
	}
	return c, root, nil
}

// rebase finds where an absolute link target lies: the outermost working
// directory whose path is a leading run of the target's elements, and the
// elements that follow it, to be resolved beneath that directory. The
// target is not cleaned first: "a/../b" must resolve a before climbing, as
// the kernel would, so ".." stays in rest and the walk applies it (and
// refuses it above the working directory). A target that names no working
// directory by its leading elements returns ok false; that includes
// spellings such as /var/lib/../lib/kubelet/x, which are refused rather
// than second-guessed.
func (r *Roots) rebase(target string) (root string, rest []string, ok bool) {
	elems := split(target)
	for i := len(r.dirs) - 1; i >= 0; i-- { // shortest (outermost) first
		d := r.dirs[i]
		de := split(d)
		if len(de) > len(elems) {
			continue
		}
		match := true
		for j := range de {
			if de[j] != elems[j] {
				match = false
				break
			}
		}
		if match {
			return d, elems[len(de):], true
		}
	}
	return "", nil, false
}

// split returns a path's elements, without empty and "." elements; ".."
// elements are kept for the walk to apply.
func split(p string) []string {
	var out []string
	for _, e := range strings.Split(p, "/") {
		if e != "" && e != "." {
			out = append(out, e)
		}
	}
	return out
}

// EscapeError is the error for a path whose resolution leaves its working
// directory root (through a symbolic link or ".."):
// errdefs.ErrPermissionDenied, naming both.
func EscapeError(p, root string) error {
	return errdefs.Errorf(errdefs.ErrPermissionDenied, "%q resolves outside the working directory %q (through a symbolic link or \"..\"); refusing to follow it", p, root)
}
