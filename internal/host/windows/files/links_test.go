package files

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// TestListLinksFakeFSConstructedTree runs the walk on the constructed
// filesystem of fake_test.go (real REPARSE_DATA_BUFFER bytes, no Windows):
// links to shares in each stored form and a junction are reported with
// their targets; a volume mounted folder is neither reported nor entered,
// nor is a directory link followed; a missing root is no error.
func TestListLinksFakeFSConstructedTree(t *testing.T) {
	f := world() // C:\k with a mounted folder, a dir link and a plain dir
	f.mkdir(`C:\k\plugins`)
	f.mkdir(`C:\k\plugins\smb`)
	f.symlink(`C:\k\plugins\smb\pv-a`, `\\files\vols\pvc-1\`, true)
	f.symlink(`C:\k\plugins\smb\pv-b`, `\\?\UNC\files\vols\pvc-2`, true)
	f.junction(`C:\k\plugins\j`, `C:\k\tgt`)
	f.symlink(volRoot(guid)+`\inside`, `\\files\hidden`, true) // behind the mounted folder

	got, err := newHost(f).ListLinks(ctx(), []string{`C:\k`, `C:\missing`})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		`C:\k\pub`:              `C:\k\stage`,
		`C:\k\plugins\j`:        `C:\k\tgt\`, // a junction stores a trailing separator
		`C:\k\plugins\smb\pv-a`: `\\files\vols\pvc-1\`,
		`C:\k\plugins\smb\pv-b`: `\\files\vols\pvc-2`,
	}
	have := map[string]string{}
	for _, l := range got {
		have[l.Path] = l.Target
	}
	if !reflect.DeepEqual(have, want) {
		t.Errorf("ListLinks = %q\nwant        %q", have, want)
	}
	noCall(t, f, `ReadDir C:\k\stage`)
	noCall(t, f, `ReadDir C:\k\pub`)
}

// TestListLinksFakeFSErrors: an unreadable directory fails the walk with
// its kind, and a cancelled context stops it.
func TestListLinksFakeFSErrors(t *testing.T) {
	f := world()
	f.errs[`ReadDir C:\k\tgt`] = errAccessDenied
	_, err := newHost(f).ListLinks(ctx(), []string{`C:\k`})
	wantKind(t, err, errdefs.ErrPermissionDenied)

	c, cancel := context.WithCancel(ctx())
	cancel()
	if _, err := newHost(world()).ListLinks(c, []string{`C:\k`}); !errors.Is(err, context.Canceled) {
		t.Errorf("ListLinks with a cancelled context = %v", err)
	}
}
