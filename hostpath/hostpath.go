// Package hostpath checks and compares host paths the way the host's
// operating system reads them, whatever OS the proxy itself runs on.
//
// A Windows host (the Windows backend and the simulated host) uses drive
// letter paths such as C:\var\lib\kubelet, compared case-insensitively; a
// Linux host uses /var/lib/kubelet, compared exactly. Every path a caller
// sends passes through a Style's Clean, and every path that must stay inside
// the proxy's working directories through a Policy, so the rules live here
// once instead of in each group and backend.
package hostpath

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/printable"
)

// Style is a family of path rules.
type Style int

const (
	// Windows paths: X:\dir\file, separator \ (/ is accepted and turned into
	// \), case-insensitive.
	Windows Style = iota + 1
	// POSIX paths: /dir/file, separator /, case-sensitive.
	POSIX
)

// String names the style.
func (s Style) String() string {
	switch s {
	case Windows:
		return "windows"
	case POSIX:
		return "posix"
	}
	return fmt.Sprintf("Style(%d)", int(s))
}

// Longest accepted path, in bytes of UTF-8: Windows' extended path limit,
// and Linux's PATH_MAX (4096) less the NUL that ends it in the kernel.
const (
	maxWindowsPath = 32767
	maxPOSIXPath   = 4095
)

// Longest accepted path element: Linux's NAME_MAX counts bytes, NTFS and
// ReFS count UTF-16 code units. A longer element would reach a backend and
// fail there with ENAMETOOLONG or ERROR_FILENAME_EXCED_RANGE, which is the
// caller's mistake, not the host's: refuse it here as InvalidArgument.
const (
	maxPOSIXElement   = 255
	maxWindowsElement = 255
)

// Separator returns the style's path separator.
func (s Style) Separator() byte {
	if s == Windows {
		return '\\'
	}
	return '/'
}

// Clean checks that p is an absolute local path of the style and returns it
// in canonical form: separators unified, repeated separators collapsed, "."
// elements and a trailing separator removed, and on Windows the drive letter
// upper-cased. It rejects, with an error wrapping errdefs.ErrInvalidArgument,
// the empty path, relative paths, ".." elements, NUL and control characters,
// overlong paths, and on Windows UNC (\\server\share), device (\\.\, \\?\)
// and drive-relative (C:dir) paths and the characters <>"|?* . Text that
// is not printable (invalid UTF-8, C0 and C1 controls, DEL, line
// separators, bidirectional controls) is refused as package printable
// says. An element may be at most 255 bytes long on POSIX and 255 UTF-16
// code units on Windows.
func (s Style) Clean(p string) (string, error) {
	if p == "" {
		return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "path is empty")
	}
	if err := printable.Check("path", p); err != nil {
		return "", err
	}
	switch s {
	case Windows:
		return cleanWindows(p)
	case POSIX:
		return cleanPOSIX(p)
	}
	return "", fmt.Errorf("hostpath: unknown style %d", int(s))
}

func cleanWindows(p string) (string, error) {
	if alreadyCleanWindows(p) {
		return p, nil
	}
	return cleanWindowsFull(p)
}

// alreadyCleanWindows tells, without allocating, whether cleanWindowsFull
// would return p itself: an upper-case drive, backslashes only, no empty,
// "." or ".." element, no trailing separator, and every element valid.
// Nearly every path a driver sends is already clean, and the daemon
// cleans each path more than once per call (the group's validation, the
// policy, the host), so this fast path is worth its second copy of the
// rules; anything it is unsure of goes to cleanWindowsFull, which stays
// the definition (FuzzWindowsClean checks that the two agree).
func alreadyCleanWindows(p string) bool {
	if len(p) < 3 || len(p) > maxWindowsPath || p[0] < 'A' || p[0] > 'Z' || p[1] != ':' || p[2] != '\\' {
		return false
	}
	rest := p[3:]
	if rest == "" {
		return true
	}
	if strings.ContainsAny(rest, `<>:"|?*/`) {
		return false
	}
	for {
		e, after, more := strings.Cut(rest, `\`)
		switch {
		case e == "", e == ".", e == "..", more && after == "":
			return false
		case len(e) > maxWindowsElement && utf16Len(e) > maxWindowsElement:
			return false
		case e[len(e)-1] == '.' || e[len(e)-1] == ' ':
			return false
		case isReservedDeviceName(e):
			return false
		}
		if !more {
			return true
		}
		rest = after
	}
}

// utf16Len is len(utf16.Encode([]rune(s))) without the two copies.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// cleanWindowsFull is Clean for Windows paths: every rule, and the
// canonical error for each.
func cleanWindowsFull(p string) (string, error) {
	if len(p) > maxWindowsPath {
		return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "path is %d bytes long, the limit is %d", len(p), maxWindowsPath)
	}
	q := strings.ReplaceAll(p, "/", `\`)
	if strings.HasPrefix(q, `\\`) {
		return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "path %s is a UNC or device path; a drive letter path such as C:\\dir is expected", printable.Quote(p))
	}
	if len(q) < 3 || !isLetter(q[0]) || q[1] != ':' || q[2] != '\\' {
		return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "path %s is not an absolute Windows path (want a drive letter path such as C:\\dir)", printable.Quote(p))
	}
	rest := q[3:]
	if i := strings.IndexAny(rest, `<>:"|?*`); i >= 0 {
		return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "path %s contains the character %q, which Windows does not allow in names", printable.Quote(p), rest[i])
	}
	elems, err := elements(p, rest, '\\')
	if err != nil {
		return "", err
	}
	for _, e := range elems {
		if n := utf16Len(e); n > maxWindowsElement {
			return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "path %s has an element of %d UTF-16 code units; Windows allows %d", printable.Quote(p), n, maxWindowsElement)
		}
		// Windows drops trailing dots and spaces from names, so "dir." and
		// "dir " would silently name "dir": refuse them.
		if strings.HasSuffix(e, ".") || strings.HasSuffix(e, " ") {
			return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "path %s has an element %q ending in a dot or space", printable.Quote(p), e)
		}
		if isReservedDeviceName(e) {
			return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "path %s has an element %q that Windows reads as a device (CON, NUL, COM1, ...), not a file", printable.Quote(p), e)
		}
	}
	return strings.ToUpper(q[:1]) + `:\` + strings.Join(elems, `\`), nil
}

func cleanPOSIX(p string) (string, error) {
	if len(p) > maxPOSIXPath {
		return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "path is %d bytes long, the limit is %d", len(p), maxPOSIXPath)
	}
	if p[0] != '/' {
		return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "path %s is not absolute", printable.Quote(p))
	}
	elems, err := elements(p, p[1:], '/')
	if err != nil {
		return "", err
	}
	for _, e := range elems {
		if len(e) > maxPOSIXElement {
			return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "path %s has an element of %d bytes; the limit is %d (NAME_MAX)", printable.Quote(p), len(e), maxPOSIXElement)
		}
	}
	return "/" + strings.Join(elems, "/"), nil
}

// elements splits rest on sep, dropping empty and "." elements and refusing
// "..".
func elements(orig, rest string, sep byte) ([]string, error) {
	var out []string
	for _, e := range strings.Split(rest, string(sep)) {
		switch e {
		case "", ".":
			continue
		case "..":
			return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "path %s contains a \"..\" element", printable.Quote(orig))
		}
		out = append(out, e)
	}
	return out, nil
}

// isReservedDeviceName tells whether Windows maps a path element to a
// device whatever directory it is in: CON, PRN, AUX, NUL, COM0-9 and
// LPT0-9 (also with the superscript digits ¹²³), with or without an
// extension ("NUL.txt" is NUL too).
func isReservedDeviceName(e string) bool {
	// Every reserved name starts with C, P, A, N or L, and no other
	// character upper-cases to one of those (checked over all of
	// Unicode when this was written): most elements are decided here.
	if e == "" || !strings.ContainsRune("CcPpAaNnLl", rune(e[0])) {
		return false
	}
	base, _, _ := strings.Cut(e, ".")
	base = strings.TrimRight(base, " ")
	// Upper-case rune by rune (as strings.ToUpper does) into a buffer as
	// long as the longest name, CONOUT$, so that no element allocates.
	var up [7]rune
	n := 0
	for _, r := range base {
		if n == len(up) {
			return false
		}
		up[n] = unicode.ToUpper(r)
		n++
	}
	name := up[:n]
	for _, reserved := range []string{"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"} {
		if runesEqual(name, reserved) {
			return true
		}
	}
	if n == 4 && (runesEqual(name[:3], "COM") || runesEqual(name[:3], "LPT")) {
		switch name[3] {
		case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '¹', '²', '³':
			return true
		}
	}
	return false
}

// runesEqual tells whether rs spells s.
func runesEqual(rs []rune, s string) bool {
	i := 0
	for _, r := range s {
		if i >= len(rs) || rs[i] != r {
			return false
		}
		i++
	}
	return i == len(rs)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// Equal tells whether two cleaned paths name the same file under the
// style's rules.
func (s Style) Equal(a, b string) bool {
	if s == Windows {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// Within tells whether the cleaned path p is root or lies below it. The
// comparison stops at a separator boundary, so C:\var\lib\kubelet-x is not
// within C:\var\lib\kubelet.
func (s Style) Within(p, root string) bool {
	if len(p) < len(root) || !s.Equal(p[:len(root)], root) {
		return false
	}
	if len(p) == len(root) {
		return true
	}
	if root[len(root)-1] == s.Separator() { // a root such as C:\ or /
		return true
	}
	return p[len(root)] == s.Separator()
}

// Dir returns the parent of a cleaned path, or the path itself for a root.
func (s Style) Dir(p string) string {
	i := strings.LastIndexByte(p, s.Separator())
	switch {
	case i < 0:
		return p
	case s == Windows && i == 2, s == POSIX && i == 0:
		return p[:i+1]
	}
	return p[:i]
}

// Base returns the last element of a cleaned path, or "" for a root.
func (s Style) Base(p string) string {
	if s.Dir(p) == p {
		return ""
	}
	return p[strings.LastIndexByte(p, s.Separator())+1:]
}

// Join appends a name to a cleaned directory path.
func (s Style) Join(dir, name string) string {
	if dir[len(dir)-1] == s.Separator() {
		return dir + name
	}
	return dir + string(s.Separator()) + name
}

// IsRoot tells whether a cleaned path is a filesystem root (C:\ or /).
func (s Style) IsRoot(p string) bool { return s.Dir(p) == p }

// Policy is the set of directories callers may touch: the kubelet directory
// and every -working-dir.
type Policy struct {
	style Style
	roots []string
}

// NewPolicy cleans the roots under style and returns the policy. A root that
// is not an absolute path of the style is an error.
func NewPolicy(style Style, roots []string) (*Policy, error) {
	p := &Policy{style: style}
	for _, r := range roots {
		c, err := style.Clean(r)
		if err != nil {
			return nil, fmt.Errorf("working dir %q: %w", r, err)
		}
		p.roots = append(p.roots, c)
	}
	return p, nil
}

// Style returns the policy's path style.
func (p *Policy) Style() Style { return p.style }

// Roots returns the cleaned working directories.
func (p *Policy) Roots() []string { return append([]string(nil), p.roots...) }

// Check cleans path and confirms it lies inside a working directory. The
// error wraps errdefs.ErrInvalidArgument for a malformed path and
// errdefs.ErrPermissionDenied for one outside every working directory.
// field names the request field in messages ("path", "target_path").
//
// Under the Windows style a drive-less rooted path (\var\lib\kubelet\x or
// /var/lib/kubelet/x, but not \\server\share or \\?\ forms) first gets a
// drive (see WithDrive); then it is checked like any other path.
func (p *Policy) Check(field, path string) (string, error) {
	c, err := p.style.Clean(p.WithDrive(path))
	if err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	for _, r := range p.roots {
		if p.style.Within(c, r) {
			return c, nil
		}
	}
	return "", errdefs.Errorf(errdefs.ErrPermissionDenied, "%s %s is outside the working directories %v", field, printable.Quote(path), p.roots)
}

// CheckBelow is Check for a path that must lie strictly below a working
// directory: the object of a removal, a mount or unmount target, and where
// a link is created. Removing a working directory, mounting over it or
// replacing it with a link would hide or destroy everything kubelet keeps
// in it, so a working directory itself is refused with
// errdefs.ErrPermissionDenied, as a path outside them is.
func (p *Policy) CheckBelow(field, path string) (string, error) {
	c, err := p.Check(field, path)
	if err != nil {
		return "", err
	}
	for _, r := range p.roots {
		if p.style.Equal(c, r) {
			return "", errdefs.Errorf(errdefs.ErrPermissionDenied, "%s %s is a working directory itself (%s); only paths below it may be removed, mounted on or linked", field, printable.Quote(path), r)
		}
	}
	return c, nil
}

// WithDrive gives a drive-less rooted Windows path a drive letter, and
// returns any other path unchanged. EKS kubelets run with a root dir
// without a drive (\var\lib\kubelet, aws-ebs-csi-driver#2100), and gcp-pd
// and azuredisk pass kubelet's paths on as they are; Win32 resolves such a
// path on the process's current drive, and k8s mount-utils'
// NormalizeWindowsPath prefixes "c:". Neither is known to be the drive
// kubelet meant, so the path gets the drive of the first working
// directory it lies in once given that drive (the kubelet directory, for
// kubelet's paths), or, when it lies in none, the first working
// directory's drive, so that the check refuses it as outside. Two leading
// separators (UNC \\server\share, device \\?\ and \\.\ paths, in either
// slash) are not drive-less and stay as they are, for Clean to refuse.
// Check applies it to every path; the authorization policy applies it
// too, so that a rule's path roots judge the path the services act on.
func (p *Policy) WithDrive(path string) string {
	if p.style != Windows || len(p.roots) == 0 || !isDriveLessRooted(path) {
		return path
	}
	for _, r := range p.roots {
		withDrive := r[:2] + path
		if c, err := Windows.Clean(withDrive); err == nil && Windows.Within(c, r) {
			return withDrive
		}
	}
	return p.roots[0][:2] + path
}

// isDriveLessRooted tells whether a Windows path starts with exactly one
// separator (\ or /): rooted on the current drive.
func isDriveLessRooted(path string) bool {
	isSep := func(c byte) bool { return c == '\\' || c == '/' }
	return len(path) > 0 && isSep(path[0]) && (len(path) == 1 || !isSep(path[1]))
}
