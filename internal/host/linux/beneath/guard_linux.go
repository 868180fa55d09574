//go:build linux

package beneath

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// fileID is what tells one directory from another: its device and inode.
type fileID struct{ dev, ino uint64 }

func idOf(st *unix.Stat_t) fileID {
	return fileID{uint64(st.Dev), uint64(st.Ino)} //nolint:unconvert // Stat_t field types differ between architectures
}

// Guard tells whether an object a caller's path reached is a working
// directory itself. The path text cannot tell: a link below one working
// directory (<kubelet>/pods/x/l -> ../.., or -> <kubelet>) or a link whose
// parent resolves to an outer working directory (<kubelet>/pods/x/l/plugins
// with l -> <kubelet>, where <kubelet>/plugins is an inner working
// directory) reaches a working directory under another name. Guard
// therefore compares identities: every working directory's device and
// inode (its configured path followed, as openRoot opens it), and, for a
// working directory whose own path ends in a link, the link's directory and
// name, so the link itself is not removed or replaced either.
//
// A Guard is a snapshot taken when it is made (Roots.Guard), so it also
// sees working directories created since start-up; one Guard serves one
// operation.
type Guard struct {
	ids     map[fileID]string
	entries map[string][]rootEntry // by the working directory's last element
}

// rootEntry is a working directory's place: the directory holding it and
// its name there.
type rootEntry struct {
	parent fileID
	root   string
}

// Guard stats every working directory now (a missing one is skipped: it
// cannot be reached).
func (r *Roots) Guard() *Guard {
	g := &Guard{ids: map[fileID]string{}, entries: map[string][]rootEntry{}}
	for _, d := range r.dirs {
		var st unix.Stat_t
		if unix.Stat(d, &st) == nil {
			g.ids[idOf(&st)] = d
		}
		if unix.Stat(hostpath.POSIX.Dir(d), &st) == nil {
			name := hostpath.POSIX.Base(d)
			g.entries[name] = append(g.entries[name], rootEntry{parent: idOf(&st), root: d})
		}
	}
	return g
}

// rootError is the refusal for display, which reaches the working
// directory root.
func rootError(display, root string) error {
	if display == root {
		return errdefs.Errorf(errdefs.ErrPermissionDenied, "%q is a working directory itself; refusing to act on it", display)
	}
	return errdefs.Errorf(errdefs.ErrPermissionDenied, "%q is a working directory itself (%q, reached through a link or under another name); refusing to act on it", display, root)
}

// CheckFd refuses (errdefs.ErrPermissionDenied) when the object fd refers
// to is a working directory itself; display names it in the message.
func (g *Guard) CheckFd(fd int, display string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return PathError("stat", display, err)
	}
	if root, ok := g.ids[idOf(&st)]; ok {
		return rootError(display, root)
	}
	return nil
}

// CheckEntry refuses (errdefs.ErrPermissionDenied) when the entry name in
// dirfd, not followed, is a working directory itself or the link a working
// directory's configured path ends in. st is the entry's lstat if the
// caller has it (nil: CheckEntry takes it; a missing entry is no working
// directory).
func (g *Guard) CheckEntry(dirfd int, name string, st *unix.Stat_t, display string) error {
	if st == nil {
		st = new(unix.Stat_t)
		err := unix.Fstatat(dirfd, name, st, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT)
		switch {
		case errors.Is(err, unix.ENOENT):
			st = nil
		case err != nil:
			return PathError("lstat", display, err)
		}
	}
	if st != nil {
		if root, ok := g.ids[idOf(st)]; ok {
			return rootError(display, root)
		}
	}
	if es := g.entries[name]; len(es) > 0 {
		var pst unix.Stat_t
		if err := unix.Fstat(dirfd, &pst); err != nil {
			return PathError("stat", display, err)
		}
		for _, e := range es {
			if e.parent == idOf(&pst) {
				return rootError(display, e.root)
			}
		}
	}
	return nil
}

// ParentBelow is Parent for a path whose last element is to be acted on
// (made a link, mounted on, unmounted): the element, not followed, must not
// be a working directory itself or the link a working directory's path
// ends in, however the path is spelt (errdefs.ErrPermissionDenied; see
// Guard). The caller closes the descriptor.
func (r *Roots) ParentBelow(p string) (dirfd int, name string, err error) {
	dirfd, name, err = r.Parent(p)
	if err != nil {
		return -1, "", err
	}
	if err := r.Guard().CheckEntry(dirfd, name, nil, p); err != nil {
		Close(dirfd)
		return -1, "", err
	}
	return dirfd, name, nil
}
