//go:build linux

package localfs

import (
	"context"
	"os"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// entries lists a directory's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestWorkingDirThroughLinkIsRefused: a working directory reached through
// a link below it (relative "../..", or absolute) is refused as the object
// of RmdirContents, Rmdir and CreateSymlink's source, and nothing changes;
// the path text alone cannot tell, so the identity check must.
func TestWorkingDirThroughLinkIsRefused(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	mkdirs(t, e.p("pods/x"), e.p("pki"), e.p("stage"))
	write(t, e.p("config.yaml"), "c")
	write(t, e.p("pki/kubelet.key"), "k")
	symlink(t, "../..", e.p("pods/x/rel"))
	symlink(t, e.wd, e.p("pods/x/abs"))
	symlink(t, "../x/rel", e.p("pods/x/chain"))
	before := entries(t, e.wd)
	for _, l := range []string{"pods/x/rel", "pods/x/abs", "pods/x/chain", "pods/x/rel/."} {
		wantErr(t, "RmdirContents("+l+")", e.fs.RmdirContents(ctx, e.p(l)), errdefs.ErrPermissionDenied)
		wantErr(t, "CreateSymlink(source "+l+")", e.fs.CreateSymlink(ctx, e.p(l), e.p("pods/x/new")), errdefs.ErrPermissionDenied)
	}
	// Rmdir removes the link, never what it points to: fine. But the
	// working directory's own name through a link to its parent is not.
	wantErr(t, "CreateSymlink(source wd)", e.fs.CreateSymlink(ctx, e.wd, e.p("pods/x/new")), errdefs.ErrPermissionDenied)
	if got := entries(t, e.wd); len(got) != len(before) || !exists(e.p("pki/kubelet.key")) || !exists(e.p("config.yaml")) {
		t.Fatalf("the working directory changed: %q, was %q", got, before)
	}
	if exists(e.p("pods/x/new")) {
		t.Error("a link to the working directory itself was made")
	}
	// A link to a directory below the working directory still works.
	if err := e.fs.CreateSymlink(ctx, e.p("stage"), e.p("pods/x/new")); err != nil {
		t.Errorf("CreateSymlink(source below the working dir): %v", err)
	}
	write(t, e.p("stage/f"), "x")
	if err := e.fs.RmdirContents(ctx, e.p("pods/x/new")); err != nil || exists(e.p("stage/f")) {
		t.Errorf("RmdirContents through a link to a directory below: %v", err)
	}
	e.outsideIntact()
}

// TestNestedWorkingDirThroughLinkIsRefused: with nested working dirs, a
// link whose parent resolves to the outer one reaches the inner one by its
// last name; Rmdir (with and without force), RmdirContents and
// CreateSymlink there are refused, and a forced removal of a directory
// holding a working directory stops at it.
func TestNestedWorkingDirThroughLinkIsRefused(t *testing.T) {
	base := t.TempDir()
	outer, inner, deep := base+"/kubelet", base+"/kubelet/plugins", base+"/kubelet/a/b/csi"
	mkdirs(t, inner+"/drv", outer+"/pods/x", deep+"/drv")
	write(t, inner+"/drv/data", "d")
	write(t, deep+"/drv/data", "d")
	symlink(t, outer, outer+"/pods/x/l")
	symlink(t, "../..", outer+"/pods/x/r")
	f, err := New([]string{outer, inner, deep})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, p := range []string{outer + "/pods/x/l/plugins", outer + "/pods/x/r/plugins", outer + "/pods/x/l/a/b/csi"} {
		wantErr(t, "Rmdir(force "+p+")", f.Rmdir(ctx, p, true), errdefs.ErrPermissionDenied)
		wantErr(t, "Rmdir("+p+")", f.Rmdir(ctx, p, false), errdefs.ErrPermissionDenied)
		wantErr(t, "RmdirContents("+p+")", f.RmdirContents(ctx, p), errdefs.ErrPermissionDenied)
		wantErr(t, "CreateSymlink(at "+p+")", f.CreateSymlink(ctx, outer+"/pods", p), errdefs.ErrPermissionDenied)
	}
	// A forced removal that meets a working directory stops there.
	wantErr(t, "Rmdir(force a)", f.Rmdir(ctx, outer+"/a", true), errdefs.ErrPermissionDenied)
	wantErr(t, "RmdirContents(a/b)", f.RmdirContents(ctx, outer+"/a/b"), errdefs.ErrPermissionDenied)
	for _, p := range []string{inner + "/drv/data", deep + "/drv/data"} {
		if !exists(p) {
			t.Errorf("%s was removed", p)
		}
	}
}

// TestInnerWorkingDirIsLink: -working-dir=<kubelet>/plugins where that is
// a link to a data disk, below -kubelet-path=<kubelet>: the inner working
// directory is reached through its configured path (the link is
// configuration, not a caller's link), and the link itself is neither
// removed nor replaced.
func TestInnerWorkingDirIsLink(t *testing.T) {
	base := t.TempDir()
	outer, data := base+"/kubelet", base+"/data/plugins"
	mkdirs(t, outer+"/pods/x", data)
	symlink(t, data, outer+"/plugins")
	symlink(t, outer, outer+"/pods/x/l")
	f, err := New([]string{outer, outer + "/plugins"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := f.Mkdir(ctx, outer+"/plugins/drv/stage"); err != nil {
		t.Fatalf("Mkdir in an inner working dir that is a link: %v", err)
	}
	if !exists(data + "/drv/stage") {
		t.Fatal("not created on the data disk")
	}
	if err := f.CreateSymlink(ctx, outer+"/plugins/drv/stage", outer+"/pods/x/publish"); err != nil {
		t.Fatalf("CreateSymlink to the inner working dir: %v", err)
	}
	if ok, err := f.PathExists(ctx, outer+"/pods/x/publish/."); !ok || err != nil {
		t.Errorf("PathExists through the publish link = %v, %v", ok, err)
	}
	for _, p := range []string{outer + "/plugins", outer + "/pods/x/l/plugins"} {
		wantErr(t, "Rmdir(force "+p+")", f.Rmdir(ctx, p, true), errdefs.ErrPermissionDenied)
		wantErr(t, "RmdirContents("+p+")", f.RmdirContents(ctx, p), errdefs.ErrPermissionDenied)
	}
	if _, err := os.Readlink(outer + "/plugins"); err != nil || !exists(data+"/drv/stage") {
		t.Errorf("the inner working directory's link or its data went: %v", err)
	}
}

// TestLinkSpeltWithResolvedRoot: the working directory is a link
// (/var/lib/kubelet -> /data/kubelet); an absolute link inside spelt with
// the resolved path is followed like one spelt with the configured path.
func TestLinkSpeltWithResolvedRoot(t *testing.T) {
	base := t.TempDir()
	real, wd := base+"/data/kubelet", base+"/kubelet"
	mkdirs(t, real+"/plugins/drv/staging", real+"/pods/p", base+"/data/other")
	symlink(t, real, wd)
	symlink(t, real+"/plugins/drv/staging", real+"/pods/p/publish")
	symlink(t, base+"/data/other", real+"/pods/p/out")
	f, err := New([]string{wd})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := f.Mkdir(ctx, wd+"/pods/p/publish/x"); err != nil {
		t.Fatalf("Mkdir through a link spelt with the resolved root: %v", err)
	}
	if !exists(real + "/plugins/drv/staging/x") {
		t.Error("not created in the staging directory")
	}
	wantErr(t, "Mkdir through a link beside the resolved root", f.Mkdir(ctx, wd+"/pods/p/out/x"), errdefs.ErrPermissionDenied)
}
