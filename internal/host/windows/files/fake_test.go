package files

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"unicode/utf16"
)

// fakeFS is a recording, in-memory Windows filesystem behind fsAPI. It
// models what the logic cares about: directories, files, read-only
// attributes, symlinks (file or directory, absolute or relative, to drive
// or UNC paths), junctions, volume mounted folders whose volume can vanish,
// and real REPARSE_DATA_BUFFER bytes, so the parser runs on every read.
//
// Entries live in one map keyed by lower-cased canonical path. A volume's
// contents live under its \\?\Volume{GUID} root, a share's under
// \\server\share; paths through links and mount points are resolved
// component by component, as Windows does.
type fakeFS struct {
	nodes   map[string]*fnode
	volumes map[string]bool // GUID string -> present
	shares  map[string]bool // lower \\server\share -> reachable
	calls   []string
	// errs injects an error for "Op path" (exact path as passed).
	errs map[string]error
	// noUnprivilegedFlag makes CreateSymlink reject flag 0x2 with
	// ERROR_INVALID_PARAMETER, as Windows before 10 1703 does.
	noUnprivilegedFlag bool
	// noPrivilege makes CreateSymlink fail with ERROR_PRIVILEGE_NOT_HELD.
	noPrivilege bool
}

type fkind int

const (
	kDir fkind = iota
	kFile
	kSymlink
	kJunction
	kMount
)

type fnode struct {
	name     string // the last element, in its original case
	kind     fkind
	readonly bool
	target   string // symlink/junction target as created (Win32 path or relative)
	dirLink  bool   // symlink created with SYMBOLIC_LINK_FLAG_DIRECTORY
	volume   string // mount: {GUID}
}

func newFakeFS() *fakeFS {
	return &fakeFS{nodes: map[string]*fnode{}, volumes: map[string]bool{}, shares: map[string]bool{}, errs: map[string]error{}}
}

func key(p string) string { return strings.ToLower(p) }

// --- set-up helpers (not recorded) ---

func (f *fakeFS) mkdir(p string) { f.nodes[key(p)] = &fnode{name: base(p), kind: kDir} }
func (f *fakeFS) file(p string)  { f.nodes[key(p)] = &fnode{name: base(p), kind: kFile} }
func (f *fakeFS) roFile(p string) {
	f.nodes[key(p)] = &fnode{name: base(p), kind: kFile, readonly: true}
}
func (f *fakeFS) symlink(p, target string, dir bool) {
	f.nodes[key(p)] = &fnode{name: base(p), kind: kSymlink, target: target, dirLink: dir}
}
func (f *fakeFS) junction(p, target string) {
	f.nodes[key(p)] = &fnode{name: base(p), kind: kJunction, target: target}
}

// mount mounts volume guid (created present) at folder p.
func (f *fakeFS) mount(p, guid string) {
	f.volumes[guid] = true
	f.nodes[key(p)] = &fnode{name: base(p), kind: kMount, volume: guid}
}

func volRoot(guid string) string { return `\\?\Volume` + guid }

// isRelative tells whether a symlink target is neither X:... nor \\....
func isRelative(t string) bool {
	return (len(t) < 2 || t[1] != ':') && !strings.HasPrefix(t, `\\`)
}

func base(p string) string { return p[strings.LastIndexByte(p, '\\')+1:] }

func (f *fakeFS) exists(p string) bool { return f.nodes[key(p)] != nil }

func (f *fakeFS) record(op, p string) error {
	f.calls = append(f.calls, op+" "+p)
	return f.errs[op+" "+p]
}

// --- resolution ---

// root splits p into a root that always exists and the elements below.
func (f *fakeFS) root(p string) (string, []string, error) {
	switch {
	case len(p) >= 2 && p[1] == ':':
		return p[:2], elems(p[2:]), nil
	case strings.HasPrefix(strings.ToLower(p), `\\?\volume{`):
		i := strings.IndexByte(p, '}')
		if i < 0 {
			return "", nil, errInvalidName
		}
		if !f.volumes[p[10:i+1]] {
			return "", nil, errFileNotFound
		}
		return p[:i+1], elems(p[i+1:]), nil
	case strings.HasPrefix(p, `\\`):
		parts := strings.SplitN(p[2:], `\`, 3)
		if len(parts) < 2 {
			return "", nil, errBadNetPath
		}
		r := `\\` + parts[0] + `\` + parts[1]
		if !f.shares[key(r)] {
			return "", nil, errBadNetName
		}
		var rest []string
		if len(parts) == 3 {
			rest = elems(parts[2])
		}
		return r, rest, nil
	}
	return "", nil, errInvalidName
}

func elems(s string) []string {
	var out []string
	for _, e := range strings.Split(s, `\`) {
		if e != "" {
			out = append(out, e)
		}
	}
	return out
}

// resolve walks p. It follows links in every element but the last, and in
// the last one too when follow. It returns the canonical path reached and
// its node (nil for a root).
func (f *fakeFS) resolve(p string, follow bool, depth int) (string, *fnode, error) {
	if depth > 16 {
		return "", nil, errCantResolveName
	}
	cur, rest, err := f.root(p)
	if err != nil {
		return "", nil, err
	}
	var n *fnode
	for i, e := range rest {
		last := i == len(rest)-1
		if n != nil && n.kind == kFile {
			return "", nil, errPathNotFound
		}
		cand := cur + `\` + e
		n = f.nodes[key(cand)]
		if n == nil {
			if last {
				return "", nil, errFileNotFound
			}
			return "", nil, errPathNotFound
		}
		cur = cand
		if n.kind >= kSymlink && (!last || follow) {
			t := f.linkTarget(cand, n)
			cur, n, err = f.resolve(t, true, depth+1)
			if err != nil {
				if last {
					return "", nil, errFileNotFound
				}
				return "", nil, errPathNotFound
			}
		}
	}
	return cur, n, nil
}

func (f *fakeFS) linkTarget(p string, n *fnode) string {
	switch n.kind {
	case kMount:
		return volRoot(n.volume)
	case kSymlink:
		if isRelative(n.target) {
			return resolveRelative(parentDir(p), n.target)
		}
	}
	return strings.TrimRight(normalizeTarget(n.target), `\`)
}

func (n *fnode) info() fileInfo {
	var fi fileInfo
	switch n.kind {
	case kDir:
		fi.attrs = attrDirectory
	case kFile:
		fi.attrs = 0x20 // ARCHIVE
	case kSymlink:
		fi.attrs, fi.tag = attrReparsePoint, tagSymlink
		if n.dirLink {
			fi.attrs |= attrDirectory
		}
	case kJunction, kMount:
		fi.attrs, fi.tag = attrReparsePoint|attrDirectory, tagMountPoint
	}
	if n.readonly {
		fi.attrs |= attrReadonly
	}
	return fi
}

// children returns the nodes directly inside the canonical directory dir.
func (f *fakeFS) children(dir string) []string {
	var out []string
	prefix := key(dir) + `\`
	for k := range f.nodes {
		if strings.HasPrefix(k, prefix) && !strings.Contains(k[len(prefix):], `\`) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// --- fsAPI ---

func (f *fakeFS) Lstat(p string) (fileInfo, error) {
	if err := f.record("Lstat", p); err != nil {
		return fileInfo{}, err
	}
	_, n, err := f.resolve(p, false, 0)
	if err != nil {
		return fileInfo{}, err
	}
	if n == nil {
		return fileInfo{attrs: attrDirectory}, nil
	}
	return n.info(), nil
}

func (f *fakeFS) Stat(p string) (fileInfo, error) {
	if err := f.record("Stat", p); err != nil {
		return fileInfo{}, err
	}
	_, n, err := f.resolve(p, true, 0)
	if err != nil {
		return fileInfo{}, err
	}
	if n == nil {
		return fileInfo{attrs: attrDirectory}, nil
	}
	fi := n.info()
	fi.tag = 0
	return fi, nil
}

func (f *fakeFS) ReadDir(p string) ([]dirEntry, error) {
	if err := f.record("ReadDir", p); err != nil {
		return nil, err
	}
	c, n, err := f.resolve(p, true, 0)
	if err != nil {
		return nil, err
	}
	if n != nil && n.kind != kDir {
		return nil, errDirectory
	}
	var out []dirEntry
	for _, k := range f.children(c) {
		out = append(out, dirEntry{name: f.nodes[k].name, info: f.nodes[k].info()})
	}
	return out, nil
}

func (f *fakeFS) ReadReparsePoint(p string) ([]byte, error) {
	if err := f.record("ReadReparsePoint", p); err != nil {
		return nil, err
	}
	_, n, err := f.resolve(p, false, 0)
	if err != nil {
		return nil, err
	}
	if n == nil || n.kind < kSymlink {
		return nil, errNotAReparsePoint
	}
	switch n.kind {
	case kMount:
		return reparseBuffer(tagMountPoint, `\??\Volume`+n.volume+`\`, "", false), nil
	case kJunction:
		return reparseBuffer(tagMountPoint, `\??\`+strings.TrimRight(n.target, `\`)+`\`, n.target, false), nil
	}
	t := n.target
	rel := isRelative(t)
	sub := t
	switch {
	case rel:
	case strings.HasPrefix(t, `\\?\`):
		sub = `\??\` + t[4:]
	case strings.HasPrefix(t, `\\`):
		sub = `\??\UNC\` + t[2:]
	default:
		sub = `\??\` + t
	}
	return reparseBuffer(tagSymlink, sub, t, rel), nil
}

func (f *fakeFS) VolumeNameForMountPoint(p string) (string, error) {
	if err := f.record("VolumeNameForMountPoint", p); err != nil {
		return "", err
	}
	_, n, err := f.resolve(p, false, 0)
	if err != nil {
		return "", err
	}
	if n == nil || n.kind != kMount {
		return "", errNotAReparsePoint
	}
	if !f.volumes[n.volume] {
		return "", errFileNotFound
	}
	return volRoot(n.volume) + `\`, nil
}

func (f *fakeFS) DeleteVolumeMountPoint(p string) error {
	if err := f.record("DeleteVolumeMountPoint", p); err != nil {
		return err
	}
	_, n, err := f.resolve(p, false, 0)
	if err != nil {
		return err
	}
	if n == nil || n.kind != kMount {
		return errNotAReparsePoint
	}
	n.kind, n.volume = kDir, ""
	return nil
}

func (f *fakeFS) RemoveDirectory(p string) error {
	if err := f.record("RemoveDirectory", p); err != nil {
		return err
	}
	c, n, err := f.resolve(p, false, 0)
	switch {
	case err != nil:
		return err
	case n == nil:
		return errAccessDenied // a root
	case n.kind == kFile || n.kind == kSymlink && !n.dirLink:
		return errDirectory
	case n.readonly:
		return errAccessDenied
	case n.kind == kDir && len(f.children(c)) > 0:
		return errDirNotEmpty
	}
	delete(f.nodes, key(c))
	return nil
}

func (f *fakeFS) DeleteFile(p string) error {
	if err := f.record("DeleteFile", p); err != nil {
		return err
	}
	c, n, err := f.resolve(p, false, 0)
	switch {
	case err != nil:
		return err
	case n == nil || n.kind != kFile && (n.kind != kSymlink || n.dirLink):
		return errAccessDenied
	case n.readonly:
		return errAccessDenied
	}
	delete(f.nodes, key(c))
	return nil
}

func (f *fakeFS) SetAttributes(p string, attrs uint32) error {
	if err := f.record("SetAttributes", fmt.Sprintf("%s %#x", p, attrs)); err != nil {
		return err
	}
	_, n, err := f.resolve(p, false, 0)
	if err != nil {
		return err
	}
	if n == nil {
		return errAccessDenied
	}
	n.readonly = attrs&attrReadonly != 0
	return nil
}

func (f *fakeFS) CreateDirectory(p string) error {
	if err := f.record("CreateDirectory", p); err != nil {
		return err
	}
	c, err := f.createAt(p)
	if err != nil {
		return err
	}
	f.nodes[key(c)] = &fnode{name: base(p), kind: kDir}
	return nil
}

func (f *fakeFS) CreateSymlink(link, target string, flags uint32) error {
	if err := f.record("CreateSymlink", fmt.Sprintf("%s -> %s %#x", link, target, flags)); err != nil {
		return err
	}
	switch {
	case f.noUnprivilegedFlag && flags&symlinkAllowUnprivileged != 0:
		return errInvalidParameter
	case f.noPrivilege:
		return errPrivilegeNotHeld
	}
	c, err := f.createAt(link)
	if err != nil {
		return err
	}
	f.nodes[key(c)] = &fnode{name: base(link), kind: kSymlink, target: target, dirLink: flags&symlinkDirectory != 0}
	return nil
}

// createAt returns the canonical path where an entry named p would be
// created: its parent must resolve to a directory and p must not exist.
func (f *fakeFS) createAt(p string) (string, error) {
	c, n, err := f.resolve(parentDir(p), true, 0)
	if err != nil {
		return "", errPathNotFound
	}
	if n != nil && n.kind != kDir {
		return "", errPathNotFound
	}
	full := c + `\` + base(p)
	if f.nodes[key(full)] != nil {
		return "", errAlreadyExists
	}
	return full, nil
}

// reparseBuffer builds a REPARSE_DATA_BUFFER the way NTFS returns it:
// substitute name first, then the print name.
func reparseBuffer(tag uint32, sub, print string, relative bool) []byte {
	s := utf16le(sub)
	pr := utf16le(print)
	var hdr []byte
	if tag == tagSymlink {
		hdr = make([]byte, 12)
		if relative {
			binary.LittleEndian.PutUint32(hdr[8:], symlinkFlagRelative)
		}
	} else {
		hdr = make([]byte, 8)
	}
	binary.LittleEndian.PutUint16(hdr[0:], 0)
	binary.LittleEndian.PutUint16(hdr[2:], uint16(len(s)))
	binary.LittleEndian.PutUint16(hdr[4:], uint16(len(s)+2))
	binary.LittleEndian.PutUint16(hdr[6:], uint16(len(pr)))
	data := append(hdr, s...)
	data = append(data, 0, 0)
	data = append(data, pr...)
	data = append(data, 0, 0)
	b := make([]byte, 8, 8+len(data))
	binary.LittleEndian.PutUint32(b[0:], tag)
	binary.LittleEndian.PutUint16(b[4:], uint16(len(data)))
	return append(b, data...)
}

func utf16le(s string) []byte {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u))
	for i, c := range u {
		binary.LittleEndian.PutUint16(b[2*i:], c)
	}
	return b
}

var _ fsAPI = (*fakeFS)(nil)
var _ = syscall.Errno(0)
