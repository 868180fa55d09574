package localfs

import (
	"errors"
	"reflect"
	"sort"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// newLexical builds an FS without probing the kernel, for the lexical
// logic that every OS shares.
func newLexical(roots ...string) *FS {
	f := &FS{roots: roots}
	sort.Slice(f.roots, func(i, j int) bool { return len(f.roots[i]) > len(f.roots[j]) })
	return f
}

func TestNewRejects(t *testing.T) {
	for _, dirs := range [][]string{nil, {"relative/dir"}, {"/"}, {"/var/lib/kubelet", "//"}, {"/a/../b"}} {
		if _, err := New(dirs); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("New(%q) = %v, want ErrInvalidArgument", dirs, err)
		}
	}
}

func TestRootOf(t *testing.T) {
	f := newLexical("/var/lib/kubelet", "/var/lib/kubelet/plugins/x", "/srv/work")
	for p, want := range map[string]string{
		"/var/lib/kubelet":                 "/var/lib/kubelet",
		"/var/lib/kubelet/pods/a":          "/var/lib/kubelet",
		"/var/lib/kubelet/plugins/x/stage": "/var/lib/kubelet", // outermost
		"/var/lib/kubelet-x/pods":          "",                 // not at an element boundary
		"/srv/work/a":                      "/srv/work",
		"/srv":                             "",
	} {
		if got := f.rootOf(p); got != want {
			t.Errorf("rootOf(%q) = %q, want %q", p, got, want)
		}
	}
	if !f.isRoot("/srv/work") || f.isRoot("/srv/work/a") {
		t.Error("isRoot is wrong")
	}
}

func TestRebase(t *testing.T) {
	f := newLexical("/var/lib/kubelet", "/var/lib/kubelet/plugins", "/srv/work")
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
	f := newLexical("/wd")
	if p, r, err := f.cleanIn("/wd//a/./b/"); err != nil || p != "/wd/a/b" || r != "/wd" {
		t.Errorf("cleanIn = %q %q %v", p, r, err)
	}
	if _, _, err := f.cleanIn("/other"); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("outside: %v, want ErrPermissionDenied", err)
	}
	if _, _, err := f.cleanIn("/wd/../etc"); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("dotdot: %v, want ErrInvalidArgument", err)
	}
	if err := errEscape("/wd/x", "/wd"); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("errEscape = %v", err)
	}
	if got := f.WorkingDirs(); !reflect.DeepEqual(got, []string{"/wd"}) {
		t.Errorf("WorkingDirs = %q", got)
	}
}
