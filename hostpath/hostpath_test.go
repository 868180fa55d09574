package hostpath

import (
	"errors"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

func TestCleanWindows(t *testing.T) {
	good := map[string]string{
		`C:\var\lib\kubelet`:                    `C:\var\lib\kubelet`,
		`c:\var\lib\kubelet\`:                   `C:\var\lib\kubelet`,
		`c:/var/lib//kubelet/./pod`:             `C:\var\lib\kubelet\pod`,
		`D:\`:                                   `D:\`,
		`C:\` + strings.Repeat(`a\`, 200) + `b`: `C:\` + strings.Repeat(`a\`, 200) + `b`,
	}
	for in, want := range good {
		got, err := Windows.Clean(in)
		if err != nil || got != want {
			t.Errorf("Clean(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := []string{"", `var\lib`, `C:var`, `\\server\share\x`, `\\?\C:\x`, `\\.\pipe\x`,
		`\var\lib`, `C:\a\..\b`, `C:\a\b:c`, `C:\a*`, `C:\a?`, `C:\a|b`, `C:\a<b`, `C:\a"b`,
		"C:\\a\x00b", "C:\\a\nb", `C:\x\NUL`, `C:\x\nul.txt`, `C:\x\COM1`, `C:\x\lpt9.log`, `C:\CON\x`, `C:\x\AUX `, `C:\x\COM²`, `C:\dir.\x`, `C:\dir \x`, `1:\x`, "C:\\\xff",
		`C:\` + strings.Repeat("a", maxWindowsPath)}
	for _, in := range bad {
		if got, err := Windows.Clean(in); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("Clean(%q) = %q, %v; want an invalid-argument error", in, got, err)
		}
	}
}

func TestCleanPOSIX(t *testing.T) {
	good := map[string]string{"/var/lib/kubelet/": "/var/lib/kubelet", "//a/./b": "/a/b", "/": "/"}
	for in, want := range good {
		got, err := POSIX.Clean(in)
		if err != nil || got != want {
			t.Errorf("Clean(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "a/b", "/a/../b", "/a\x00", "/" + strings.Repeat("a", maxPOSIXPath)} {
		if got, err := POSIX.Clean(in); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("Clean(%q) = %q, %v; want an invalid-argument error", in, got, err)
		}
	}
}

func TestWithinStopsAtSeparator(t *testing.T) {
	cases := []struct {
		s       Style
		p, root string
		want    bool
	}{
		{Windows, `C:\var\lib\kubelet`, `C:\var\lib\kubelet`, true},
		{Windows, `C:\VAR\Lib\kubelet\pods`, `C:\var\lib\kubelet`, true},
		{Windows, `C:\var\lib\kubelet-x`, `C:\var\lib\kubelet`, false},
		{Windows, `C:\var\lib`, `C:\var\lib\kubelet`, false},
		{Windows, `D:\var\lib\kubelet`, `C:\var\lib\kubelet`, false},
		{Windows, `C:\anything`, `C:\`, true},
		{POSIX, "/var/lib/kubelet/pods", "/var/lib/kubelet", true},
		{POSIX, "/var/lib/kubelet-x", "/var/lib/kubelet", false},
		{POSIX, "/VAR/lib/kubelet", "/var/lib/kubelet", false},
		{POSIX, "/x", "/", true},
	}
	for _, c := range cases {
		if got := c.s.Within(c.p, c.root); got != c.want {
			t.Errorf("%v.Within(%q, %q) = %v, want %v", c.s, c.p, c.root, got, c.want)
		}
	}
}

func TestDirBaseJoin(t *testing.T) {
	if d := Windows.Dir(`C:\a\b`); d != `C:\a` {
		t.Errorf("Dir = %q", d)
	}
	if d := Windows.Dir(`C:\a`); d != `C:\` {
		t.Errorf("Dir = %q", d)
	}
	if d := Windows.Dir(`C:\`); d != `C:\` {
		t.Errorf("Dir of root = %q", d)
	}
	if d := POSIX.Dir("/a"); d != "/" {
		t.Errorf("Dir = %q", d)
	}
	if b := Windows.Base(`C:\a\b`); b != "b" {
		t.Errorf("Base = %q", b)
	}
	if b := Windows.Base(`C:\`); b != "" {
		t.Errorf("Base of root = %q", b)
	}
	if j := Windows.Join(`C:\`, "a"); j != `C:\a` {
		t.Errorf("Join = %q", j)
	}
	if j := POSIX.Join("/a", "b"); j != "/a/b" {
		t.Errorf("Join = %q", j)
	}
}

func TestPolicyCheck(t *testing.T) {
	p, err := NewPolicy(Windows, []string{`C:\var\lib\kubelet`, `c:/csi`})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.Check("path", `c:\csi\x`); err != nil || got != `C:\csi\x` {
		t.Errorf("Check inside = %q, %v", got, err)
	}
	if _, err := p.Check("path", `C:\var\lib\kubelet-x\y`); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("Check of a sibling with the same prefix: %v, want permission denied", err)
	}
	if _, err := p.Check("path", `C:\var\..\x`); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("Check of a traversal: %v, want invalid argument", err)
	}
	if _, err := NewPolicy(Windows, []string{"relative"}); err == nil {
		t.Error("NewPolicy accepted a relative working dir")
	}
}

// TestCleanLimits: the element limit counts bytes on POSIX (NAME_MAX) and
// UTF-16 code units on Windows; the whole path is at most PATH_MAX less
// its NUL on POSIX.
func TestCleanLimits(t *testing.T) {
	for _, c := range []struct {
		s  Style
		in string
		ok bool
	}{
		{POSIX, "/a/" + strings.Repeat("n", 255), true},
		{POSIX, "/a/" + strings.Repeat("n", 256), false},
		{POSIX, "/a/" + strings.Repeat("é", 127), true},          // 254 bytes
		{POSIX, "/a/" + strings.Repeat("é", 128), false},         // 256 bytes
		{POSIX, "/" + strings.Repeat("a/", 2046) + "bc", true},   // 4095 bytes
		{POSIX, "/" + strings.Repeat("a/", 2046) + "bcd", false}, // 4096 bytes
		{Windows, `C:\a\` + strings.Repeat("n", 255), true},
		{Windows, `C:\a\` + strings.Repeat("n", 256), false},
		{Windows, `C:\a\` + strings.Repeat("é", 255), true},  // 510 bytes, 255 units
		{Windows, `C:\a\` + strings.Repeat("😀", 127), true},  // 254 units
		{Windows, `C:\a\` + strings.Repeat("😀", 128), false}, // 256 units
	} {
		_, err := c.s.Clean(c.in)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("%v Clean(%d bytes) = %v, want ok %v", c.s, len(c.in), err, c.ok)
		}
	}
}

// TestCleanRefusesNonPrintable: C1 controls, line separators and
// bidirectional controls in either style, with a message that names the
// path and is printable itself.
func TestCleanRefusesNonPrintable(t *testing.T) {
	for _, bad := range []string{"\u0085", "\u009b", "\u2028", "\u202e", "\u2066", "\xff", "\xc0\xae"} {
		for _, c := range []struct {
			s  Style
			in string
		}{{POSIX, "/var/lib/kubelet/a" + bad + "b"}, {Windows, `C:\var\a` + bad + "b"}} {
			_, err := c.s.Clean(c.in)
			if !errors.Is(err, errdefs.ErrInvalidArgument) {
				t.Errorf("%v Clean(%q) = %v, want InvalidArgument", c.s, c.in, err)
				continue
			}
			if strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "path ") {
				t.Errorf("%v Clean(%q): message %q", c.s, c.in, err)
			}
		}
	}
}

// TestPolicyCheckBelow: a working directory itself, however spelt, is
// refused with PermissionDenied; paths below it pass as Check returns
// them; malformed and outside paths fail as in Check.
func TestPolicyCheckBelow(t *testing.T) {
	p, err := NewPolicy(POSIX, []string{"/var/lib/kubelet", "/var/lib/kubelet/plugins", "/csi"})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"/var/lib/kubelet", "/var/lib/kubelet/", "//var/lib/kubelet/.", "/var/lib/kubelet/plugins//", "/csi"} {
		if _, err := p.CheckBelow("target_path", in); !errors.Is(err, errdefs.ErrPermissionDenied) || !strings.Contains(err.Error(), "target_path") {
			t.Errorf("CheckBelow(%q) = %v, want PermissionDenied naming the field", in, err)
		}
	}
	if got, err := p.CheckBelow("target_path", "/var/lib/kubelet/plugins/x/"); err != nil || got != "/var/lib/kubelet/plugins/x" {
		t.Errorf("CheckBelow below a working dir = %q, %v", got, err)
	}
	if _, err := p.CheckBelow("target_path", "/etc"); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("CheckBelow(/etc) = %v", err)
	}
	if _, err := p.CheckBelow("target_path", "/csi/../etc"); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("CheckBelow of a traversal = %v", err)
	}
	w, err := NewPolicy(Windows, []string{`C:\var\lib\kubelet`})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.CheckBelow("path", `c:/VAR/lib/Kubelet/`); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("Windows CheckBelow of the working dir in another case = %v", err)
	}
}

// TestPolicyDriveLessPaths: EKS kubelets use a root dir without a drive
// letter (\var\lib\kubelet, aws-ebs-csi-driver#2100), and gcp-pd and
// azuredisk pass kubelet's paths on unchanged (MountVolume, IsSymlink,
// GetVolumeIDFromTargetPath). Win32 resolves such a rooted path on the
// current drive; the Policy gives it the drive of the working directory it
// names (k8s mount-utils' NormalizeWindowsPath prefixes a drive too) and
// then checks it as any other path. UNC and device paths stay refused.
func TestPolicyDriveLessPaths(t *testing.T) {
	pol, err := NewPolicy(Windows, []string{`D:\csi`, `C:\var\lib\kubelet`})
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		`\var\lib\kubelet\pods\p\volumes`: `C:\var\lib\kubelet\pods\p\volumes`,
		`/var/lib/kubelet/plugins/x`:      `C:\var\lib\kubelet\plugins\x`,
		`\VAR\lib\kubelet`:                `C:\VAR\lib\kubelet`,
		`\csi\x`:                          `D:\csi\x`,
	} {
		if got, err := pol.Check("path", in); err != nil || got != want {
			t.Errorf("Check(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := pol.CheckBelow("path", `\var\lib\kubelet`); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("CheckBelow(drive-less working dir) = %v; want permission denied", err)
	}
	for in, kind := range map[string]error{
		`\Windows\System32`:        errdefs.ErrPermissionDenied,
		`\var\lib\kubelet-x`:       errdefs.ErrPermissionDenied,
		`\var\lib\kubelet\..\..\x`: errdefs.ErrInvalidArgument,
		`\\server\share\x`:         errdefs.ErrInvalidArgument,
		`//server/share/x`:         errdefs.ErrInvalidArgument,
		`\/server\share`:           errdefs.ErrInvalidArgument,
		`\\?\C:\var\lib\kubelet\x`: errdefs.ErrInvalidArgument,
		`\\.\C:\var\lib\kubelet\x`: errdefs.ErrInvalidArgument,
		`\??\C:\var\lib\kubelet\x`: errdefs.ErrInvalidArgument,
		`\`:                        errdefs.ErrPermissionDenied,
		`var\lib\kubelet`:          errdefs.ErrInvalidArgument,
	} {
		if got, err := pol.Check("path", in); !errors.Is(err, kind) {
			t.Errorf("Check(%q) = %q, %v; want %v", in, got, err, kind)
		}
	}
	// A POSIX policy has no drives: nothing changes there.
	posix, err := NewPolicy(POSIX, []string{"/var/lib/kubelet"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := posix.Check("path", `\var\lib\kubelet`); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("POSIX Check(backslash path) = %v; want invalid argument", err)
	}
}
