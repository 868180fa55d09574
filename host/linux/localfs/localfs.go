// Package localfs is the filesystem group's backend on a Linux host: it
// implements filesystem.Host on the local POSIX filesystem, confined to the
// proxy's working directories even when the tree under them contains
// symbolic links that point elsewhere.
//
// The group Service checks request paths lexically (hostpath.Policy), but a
// lexical check cannot see links: /var/lib/kubelet/pods/x/link/etc may name
// /etc/... if link points at /. Whoever can write below a working directory
// (a pod with a hostPath or a volume, a compromised driver) can plant such
// a link, so FS never hands a path string to a syscall that follows links.
// Instead every operation opens the directory holding its last element
// with openat2(2) and RESOLVE_BENEATH relative to the working directory,
// then acts on the last element with the *at syscalls (mkdirat, unlinkat,
// symlinkat, statx with AT_SYMLINK_NOFOLLOW), so the kernel, not a string
// check, guarantees the object touched lies beneath the working directory.
//
// RESOLVE_BENEATH refuses every absolute link, even one that points back
// inside a working directory, and CreateSymlink itself makes exactly such
// links (upstream drivers link /var/lib/kubelet/pods/.../mount to the
// absolute staging path). When the kernel refuses a path, FS therefore
// walks it one element at a time, each step again an openat2 with
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS relative to the previous directory's
// file descriptor, and interprets links itself: a relative link continues
// from the link's directory and may not climb above the working directory
// with "..", an absolute link continues from the working directory that
// lexically contains its target, and a link to anywhere else is refused
// with errdefs.ErrPermissionDenied. Either way no path string is resolved
// twice, so a link swapped in between a check and a use is never followed.
//
// Rmdir removes what is at a path, never what it points to: a link is
// unlinked, a mount point is unmounted and its directory removed, and a
// forced tree removal neither follows links nor enters mount points (nested
// mount points are unmounted, nested links unlinked). See
// docs/linux-filesystem-system.md for every RPC's semantics.
//
// The package builds on every OS so cross-platform wiring compiles; only
// Linux implements it (New fails elsewhere with errdefs.ErrUnimplemented).
package localfs

import (
	"sort"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// FS is a filesystem.Host on the local filesystem, confined to its working
// directories. It holds no open files or mutable state, so one FS may serve
// concurrent calls; the Service serialises calls on the same path.
type FS struct {
	// roots are the cleaned working directories, longest first.
	roots []string
}

var _ filesystem.Host = (*FS)(nil)

// New returns an FS confined to workingDirs: the kubelet directory and
// every -working-dir, as absolute POSIX paths (the same list the Service's
// hostpath.Policy holds). The directories need not exist yet; FS never
// creates or removes a working directory itself. "/" is refused, as it
// would confine nothing. New fails with errdefs.ErrUnimplemented when the
// kernel lacks openat2(2) (Linux < 5.6, or a seccomp profile that hides
// it), because without it FS cannot act safely and must not act at all.
func New(workingDirs []string) (*FS, error) {
	if len(workingDirs) == 0 {
		return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "localfs: no working directories")
	}
	f := &FS{}
	seen := map[string]bool{}
	for _, d := range workingDirs {
		c, err := hostpath.POSIX.Clean(d)
		if err != nil {
			return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "localfs: working dir %q: %v", d, err)
		}
		if c == "/" {
			return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "localfs: working dir %q is the filesystem root and would confine nothing", d)
		}
		if !seen[c] {
			seen[c] = true
			f.roots = append(f.roots, c)
		}
	}
	sort.Slice(f.roots, func(i, j int) bool { return len(f.roots[i]) > len(f.roots[j]) })
	if err := probe(); err != nil {
		return nil, err
	}
	return f, nil
}

// WorkingDirs returns the cleaned working directories, longest first.
func (f *FS) WorkingDirs() []string { return append([]string(nil), f.roots...) }

// rootOf returns the working directory a cleaned path lies in, or "" when
// it lies in none. With nested working directories it is the outermost
// one: everything beneath it is allowed, so a relative link that climbs out
// of an inner working directory into the outer one is not an escape, and
// the inner directory's own path is resolved like any other directory.
func (f *FS) rootOf(p string) string {
	root := ""
	for _, r := range f.roots {
		if hostpath.POSIX.Within(p, r) {
			root = r // roots are longest first, so the last match is outermost
		}
	}
	return root
}

// isRoot tells whether a cleaned path is one of the working directories.
func (f *FS) isRoot(p string) bool {
	for _, r := range f.roots {
		if p == r {
			return true
		}
	}
	return false
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
func (f *FS) rebase(target string) (root string, rest []string, ok bool) {
	elems := split(target)
	for i := len(f.roots) - 1; i >= 0; i-- { // shortest (outermost) first
		r := f.roots[i]
		re := split(r)
		if len(re) > len(elems) {
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
			return r, elems[len(re):], true
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

// errEscape is the error for a path whose resolution leaves its working
// directory.
func errEscape(p, root string) error {
	return errdefs.Errorf(errdefs.ErrPermissionDenied, "%q resolves outside the working directory %q (through a symbolic link or \"..\"); refusing to follow it", p, root)
}

// errOutside is the error for a path that lies in no working directory at
// all; the Service refuses such paths first, so this only guards direct
// callers.
func (f *FS) errOutside(p string) error {
	return errdefs.Errorf(errdefs.ErrPermissionDenied, "%q is outside the working directories %v", p, f.roots)
}

// cleanIn cleans p and finds its working directory.
func (f *FS) cleanIn(p string) (clean, root string, err error) {
	c, err := hostpath.POSIX.Clean(p)
	if err != nil {
		return "", "", err
	}
	r := f.rootOf(c)
	if r == "" {
		return "", "", f.errOutside(c)
	}
	return c, r, nil
}
