package hostpath

import (
	"errors"
	"path"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// The seed corpora in testdata/fuzz/ hold the hostile-input suite's paths
// (test/hostile, TestFuzzCorpus writes them); the f.Add seeds are good
// paths.

func FuzzPOSIXClean(f *testing.F) {
	for _, s := range []string{"/", "/var/lib/kubelet", "/var/lib/kubelet/pods/x/", "//var//lib/./kubelet"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) { checkClean(t, POSIX, p) })
}

func FuzzWindowsClean(f *testing.F) {
	for _, s := range []string{`C:\`, `c:/var/lib/kubelet`, `C:\var\lib\kubelet\pods\x\`, `D:\a\.\b`,
		`C:\var\lib\kubelet`, `C:\lib\NUL.txt`, `C:\a.`, `C:\a \b`, `C:\com¹`, `C:\ſ`, `C:\a\\b`, `C:\..`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		checkClean(t, Windows, p)
		checkFastPathAgrees(t, p)
	})
}

// checkFastPathAgrees checks that alreadyCleanWindows accepts only what
// cleanWindowsFull, the definition, returns unchanged.
func checkFastPathAgrees(t *testing.T, p string) {
	if !alreadyCleanWindows(p) {
		return
	}
	if c, err := cleanWindowsFull(p); err != nil || c != p {
		t.Fatalf("alreadyCleanWindows(%q) is true, but cleanWindowsFull = %q, %v", p, c, err)
	}
}

// BenchmarkCleanWindowsClean is the common case: a driver's staging path,
// already clean.
func BenchmarkCleanWindowsClean(b *testing.B) {
	const p = `C:\var\lib\kubelet\plugins\example.csi.io\staging`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Windows.Clean(p); err != nil {
			b.Fatal(err)
		}
	}
}

// checkClean checks Clean's contract on one input: it never panics; a
// refusal is errdefs.ErrInvalidArgument and nothing else; an accepted path
// is absolute, canonical (Clean(Clean(p)) == Clean(p)), names what p names
// (path.Clean's answer, with the style's separator and drive letter), and
// holds no "..", "." or empty element, no invalid UTF-8, no control
// character, nothing over the length limits (the whole path, and 255 bytes
// per element on POSIX, 255 UTF-16 code units on Windows), and on Windows none of the
// characters and names Windows reads otherwise.
func checkClean(t *testing.T, s Style, p string) {
	c, err := s.Clean(p)
	if err != nil {
		if !errors.Is(err, errdefs.ErrInvalidArgument) || errors.Is(err, errdefs.ErrPermissionDenied) {
			t.Fatalf("Clean(%q) error %v: want only errdefs.ErrInvalidArgument", p, err)
		}
		if c != "" {
			t.Fatalf("Clean(%q) = %q with error %v", p, c, err)
		}
		return
	}
	again, err := s.Clean(c)
	if err != nil || again != c {
		t.Fatalf("Clean(%q) = %q, but Clean(%q) = %q, %v: not idempotent", p, c, c, again, err)
	}
	if !utf8.ValidString(c) {
		t.Fatalf("Clean(%q) = %q: not UTF-8", p, c)
	}
	for _, r := range c {
		if unicode.IsControl(r) {
			t.Fatalf("Clean(%q) = %q: holds the control character %U", p, c, r)
		}
	}
	limit := maxPOSIXPath
	if s == Windows {
		limit = maxWindowsPath
	}
	if len(c) > limit {
		t.Fatalf("Clean(%q) = %d bytes, over the limit %d", p, len(c), limit)
	}
	var rest, want string
	switch s {
	case POSIX:
		if !strings.HasPrefix(c, "/") {
			t.Fatalf("Clean(%q) = %q: not absolute", p, c)
		}
		rest, want = c[1:], path.Clean(p)
	case Windows:
		if len(c) < 3 || c[0] < 'A' || c[0] > 'Z' || c[1] != ':' || c[2] != '\\' || strings.Contains(c, "/") {
			t.Fatalf("Clean(%q) = %q: not a drive letter path with an upper-case drive", p, c)
		}
		rest = c[3:]
		if strings.ContainsAny(rest, `<>:"|?*`) {
			t.Fatalf("Clean(%q) = %q: holds a character Windows does not allow in names", p, c)
		}
		q := strings.ReplaceAll(p, `\`, "/")
		want = strings.ToUpper(q[:1]) + ":" + strings.ReplaceAll(path.Clean(q[2:]), "/", `\`)
	}
	if c != want {
		t.Fatalf("Clean(%q) = %q, want %q (the same path, cleaned)", p, c, want)
	}
	if rest == "" {
		return // the root
	}
	for _, e := range strings.Split(rest, string(s.Separator())) {
		switch {
		case e == "" || e == "." || e == "..":
			t.Fatalf("Clean(%q) = %q: holds the element %q", p, c, e)
		case s == POSIX && len(e) > 255:
			t.Fatalf("Clean(%q): an element of %d bytes, over NAME_MAX", p, len(e))
		case s == Windows && len(utf16.Encode([]rune(e))) > 255:
			t.Fatalf("Clean(%q): an element of %d UTF-16 code units, over 255", p, len(utf16.Encode([]rune(e))))
		case s == Windows && (strings.HasSuffix(e, ".") || strings.HasSuffix(e, " ")):
			t.Fatalf("Clean(%q) = %q: element %q ends in a dot or space, which Windows drops", p, c, e)
		case s == Windows && windowsDevice(e):
			t.Fatalf("Clean(%q) = %q: element %q is a Windows device name", p, c, e)
		}
	}
}

// windowsDevice tells whether Windows reads a path element as a device,
// written independently of isReservedDeviceName: the part before the first
// dot, without trailing spaces, is CON, PRN, AUX, NUL, CONIN$, CONOUT$, or
// COM or LPT and one digit (superscript digits too), in any case.
func windowsDevice(e string) bool {
	base := strings.ToUpper(strings.TrimRight(strings.SplitN(e, ".", 2)[0], " "))
	for _, d := range []string{"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"} {
		if base == d {
			return true
		}
	}
	for _, pre := range []string{"COM", "LPT"} {
		if n, ok := strings.CutPrefix(base, pre); ok && (len(n) == 1 && n[0] >= '0' && n[0] <= '9' || n == "¹" || n == "²" || n == "³") {
			return true
		}
	}
	return false
}

// The working directories FuzzPolicyCheck confines to.
var (
	fuzzPOSIXRoots   = []string{"/var/lib/kubelet", "/var/lib/csi"}
	fuzzWindowsRoots = []string{`C:\var\lib\kubelet`, `d:\csi`}
)

// FuzzPolicyCheck checks Policy.Check against Clean and an element-wise
// containment test written independently of Style.Within: a path is
// accepted iff it cleans and lies in a working directory, and then Check
// returns the cleaned path; a path that does not clean is
// ErrInvalidArgument, one outside is ErrPermissionDenied, never both, never
// another kind.
func FuzzPolicyCheck(f *testing.F) {
	for _, s := range []string{"/var/lib/kubelet/pods/x", "/var/lib/kubelet-x", `C:\var\lib\kubelet\pods`, `C:\var\lib\kubelet-x`} {
		f.Add(strings.HasPrefix(s, "C:"), s)
	}
	// Drive-less rooted paths, as EKS kubelets send them, and the UNC and
	// device forms that must not pass for them.
	for _, s := range []string{`\var\lib\kubelet\pods\x`, "/var/lib/kubelet/pods/x", `\csi\x`, `\`, `\/server\share`, `/\?\C:\x`, `\??\C:\var\lib\kubelet`} {
		f.Add(true, s)
	}
	f.Fuzz(func(t *testing.T, windows bool, p string) {
		style, roots := POSIX, fuzzPOSIXRoots
		if windows {
			style, roots = Windows, fuzzWindowsRoots
		}
		pol, err := NewPolicy(style, roots)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pol.Check("path", p)
		cleaned, cerr := style.Clean(withDriveOracle(style, p, pol.Roots()))
		ia, pd := errors.Is(err, errdefs.ErrInvalidArgument), errors.Is(err, errdefs.ErrPermissionDenied)
		switch {
		case err != nil && got != "":
			t.Fatalf("Check(%q) = %q with error %v", p, got, err)
		case err != nil && ia == pd:
			t.Fatalf("Check(%q) error %v: want exactly one of InvalidArgument and PermissionDenied", p, err)
		case cerr != nil:
			if !ia {
				t.Fatalf("Check(%q) = %q, %v; Clean refuses it (%v): want InvalidArgument", p, got, err, cerr)
			}
		case insideAny(style, cleaned, pol.Roots()):
			if err != nil || got != cleaned {
				t.Fatalf("Check(%q) = %q, %v; want %q: it lies in a working directory", p, got, err, cleaned)
			}
			if !style.Within(got, rootOf(style, got, pol.Roots())) {
				t.Fatalf("Check(%q) = %q, which Within does not place in its root", p, got)
			}
		default:
			if !pd {
				t.Fatalf("Check(%q) = %q, %v; %q is outside %v: want PermissionDenied", p, got, err, cleaned, pol.Roots())
			}
		}
	})
}

// withDriveOracle is what Policy.Check should clean, written
// independently of WithDrive: on Windows a path that starts with exactly
// one separator (either slash) gets the drive of the first root that
// holds it once given that drive, or else the first root's drive; any
// other path is taken as it is.
func withDriveOracle(s Style, p string, roots []string) string {
	q := strings.ReplaceAll(p, "/", `\`)
	if s != Windows || !strings.HasPrefix(q, `\`) || strings.HasPrefix(q, `\\`) {
		return p
	}
	for _, r := range roots {
		if c, err := s.Clean(r[:2] + p); err == nil && insideAny(s, c, []string{r}) {
			return r[:2] + p
		}
	}
	return roots[0][:2] + p
}

// insideAny tells whether the cleaned path c lies in one of the cleaned
// roots: the root's elements are the first elements of c, compared exactly
// on POSIX and with ASCII letters folded on Windows (NTFS folds more, but
// never a non-ASCII character onto an ASCII one, which is what a root of
// ASCII names could be matched by).
func insideAny(s Style, c string, roots []string) bool {
	return rootOf(s, c, roots) != ""
}

func rootOf(s Style, c string, roots []string) string {
	split := func(p string) []string {
		var out []string
		for _, e := range strings.Split(p, string(s.Separator())) {
			if e != "" {
				out = append(out, e)
			}
		}
		return out
	}
	eq := func(a, b string) bool {
		if s == POSIX {
			return a == b
		}
		return asciiFold(a) == asciiFold(b)
	}
	pe := split(c)
next:
	for _, r := range roots {
		re := split(r)
		if len(re) > len(pe) {
			continue
		}
		for i := range re {
			if !eq(re[i], pe[i]) {
				continue next
			}
		}
		return r
	}
	return ""
}

func asciiFold(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// reservedByToUpper is isReservedDeviceName's rule as first written,
// with strings.ToUpper: the reference the allocation-free version must
// match.
func reservedByToUpper(e string) bool {
	base, _, _ := strings.Cut(e, ".")
	base = strings.ToUpper(strings.TrimRight(base, " "))
	switch base {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(base) >= 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) {
		switch base[3:] {
		case "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
			return true
		}
	}
	return false
}

func FuzzReservedDeviceName(f *testing.F) {
	for _, s := range []string{"CON", "con.txt", "Nul  .x", "COM¹", "lpt9", "LPT10", "CONOUT$", "conin$.a",
		"COM", "lib", "plugins", "ſ", "CONıN$", "AUX ", "a", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, e string) {
		if got, want := isReservedDeviceName(e), reservedByToUpper(e); got != want {
			t.Fatalf("isReservedDeviceName(%q) = %v, the ToUpper rule says %v", e, got, want)
		}
	})
}
