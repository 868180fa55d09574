package simulated

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// maxLinkHops is how many symbolic links one path lookup follows; Windows
// stops at 63 reparse points.
const maxLinkHops = 63

type nodeKind uint8

const (
	kindDir   nodeKind = iota // a directory
	kindFile                  // a regular file
	kindLink                  // a symbolic link
	kindMount                 // a volume mount point (a directory reparse point)
)

// node is an entry in a volume's or share's file tree. Names keep the case
// they were created with; lookups go through the lower-cased name.
type node struct {
	kind     nodeKind
	name     string
	children map[string]*node // kindDir
	data     []byte           // kindFile
	target   string           // kindLink: a drive path or a UNC path
	dirLink  bool             // kindLink: a directory link (traversable)
	volID    string           // kindMount: the mounted volume
}

func newDir(name string) *node {
	return &node{kind: kindDir, name: name, children: map[string]*node{}}
}

// treeBytes is the space the files under n take, in whole clusters. Mount
// points and links take none (they live in the MFT), and the walk never
// enters another volume.
func treeBytes(n *node) int64 {
	if n == nil {
		return 0
	}
	switch n.kind {
	case kindFile:
		return alignUp(int64(len(n.data)), clusterSize)
	case kindDir:
		var sum int64
		for _, c := range n.children {
			sum += treeBytes(c)
		}
		return sum
	}
	return 0
}

// notExistError reports a path, or an element of it, that does not exist.
// It wraps errdefs.ErrNotFound; mkdirAll uses its type to know that
// creating the parents may help. The message is formatted only when
// asked for: PathExists and mkdirAll meet this error on their ordinary
// path and drop it, so formatting it there would be wasted per call.
type notExistError struct {
	format string
	args   []any
}

func (e *notExistError) Error() string {
	return fmt.Sprintf(e.format, e.args...) + ": " + errdefs.ErrNotFound.Error()
}
func (e *notExistError) Unwrap() error { return errdefs.ErrNotFound }

func notExist(format string, args ...any) error {
	return &notExistError{format: format, args: args}
}

// isNotExist tells whether err reports a missing path.
func isNotExist(err error) bool {
	//nolint:errorlint // the unwrapped error first, without errors.As's reflection; errors.As below finds a wrapped one
	if _, ok := err.(*notExistError); ok {
		return true
	}
	var e *notExistError
	return errors.As(err, &e)
}

// place is where a path lookup ended.
type place struct {
	dir  *node        // the directory holding the entry; nil when the path is a root
	name string       // the entry's name as the path spells it
	n    *node        // the entry; nil when it does not exist
	vol  *volumeState // the volume holding the entry, nil on a share
	sh   *share       // the share holding the entry, nil on a volume
}

// walker looks paths up. One walker counts the links one operation
// follows.
type walker struct {
	w    *world
	hops int
	// server reaches UNC paths as the file server would, without an SMB
	// global mapping: for the Host's own helpers (WriteFile and so on).
	server bool
}

// split returns the elements of a cleaned path after its root.
func split(rest string) []string {
	out := make([]string, 0, strings.Count(rest, `\`)+1)
	for e := range strings.SplitSeq(rest, `\`) {
		if e != "" {
			out = append(out, e)
		}
	}
	return out
}

// enter checks that the file tree of v can be entered at where. The
// volume of an offline disk is not present on Windows (see world.volume),
// so a path into it does not exist, as a mounted folder whose volume is
// gone leads nowhere (ERROR_PATH_NOT_FOUND).
func (w *world) enter(v *volumeState, where string) error {
	if !v.disk.online {
		return notExist("%q is on volume %s, which is not present: disk %d is offline", where, v.id, v.disk.number)
	}
	if v.root == nil {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q is on volume %s, which does not contain a recognized file system", where, v.id)
	}
	return nil
}

// root resolves the root of p: a drive letter's volume, or an SMB share.
func (wk *walker) root(p string) (place, string, []string, error) {
	w := wk.w
	if strings.HasPrefix(p, `\\`) {
		key, full, err := smb.ParseRemotePath(p)
		if err != nil {
			return place{}, "", nil, err
		}
		sh := w.shares[key]
		if sh == nil {
			return place{}, "", nil, notExist("the network path %s was not found", key)
		}
		if !wk.server {
			switch m := w.mappings[key]; {
			case m == nil:
				return place{}, "", nil, errdefs.Errorf(errdefs.ErrFailedPrecondition, "share %s has no SMB global mapping, so %q cannot be reached", sh.path, p)
			case m.status != SMBOK:
				return place{}, "", nil, errdefs.Errorf(errdefs.ErrUnavailable, "the SMB global mapping of %s is %s, so %q cannot be reached", sh.path, m.status, p)
			}
		}
		return place{n: sh.root, sh: sh}, sh.path, split(full)[2:], nil
	}
	letter := p[0]
	v := w.findVolume(w.letters[letter])
	if v == nil {
		return place{}, "", nil, notExist("drive %c: does not exist", letter)
	}
	if err := w.enter(v, p); err != nil {
		return place{}, "", nil, err
	}
	return place{n: v.root, vol: v}, p[:3], split(p[3:]), nil
}

// resolve looks p up. Links and mount points inside the path are followed;
// the last element is followed only when follow is set (Stat rather than
// Lstat). When the last element is missing the place has n == nil and
// names the directory it would be created in.
func (wk *walker) resolve(p string, follow bool) (place, error) {
	pl, walked, elems, err := wk.root(p)
	if err != nil || len(elems) == 0 {
		return pl, err
	}
	dir, vol, sh := pl.n, pl.vol, pl.sh
	// here names the path walked so far, up to and including element i,
	// for messages and mount checks only. It is joined only when read: a
	// PathExists of a missing path (what drivers ask before every stage)
	// builds an error whose message nobody reads.
	here := func(i int) walkedPath { return walkedPath{root: walked, elems: elems[:i+1]} }
	for i, e := range elems {
		last := i == len(elems)-1
		child := dir.children[strings.ToLower(e)]
		if child == nil || (last && !follow) {
			if child == nil && !last {
				return place{}, notExist("path %q does not exist", here(i))
			}
			return place{dir: dir, name: e, n: child, vol: vol, sh: sh}, nil
		}
		switch child.kind {
		case kindDir, kindFile:
			if last {
				return place{dir: dir, name: e, n: child, vol: vol, sh: sh}, nil
			}
			if child.kind == kindFile {
				return place{}, notExist("path %q is a file, not a directory", here(i))
			}
			dir = child
		case kindMount:
			v := wk.w.findVolume(child.volID)
			if v == nil {
				return place{}, notExist("volume %s mounted at %q is not present", child.volID, here(i))
			}
			if err := wk.w.enter(v, here(i).String()); err != nil {
				return place{}, err
			}
			if last {
				return place{n: v.root, vol: v}, nil
			}
			dir, vol, sh = v.root, v, nil
		case kindLink:
			if wk.hops++; wk.hops > maxLinkHops {
				return place{}, errdefs.Errorf(errdefs.ErrFailedPrecondition, "too many levels of symbolic links at %q", here(i))
			}
			if !last && !child.dirLink {
				return place{}, errdefs.Errorf(errdefs.ErrFailedPrecondition,
					"%q is a file symbolic link (its source did not exist as a directory when it was created) and cannot be traversed as a directory", here(i))
			}
			t, err := wk.resolve(child.target, true)
			if err != nil {
				return place{}, err
			}
			if last {
				return t, nil
			}
			switch {
			case t.n == nil:
				return place{}, notExist("path %q (the target of link %q) does not exist", child.target, here(i))
			case t.n.kind != kindDir:
				return place{}, notExist("path %q (the target of link %q) is a file, not a directory", child.target, here(i))
			}
			dir, vol, sh = t.n, t.vol, t.sh
		}
	}
	panic("unreachable")
}

// walkedPath is a path as far as a walk got: root and the elements
// after it, joined when formatted.
type walkedPath struct {
	root  string
	elems []string
}

// String joins the path.
func (p walkedPath) String() string {
	s := p.root
	for _, e := range p.elems {
		s = hostpath.Windows.Join(s, e)
	}
	return s
}

// exists tells whether p resolves, following every link, to something.
func (wk *walker) exists(p string) bool {
	pl, err := wk.resolve(p, true)
	return err == nil && pl.n != nil
}

// isDirLike tells whether n, found without following it, can be used as a
// directory.
func (wk *walker) isDirLike(p string, n *node) bool {
	switch n.kind {
	case kindDir, kindMount:
		return true
	case kindLink:
		pl, err := wk.resolve(p, true)
		return err == nil && pl.n != nil && pl.n.kind == kindDir
	}
	return false
}

// mkdirAll is os.MkdirAll on Windows: an existing directory (or mount
// point, or link to a directory) is success; a file or a dangling link is
// errdefs.ErrAlreadyExists; missing parents are created.
func (w *world) mkdirAll(wk *walker, p string) error {
	pl, err := wk.resolve(p, false)
	if isNotExist(err) {
		parent := hostpath.Windows.Dir(p)
		if strings.HasPrefix(p, `\\`) && len(split(p)) <= 2 || parent == p {
			return err
		}
		if err := w.mkdirAll(wk, parent); err != nil {
			return err
		}
		pl, err = wk.resolve(p, false)
	}
	switch {
	case err != nil:
		return err
	case pl.n == nil:
		pl.dir.children[strings.ToLower(pl.name)] = newDir(pl.name)
		return nil
	case wk.isDirLike(p, pl.n):
		return nil
	case pl.n.kind == kindLink:
		return errdefs.Errorf(errdefs.ErrAlreadyExists, "%q exists and is a link to %q, which is not a directory", p, pl.n.target)
	}
	return errdefs.Errorf(errdefs.ErrAlreadyExists, "%q exists and is not a directory", p)
}

// remove deletes the entry at pl (found without following it). A
// directory goes with its tree, but nothing is followed: links and mount
// points inside are unlinked, never entered, so link targets and mounted
// volumes keep their contents.
func (pl place) remove(p string, force bool) error {
	switch {
	case pl.n == nil:
		return notExist("path %q does not exist", p)
	case pl.dir == nil:
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q is the root of a drive or share and cannot be removed", p)
	case pl.n.kind == kindDir && len(pl.n.children) > 0 && !force:
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "directory %q is not empty", p)
	}
	delete(pl.dir.children, strings.ToLower(pl.name))
	return nil
}

// mountPoints maps each volume to the paths where it is mounted, found by
// walking from every drive letter through reachable mount points.
func (w *world) mountPoints() map[*volumeState][]string {
	out := map[*volumeState][]string{}
	onStack := map[*volumeState]bool{}
	var walk func(dir *node, path string)
	walk = func(dir *node, path string) {
		for _, c := range dir.children {
			p := hostpath.Windows.Join(path, c.name)
			switch c.kind {
			case kindDir:
				walk(c, p)
			case kindMount:
				v := w.findVolume(c.volID)
				if v == nil {
					continue
				}
				out[v] = append(out[v], p)
				if v.root != nil && v.disk.online && !onStack[v] {
					onStack[v] = true
					walk(v.root, p)
					delete(onStack, v)
				}
			}
		}
	}
	letters := make([]byte, 0, len(w.letters))
	for l := range w.letters {
		letters = append(letters, l)
	}
	sort.Slice(letters, func(i, j int) bool { return letters[i] < letters[j] })
	for _, l := range letters {
		if v := w.findVolume(w.letters[l]); v != nil && v.root != nil && v.disk.online {
			onStack[v] = true
			walk(v.root, string(l)+`:\`)
			delete(onStack, v)
		}
	}
	return out
}

// cleanView cleans a path a backend method receives. The Services hand
// over clean paths already; cleaning again keeps direct callers honest.
func cleanView(p string) (string, error) { return hostpath.Windows.Clean(p) }

// atPath runs f on the world under the lock with path as cleanView
// cleans it: the start of every call that takes a path, so a path that
// does not clean is refused before the lock is taken, and the same way by
// every such call.
func (h *Host) atPath(ctx context.Context, path string, f func(w *world, p string) error) error {
	p, err := cleanView(path)
	if err != nil {
		return err
	}
	return h.do(ctx, func(w *world) error { return f(w, p) })
}

// cleanAny cleans a drive path or a UNC path, for the Host's helpers.
func cleanAny(p string) (string, error) {
	if strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, `//`) {
		_, full, err := smb.ParseRemotePath(p)
		return full, err
	}
	return hostpath.Windows.Clean(p)
}

// fsView is the filesystem group backend.
type fsView struct{ h *Host }

// PathExists implements filesystem.Host with Lstat semantics: a dangling
// link exists. A path through an unformatted volume is an error, as on
// Windows (ERROR_UNRECOGNIZED_VOLUME); a path through a volume that is not
// present (its disk offline or gone) does not exist.
func (v fsView) PathExists(ctx context.Context, path string) (bool, error) {
	var ok bool
	err := v.h.atPath(ctx, path, func(w *world, p string) error {
		pl, err := (&walker{w: w}).resolve(p, false)
		if isNotExist(err) {
			return nil
		}
		ok = err == nil && pl.n != nil
		return err
	})
	return ok, err
}

// Mkdir implements filesystem.Host as os.MkdirAll: links on the way are
// followed; an existing directory, mount point or link to a directory is
// success; a file or a dangling link is errdefs.ErrAlreadyExists.
func (v fsView) Mkdir(ctx context.Context, path string) error {
	return v.h.atPath(ctx, path, func(w *world, p string) error { return w.mkdirAll(&walker{w: w}, p) })
}

// Rmdir implements filesystem.Host. A link or mount point is unlinked (the
// volume stays, without that mount point); a file is deleted, as os.Remove
// does; a directory must be empty unless force, and then goes with its
// tree without entering links or mount points.
func (v fsView) Rmdir(ctx context.Context, path string, force bool) error {
	return v.h.atPath(ctx, path, func(w *world, p string) error {
		pl, err := (&walker{w: w}).resolve(p, false)
		if err != nil {
			return err
		}
		return pl.remove(p, force)
	})
}

// RmdirContents implements filesystem.Host: path (followed if it is a link
// or mount point, as opening it would) must be a directory; every entry in
// it is removed as Rmdir with force removes it.
func (v fsView) RmdirContents(ctx context.Context, path string) error {
	return v.h.atPath(ctx, path, func(w *world, p string) error {
		pl, err := (&walker{w: w}).resolve(p, true)
		switch {
		case err != nil:
			return err
		case pl.n == nil:
			return notExist("path %q does not exist", p)
		case pl.n.kind != kindDir:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q is not a directory", p)
		}
		clear(pl.n.children)
		return nil
	})
}

// CreateSymlink implements filesystem.Host. The link's parent must exist
// (errdefs.ErrNotFound); an existing entry at link is
// errdefs.ErrAlreadyExists unless it is a link to the same source. The
// source need not exist, as Windows allows dangling links; but like Go's
// os.Symlink on Windows, a link whose source is not an existing directory
// at creation is a file link, which cannot later be traversed as a
// directory even once the source appears.
func (v fsView) CreateSymlink(ctx context.Context, source, link string) error {
	src, err := cleanView(source)
	if err != nil {
		return err
	}
	l, err := cleanView(link)
	if err != nil {
		return err
	}
	return v.h.do(ctx, func(w *world) error {
		wk := &walker{w: w}
		pl, err := wk.resolve(l, false)
		if err != nil {
			return err
		}
		return w.link(wk, pl, l, src, false)
	})
}

// link creates a link at pl (path l) pointing to target; forceDir makes it
// a directory link whatever the target is (as SMB links are made).
func (w *world) link(wk *walker, pl place, l, target string, forceDir bool) error {
	switch {
	case pl.dir == nil:
		return errdefs.Errorf(errdefs.ErrAlreadyExists, "%q is a root and cannot become a link", l)
	case pl.n != nil && pl.n.kind == kindLink && hostpath.Windows.Equal(pl.n.target, target):
		return nil
	case pl.n != nil:
		return errdefs.Errorf(errdefs.ErrAlreadyExists, "%q already exists", l)
	}
	dirLink := forceDir
	if !dirLink {
		t, err := wk.resolve(target, true)
		dirLink = err == nil && t.n != nil && t.n.kind == kindDir
	}
	pl.dir.children[strings.ToLower(pl.name)] = &node{kind: kindLink, name: pl.name, target: target, dirLink: dirLink}
	return nil
}

// IsSymlink implements filesystem.Host: true for a link whose target
// resolves (an SMB link's target resolves while its mapping is OK and the
// directory exists on the share) and for a mount point whose volume is
// present and its disk online; false for anything else. A missing path is
// errdefs.ErrNotFound.
func (v fsView) IsSymlink(ctx context.Context, path string) (bool, error) {
	var ok bool
	err := v.h.atPath(ctx, path, func(w *world, p string) error {
		wk := &walker{w: w}
		pl, err := wk.resolve(p, false)
		switch {
		case err != nil:
			return err
		case pl.n == nil:
			return notExist("path %q does not exist", p)
		case pl.n.kind == kindLink:
			ok = wk.exists(pl.n.target)
		case pl.n.kind == kindMount:
			vol := w.findVolume(pl.n.volID)
			ok = vol != nil && vol.disk.online
		}
		return nil
	})
	return ok, err
}

// WriteFile creates or replaces the file at path with data, following
// links. path is a drive path (C:\dir\file) or a UNC path
// (\\server\share\dir\file), which writes on the share as its server would,
// mapped or not. The parent must exist. A write that does not fit on the
// volume is errdefs.ErrOutOfRange. Tests use it to make directories
// non-empty and volumes used.
func (h *Host) WriteFile(path string, data []byte) error {
	p, err := cleanAny(path)
	if err != nil {
		return err
	}
	return h.locked(func(w *world) error {
		pl, err := (&walker{w: w, server: true}).resolve(p, true)
		switch {
		case err != nil:
			return err
		case pl.dir == nil || pl.n != nil && pl.n.kind != kindFile:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q is a directory", p)
		}
		if v := pl.vol; v != nil {
			grow := alignUp(int64(len(data)), clusterSize)
			if pl.n != nil {
				grow -= alignUp(int64(len(pl.n.data)), clusterSize)
			}
			if free := v.part.size - v.used(); grow > free {
				return errdefs.Errorf(errdefs.ErrOutOfRange, "there is not enough space on volume %s for %q: %d bytes needed, %d free", v.id, p, grow, free)
			}
		}
		name := pl.name
		if pl.n != nil {
			name = pl.n.name
		}
		pl.dir.children[strings.ToLower(name)] = &node{kind: kindFile, name: name, data: append([]byte(nil), data...)}
		return nil
	})
}

// ReadFile returns the contents of the file at path (a drive or UNC path,
// as for WriteFile), following links.
func (h *Host) ReadFile(path string) ([]byte, error) {
	p, err := cleanAny(path)
	if err != nil {
		return nil, err
	}
	var out []byte
	err = h.locked(func(w *world) error {
		pl, err := (&walker{w: w, server: true}).resolve(p, true)
		switch {
		case err != nil:
			return err
		case pl.n == nil:
			return notExist("file %q does not exist", p)
		case pl.n.kind != kindFile:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q is a directory", p)
		}
		out = append([]byte(nil), pl.n.data...)
		return nil
	})
	return out, err
}

// MkdirAll creates the directory path and its missing parents, like the
// filesystem backend's Mkdir but also for UNC paths (\\server\share\dir),
// which it creates on the share as its server would, mapped or not.
func (h *Host) MkdirAll(path string) error {
	p, err := cleanAny(path)
	if err != nil {
		return err
	}
	return h.locked(func(w *world) error { return w.mkdirAll(&walker{w: w, server: true}, p) })
}

// WorkingDirs returns the cleaned working directories the host was
// created with.
func (h *Host) WorkingDirs() []string {
	var out []string
	_ = h.locked(func(w *world) error { out = append(out, w.workingDirs...); return nil })
	return out
}
