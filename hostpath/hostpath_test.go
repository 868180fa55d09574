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
