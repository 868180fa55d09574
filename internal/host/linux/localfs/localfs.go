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
// beneath the working directory (package beneath: openat2(2) with
// RESOLVE_BENEATH, links that stay inside the working directories
// followed, links that lead out refused with errdefs.ErrPermissionDenied),
// then acts on the last element with the *at syscalls (mkdirat, unlinkat,
// symlinkat, statx with AT_SYMLINK_NOFOLLOW), so the kernel, not a string
// check, guarantees the object touched lies beneath the working directory.
// The volume and SMB backends confine their paths the same way.
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
	"fmt"

	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/beneath"
)

// FS is a filesystem.Host on the local filesystem, confined to its working
// directories. It holds no open files or mutable state, so one FS may serve
// concurrent calls; the Service serialises calls on the same path.
type FS struct {
	roots *beneath.Roots
}

var _ filesystem.Host = (*FS)(nil)

// New returns an FS confined to workingDirs: the kubelet directory and
// every -working-dir, as absolute POSIX paths (the same list the Service's
// hostpath.Policy holds). The directories need not exist yet; FS never
// creates or removes a working directory itself. "/" is refused, as it
// would confine nothing (errdefs.ErrInvalidArgument). New fails with
// errdefs.ErrUnimplemented when the kernel lacks openat2(2) (Linux < 5.6,
// or a seccomp profile that hides it), because without it FS cannot act
// safely and must not act at all.
func New(workingDirs []string) (*FS, error) {
	roots, err := beneath.New(workingDirs)
	if err != nil {
		return nil, fmt.Errorf("localfs: %w", err)
	}
	if err := beneath.Probe(); err != nil {
		return nil, fmt.Errorf("localfs: %w", err)
	}
	return &FS{roots: roots}, nil
}

// WorkingDirs returns the cleaned working directories, longest first.
func (f *FS) WorkingDirs() []string { return f.roots.Dirs() }
