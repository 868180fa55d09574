package beneath

import (
	"errors"
	"reflect"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// mustNew builds Roots (lexical only: New does not touch the kernel).
func mustNew(t *testing.T, dirs ...string) *Roots {
	t.Helper()
	r, err := New(dirs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestNewRejects(t *testing.T) {
	for _, dirs := range [][]string{nil, {"relative/dir"}, {"/"}, {"/var/lib/kubelet", "//"}, {"/a/../b"}} {
		if _, err := New(dirs); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("New(%q) = %v, want ErrInvalidArgument", dirs, err)
		}
	}
	r := mustNew(t, "/b", "/a/long", "/b/")
	if got := r.Dirs(); !reflect.DeepEqual(got, []string{"/a/long", "/b"}) {
		t.Errorf("Dirs = %q, want longest first without duplicates", got)
	}
}

func TestRootOf(t *testing.T) {
	f := mustNew(t, "/var/lib/kubelet", "/var/lib/kubelet/plugins/x", "/srv/work")
	for p, want := range map[string]string{
		"/var/lib/kubelet":                 "/var/lib/kubelet",
		"/var/lib/kubelet/pods/a":          "/var/lib/kubelet",
		"/var/lib/kubelet/plugins/x/stage": "/var/lib/kubelet", // outermost
		"/var/lib/kubelet-x/pods":          "",                 // not at an element boundary
		"/srv/work/a":                      "/srv/work",
		"/srv":                             "",
	} {
		if got := f.RootOf(p); got != want {
			t.Errorf("rootOf(%q) = %q, want %q", p, got, want)
		}
	}
	if !f.IsRoot("/srv/work") || f.IsRoot("/srv/work/a") {
		t.Error("isRoot is wrong")
	}
}

func TestRebase(t *testing.T) {
	f := mustNew(t, "/var/lib/kubelet", "/var/lib/kubelet/plugins", "/srv/work")
	for _, c := range []struct {
		target, root string
		rest         []string
		ok           bool
	}{
		{"/var/lib/kubelet/plugins/d/stage", "/var/lib/kubelet", []string{"plugins", "d", "stage"}, true},
		{"/var/lib/kubelet", "/var/lib/kubelet", nil, true},
		{"//srv/./work//a/../b", "/srv/work", []string{"a", "..", "b"}, true}, // ".." is left to the walk
		{"/srv/work/../../etc", "/srv/work", []string{"..", "..", "etc"}, true},
		{"/etc/passwd", "", nil, false},
		{"/srv/workshop", "", nil, false},
		{"/var/lib/../lib/kubelet/x", "", nil, false}, // refused rather than cleaned
		{"/", "", nil, false},
	} {
		root, rest, ok := f.rebase(c.target)
		if root != c.root || ok != c.ok || len(rest)+len(c.rest) > 0 && !reflect.DeepEqual(rest, c.rest) {
			t.Errorf("rebase(%q) = %q %q %v, want %q %q %v", c.target, root, rest, ok, c.root, c.rest, c.ok)
		}
	}
}

func TestCleanIn(t *testing.T) {
	f := mustNew(t, "/wd")
	if p, r, err := f.Clean("/wd//a/./b/"); err != nil || p != "/wd/a/b" || r != "/wd" {
		t.Errorf("Clean = %q %q %v", p, r, err)
	}
	if _, _, err := f.Clean("/other"); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("outside: %v, want ErrPermissionDenied", err)
	}
	if _, _, err := f.Clean("/wd/../etc"); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("dotdot: %v, want ErrInvalidArgument", err)
	}
	if err := EscapeError("/wd/x", "/wd"); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("errEscape = %v", err)
	}
	if got := f.Dirs(); !reflect.DeepEqual(got, []string{"/wd"}) {
		t.Errorf("Dirs = %q", got)
	}
}
