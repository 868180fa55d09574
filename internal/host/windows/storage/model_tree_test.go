package storage

import (
	"context"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// ---- Paths and the file tree ----

// modelSplit parses a path as the backend hands it to Win32: a drive path
// (C:\a\b) or a volume GUID path (\\?\Volume{…}\a), with or without the
// \\?\ prefix and a trailing backslash. root is the upper-case drive
// letter or the volume GUID path.
func modelSplit(p string) (root string, elems []string, err error) {
	rest := strings.TrimPrefix(p, `\\?\`)
	switch {
	case len(rest) >= 2 && rest[1] == ':' && (rest[0] >= 'A' && rest[0] <= 'Z' || rest[0] >= 'a' && rest[0] <= 'z'):
		root, rest = strings.ToUpper(rest[:1]), rest[2:]
	case hasPrefixFold(rest, "Volume{") && strings.IndexByte(rest, '}') > 0:
		end := strings.IndexByte(rest, '}')
		root, rest = `\\?\`+rest[:end+1]+`\`, rest[end+1:]
	default:
		return "", nil, errno(modelErrInvalidName)
	}
	for _, e := range strings.Split(rest, `\`) {
		if e != "" {
			elems = append(elems, e)
		}
	}
	return root, elems, nil
}

// rootVolume returns the volume a drive letter or volume GUID path names,
// whether or not it can be entered.
func (m *winModel) rootVolume(root string) *modelVolume {
	if len(root) == 1 {
		return m.letters[root[0]]
	}
	return m.findVolume(root)
}

// enter checks that a path may go into vol's file tree. A volume that is
// not present (gone, or its disk offline) is ERROR_PATH_NOT_FOUND (what
// Windows answers through a dangling mounted folder is unconfirmed); a
// RAW one ERROR_UNRECOGNIZED_VOLUME ("The volume does not contain a
// recognized file system").
func (m *winModel) enter(v *modelVolume) (*modelVolume, error) {
	switch {
	case v == nil || !v.present():
		return nil, errno(errPathNotFound)
	case v.root == nil:
		return nil, errno(errUnrecognizedVolume)
	}
	return v, nil
}

// modelPlace is where a lookup ended.
type modelPlace struct {
	parent *modelNode // the directory holding node; nil at a volume root
	name   string
	node   *modelNode // nil: the last element does not exist
	vol    *modelVolume
}

// lookup resolves p. Reparse points inside the path are followed (mount
// points into their volume, links and junctions to their target); the last
// element only with followLast, as CreateFileW without
// FILE_FLAG_OPEN_REPARSE_POINT does. A missing last element is a place
// with a nil node; a missing directory on the way ERROR_PATH_NOT_FOUND.
func (m *winModel) lookup(p string, followLast bool) (modelPlace, error) {
	hops := 0
	return m.walk(p, followLast, &hops)
}

// existing is lookup for the Win32 calls that need the last element to
// exist: a missing one is ERROR_FILE_NOT_FOUND.
func (m *winModel) existing(p string, followLast bool) (modelPlace, error) {
	pl, err := m.lookup(p, followLast)
	if err == nil && pl.node == nil {
		return pl, errno(errFileNotFound)
	}
	return pl, err
}

func (m *winModel) walk(p string, followLast bool, hops *int) (modelPlace, error) {
	root, elems, err := modelSplit(p)
	if err != nil {
		return modelPlace{}, err
	}
	vol, err := m.enter(m.rootVolume(root))
	if err != nil {
		return modelPlace{}, err
	}
	pl := modelPlace{node: vol.root, vol: vol}
	for i, e := range elems {
		last := i == len(elems)-1
		dir := pl.node
		if dir.children == nil {
			return modelPlace{}, errno(errPathNotFound) // a file on the way
		}
		child := dir.children[strings.ToLower(e)]
		if child == nil {
			if !last {
				return modelPlace{}, errno(errPathNotFound)
			}
			return modelPlace{parent: dir, name: e, vol: pl.vol}, nil
		}
		here := modelPlace{parent: dir, name: child.name, node: child, vol: pl.vol}
		switch {
		case last && !followLast, child.tag == 0:
			pl = here
		case child.volume != "":
			v, err := m.enter(m.findVolume(child.volume))
			if err != nil {
				return modelPlace{}, err
			}
			pl = modelPlace{node: v.root, vol: v}
		default:
			if *hops++; *hops > modelMaxHops {
				return modelPlace{}, errno(modelErrCantResolve)
			}
			if !last && !child.dir {
				return modelPlace{}, errno(errDirectory) // a file link used as a directory
			}
			t, err := m.walk(child.target, true, hops)
			if err != nil {
				return modelPlace{}, err
			}
			if !last && t.node == nil {
				return modelPlace{}, errno(errPathNotFound)
			}
			pl = t
		}
	}
	return pl, nil
}

// mkdirAll creates p and its missing parents (test setup, and the
// filesystem host's Mkdir). An existing directory, mount point or link to
// a directory is success; anything else there is errdefs.ErrAlreadyExists.
func (m *winModel) mkdirAll(p string) error {
	pl, err := m.lookup(p, false)
	if isErrno(err, errPathNotFound) {
		parent := hostpath.Windows.Dir(strings.TrimSuffix(p, `\`))
		if parent == p {
			return err
		}
		if err := m.mkdirAll(parent); err != nil {
			return err
		}
		pl, err = m.lookup(p, false)
	}
	switch {
	case err != nil:
		return err
	case pl.node == nil:
		pl.parent.children[strings.ToLower(pl.name)] = newModelDir(pl.name)
		return nil
	case pl.parent == nil, pl.node.dir && (pl.node.tag == 0 || pl.node.volume != ""):
		return nil
	case pl.node.tag != 0:
		if t, err := m.lookup(p, true); err == nil && t.node != nil && t.node.dir {
			return nil
		}
	}
	return errdefs.Errorf(errdefs.ErrAlreadyExists, "%q exists and is not a directory", p)
}

// writeFile creates (or replaces) the file p of size bytes, following
// links; the parent must exist. Tests use it to fill volumes.
func (m *winModel) writeFile(p string, size int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	pl, err := m.lookup(p, true)
	switch {
	case err != nil:
		return err
	case pl.parent == nil || pl.node != nil && pl.node.dir:
		return errno(errAccessDenied) // CreateFileW on a directory
	}
	pl.parent.children[strings.ToLower(pl.name)] = &modelNode{name: pl.name, size: size}
	return nil
}

// link creates a symbolic link (CreateSymbolicLinkW) or, with junction, a
// directory junction at l leading to the drive path target, with the
// reparse data Windows writes: substitute name \??\target, print name
// target, flags 0 for an absolute link. dir is SYMBOLIC_LINK_FLAG_DIRECTORY.
func (m *winModel) link(l, target string, dir, junction bool) error {
	pl, err := m.lookup(l, false)
	switch {
	case err != nil:
		return err
	case pl.parent == nil || pl.node != nil:
		return errno(modelErrAlreadyExists)
	}
	n := &modelNode{name: pl.name, dir: dir, target: target}
	if junction {
		n.dir, n.tag, n.reparse = true, reparseTagMountPoint, mountPointReparseBuf(`\??\`+target, target)
	} else {
		n.tag, n.reparse = reparseTagSymlink, symlinkReparseBuf(`\??\`+target, target, false)
	}
	pl.parent.children[strings.ToLower(pl.name)] = n
	return nil
}

// ---- The filesystem group on the model's file tree ----

// modelFS is filesystem.Host over the model's file tree, so driver flows
// that create staging directories and publish links can run against the
// Windows storage backend over the same world. It follows the Windows
// filesystem backend (internal/host/windows/files) in what it accepts; its errors
// are the model's Win32 codes mapped as the storage backend maps them.
type modelFS struct{ m *winModel }

var _ filesystem.Host = modelFS{}

// fsError maps a Win32 code to its errdefs kind (osError); other errors
// pass through.
func fsError(op string, err error) error {
	if _, ok := errnoOf(err); ok {
		return osError(op, err)
	}
	return err
}

// existing is lookup for the filesystem calls that need path to exist:
// lookup's errors mapped by fsError, and a missing last element
// errdefs.ErrNotFound.
func (f modelFS) existing(path string, followLast bool) (modelPlace, error) {
	pl, err := f.m.lookup(path, followLast)
	switch {
	case err != nil:
		return pl, fsError("stat "+path, err)
	case pl.node == nil:
		return pl, errdefs.Errorf(errdefs.ErrNotFound, "%q does not exist", path)
	}
	return pl, nil
}

func (f modelFS) PathExists(_ context.Context, path string) (bool, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	pl, err := f.m.lookup(path, false)
	switch {
	case isErrno(err, errFileNotFound, errPathNotFound):
		return false, nil
	case err != nil:
		return false, fsError("stat "+path, err)
	}
	return pl.node != nil, nil
}

func (f modelFS) Mkdir(_ context.Context, path string) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	return fsError("mkdir "+path, f.m.mkdirAll(path))
}

// Rmdir removes a reparse point itself (a mounted folder's volume keeps
// its data), a file, or a directory: empty, or with force its tree,
// without entering the reparse points inside.
func (f modelFS) Rmdir(_ context.Context, path string, force bool) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	pl, err := f.existing(path, false)
	if err != nil {
		return err
	}
	switch {
	case pl.parent == nil:
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q is the root of a drive and cannot be removed", path)
	case pl.node.tag == 0 && len(pl.node.children) > 0 && !force:
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "directory %q is not empty; remove it with force", path)
	}
	delete(pl.parent.children, strings.ToLower(pl.name))
	return nil
}

// RmdirContents empties the directory path leads to (links and mounted
// folders followed, as opening it would).
func (f modelFS) RmdirContents(_ context.Context, path string) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	pl, err := f.existing(path, true)
	if err != nil {
		return err
	}
	if pl.node.children == nil {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q is not a directory", path)
	}
	clear(pl.node.children)
	return nil
}

// CreateSymlink makes a directory link unless the source is an existing
// file, as the Windows filesystem backend does; an existing link to the
// same source is success.
func (f modelFS) CreateSymlink(_ context.Context, source, link string) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	pl, err := f.m.lookup(link, false)
	switch {
	case err != nil:
		return fsError("stat "+link, err)
	case pl.node != nil && pl.node.tag == reparseTagSymlink && hostpath.Windows.Equal(pl.node.target, source):
		return nil
	case pl.node != nil || pl.parent == nil:
		return errdefs.Errorf(errdefs.ErrAlreadyExists, "%q already exists and is not a link to %q", link, source)
	}
	dir := true
	if t, err := f.m.lookup(source, true); err == nil && t.node != nil && !t.node.dir {
		dir = false
	}
	return fsError("CreateSymbolicLink "+link, f.m.link(link, source, dir, false))
}

// IsSymlink is true for a link or junction whose target exists and for a
// mounted folder whose volume is present.
func (f modelFS) IsSymlink(_ context.Context, path string) (bool, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	pl, err := f.existing(path, false)
	if err != nil {
		return false, err
	}
	switch {
	case pl.node.volume != "":
		v := f.m.findVolume(pl.node.volume)
		return v != nil && v.present(), nil
	case pl.node.tag != 0:
		t, err := f.m.lookup(path, true)
		return err == nil && t.node != nil, nil
	}
	return false, nil
}
