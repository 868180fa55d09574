//go:build linux

package localfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/beneath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

// mounted records every mount the tests make, so TestMain can prove none
// is left behind.
var mounted struct {
	sync.Mutex
	points []string
}

func TestMain(m *testing.M) {
	code := m.Run()
	ms, err := mountinfo.Read()
	if err != nil {
		fmt.Fprintln(os.Stderr, "read mountinfo:", err)
		os.Exit(1)
	}
	for _, p := range mounted.points {
		if len(mountinfo.At(ms, p)) > 0 {
			fmt.Fprintf(os.Stderr, "a test left a mount behind at %s; detaching it\n", p)
			_ = unix.Unmount(p, unix.MNT_DETACH)
			code = 1
		}
	}
	os.Exit(code)
}

// env is a working directory with an outside directory next to it that no
// operation may touch.
type env struct {
	t       *testing.T
	fs      *FS
	wd      string // the working directory
	outside string // a directory outside it, holding a file "secret"
}

func newEnv(t *testing.T) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{t: t, wd: filepath.Join(base, "wd"), outside: filepath.Join(base, "outside")}
	mkdirs(t, e.wd, e.outside+"/dir")
	write(t, e.outside+"/secret", "s")
	write(t, e.outside+"/dir/file", "d")
	f, err := New([]string{e.wd})
	if err != nil {
		t.Fatal(err)
	}
	e.fs = f
	return e
}

// p names a path inside the working directory.
func (e *env) p(rel string) string { return filepath.Join(e.wd, rel) }

// outsideIntact fails the test unless the outside directory still holds
// exactly what newEnv put there.
func (e *env) outsideIntact() {
	e.t.Helper()
	var got []string
	err := filepath.Walk(e.outside, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		got = append(got, strings.TrimPrefix(p, e.outside))
		return nil
	})
	want := "[ /dir /dir/file /secret]"
	if err != nil || fmt.Sprint(got) != want {
		e.t.Errorf("outside directory changed: %v %v, want %s", got, err, want)
	}
	for name, data := range map[string]string{"/secret": "s", "/dir/file": "d"} {
		if b, err := os.ReadFile(e.outside + name); err != nil || string(b) != data {
			e.t.Errorf("outside file %s changed: %q, %v", name, b, err)
		}
	}
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func write(t *testing.T, p, data string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func wantErr(t *testing.T, what string, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Errorf("%s: error %v, want %v", what, err, kind)
	}
}

func TestPathExists(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	mkdirs(t, e.p("dir"))
	write(t, e.p("file"), "x")
	symlink(t, e.p("missing"), e.p("dangling"))
	symlink(t, e.outside, e.p("out"))
	for rel, want := range map[string]bool{
		"dir": true, "file": true, "dangling": true, "out": true,
		"missing": false, "missing/child": false, "file/child": false,
	} {
		got, err := e.fs.PathExists(ctx, e.p(rel))
		if err != nil || got != want {
			t.Errorf("PathExists(%s) = %v, %v; want %v", rel, got, err, want)
		}
	}
	_, err := e.fs.PathExists(ctx, e.p("out/secret"))
	wantErr(t, "PathExists through a link to outside", err, errdefs.ErrPermissionDenied)
	_, err = e.fs.PathExists(ctx, "/etc/passwd")
	wantErr(t, "PathExists outside the working dirs", err, errdefs.ErrPermissionDenied)
}

func TestMkdir(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for i := 0; i < 2; i++ { // the second call is a retry: success
		if err := e.fs.Mkdir(ctx, e.p("a/b/c")); err != nil {
			t.Fatalf("Mkdir #%d: %v", i, err)
		}
	}
	if st, err := os.Stat(e.p("a/b/c")); err != nil || !st.IsDir() {
		t.Fatalf("a/b/c not created: %v", err)
	}
	write(t, e.p("file"), "x")
	wantErr(t, "Mkdir on a file", e.fs.Mkdir(ctx, e.p("file")), errdefs.ErrAlreadyExists)
	wantErr(t, "Mkdir below a file", e.fs.Mkdir(ctx, e.p("file/sub")), errdefs.ErrAlreadyExists)

	// Links that stay inside are followed, relative or absolute.
	symlink(t, "a/b", e.p("rel"))
	symlink(t, e.p("a"), e.p("abs"))
	if err := e.fs.Mkdir(ctx, e.p("rel/viarel")); err != nil {
		t.Errorf("Mkdir through a relative link: %v", err)
	}
	if err := e.fs.Mkdir(ctx, e.p("abs/viaabs/deeper")); err != nil {
		t.Errorf("Mkdir through an absolute link inside: %v", err)
	}
	if !exists(e.p("a/b/viarel")) || !exists(e.p("a/viaabs/deeper")) {
		t.Error("directories through links were not created in the link targets")
	}
	if err := e.fs.Mkdir(ctx, e.p("abs")); err != nil {
		t.Errorf("Mkdir on a link to a directory: %v", err)
	}

	// A dangling link is never made real.
	symlink(t, e.p("nowhere"), e.p("dangling"))
	wantErr(t, "Mkdir on a dangling link", e.fs.Mkdir(ctx, e.p("dangling")), errdefs.ErrAlreadyExists)
	wantErr(t, "Mkdir through a dangling link", e.fs.Mkdir(ctx, e.p("dangling/x")), errdefs.ErrAlreadyExists)
	if exists(e.p("nowhere")) {
		t.Error("Mkdir created a dangling link's target")
	}
}

func TestMkdirMissingWorkingDir(t *testing.T) {
	f, err := New([]string{filepath.Join(t.TempDir(), "absent")})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "Mkdir in a missing working dir", f.Mkdir(context.Background(), f.WorkingDirs()[0]+"/x"), errdefs.ErrNotFound)
	wantErr(t, "Mkdir of the missing working dir", f.Mkdir(context.Background(), f.WorkingDirs()[0]), errdefs.ErrNotFound)
	if ok, err := f.PathExists(context.Background(), f.WorkingDirs()[0]+"/x"); ok || err != nil {
		t.Errorf("PathExists in a missing working dir = %v, %v", ok, err)
	}
}

// TestEscapes plants links that point out of the working directory and
// drives every operation through them: each must be refused, and nothing
// outside may appear, change or vanish.
func TestEscapes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	mkdirs(t, e.p("sub"), e.p("ok"))
	symlink(t, e.outside, e.p("abs"))                // absolute, straight out
	symlink(t, "../outside", e.p("rel"))             // relative, climbing out
	symlink(t, "..", e.p("sub/up"))                  // climbs to wd: fine
	symlink(t, "../..", e.p("sub/upup"))             // climbs above wd
	symlink(t, e.p("abs"), e.p("chain"))             // inside, to a link that leaves
	symlink(t, e.wd+"/../outside", e.p("sneaky"))    // names wd, then climbs out
	symlink(t, "sub/up/sub/up/../outside", e.p("x")) // zig-zags, then out
	for _, l := range []string{"abs", "rel", "sub/upup", "chain", "sneaky", "x"} {
		t.Run(strings.ReplaceAll(l, "/", "_"), func(t *testing.T) {
			wantErr(t, "PathExists", must(e.fs.PathExists(ctx, e.p(l+"/secret"))), errdefs.ErrPermissionDenied)
			wantErr(t, "Mkdir", e.fs.Mkdir(ctx, e.p(l+"/planted/deep")), errdefs.ErrPermissionDenied)
			wantErr(t, "Rmdir", e.fs.Rmdir(ctx, e.p(l+"/dir"), true), errdefs.ErrPermissionDenied)
			wantErr(t, "Rmdir file", e.fs.Rmdir(ctx, e.p(l+"/secret"), false), errdefs.ErrPermissionDenied)
			wantErr(t, "RmdirContents", e.fs.RmdirContents(ctx, e.p(l)), errdefs.ErrPermissionDenied)
			wantErr(t, "RmdirContents below", e.fs.RmdirContents(ctx, e.p(l+"/dir")), errdefs.ErrPermissionDenied)
			wantErr(t, "CreateSymlink from outside", e.fs.CreateSymlink(ctx, e.p(l+"/dir"), e.p("newlink")), errdefs.ErrPermissionDenied)
			wantErr(t, "CreateSymlink into outside", e.fs.CreateSymlink(ctx, e.p("ok"), e.p(l+"/planted")), errdefs.ErrPermissionDenied)
			wantErr(t, "IsSymlink below", must(e.fs.IsSymlink(ctx, e.p(l+"/dir"))), errdefs.ErrPermissionDenied)
			if exists(e.p("newlink")) || exists(e.outside+"/planted") {
				t.Error("something was created")
			}
			e.outsideIntact()
		})
	}
	// A link that climbs to the working directory itself stays inside.
	if ok, err := e.fs.PathExists(ctx, e.p("sub/up/ok")); !ok || err != nil {
		t.Errorf("PathExists(sub/up/ok) = %v, %v", ok, err)
	}
	// The links themselves are inside and may be inspected and removed;
	// removing one never touches its target.
	if ok, err := e.fs.IsSymlink(ctx, e.p("abs")); !ok || err != nil {
		t.Errorf("IsSymlink(abs) = %v, %v; a link to an existing outside target is a link", ok, err)
	}
	for _, l := range []string{"abs", "rel", "chain", "sneaky", "x", "sub"} {
		if err := e.fs.Rmdir(ctx, e.p(l), true); err != nil {
			t.Errorf("Rmdir(%s, force): %v", l, err)
		}
	}
	e.outsideIntact()
}

// TestEscapeToEtc points a link at the real /etc and checks the
// operations that could create or reveal something there.
func TestEscapeToEtc(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	symlink(t, "/etc", e.p("etc"))
	name := fmt.Sprintf("csi-node-proxy-localfs-test-%d", os.Getpid())
	t.Cleanup(func() { _ = os.RemoveAll("/etc/" + name) })
	wantErr(t, "Mkdir", e.fs.Mkdir(ctx, e.p("etc/"+name)), errdefs.ErrPermissionDenied)
	wantErr(t, "CreateSymlink", e.fs.CreateSymlink(ctx, e.wd, e.p("etc/"+name)), errdefs.ErrPermissionDenied)
	wantErr(t, "CreateSymlink source", e.fs.CreateSymlink(ctx, e.p("etc"), e.p("l")), errdefs.ErrPermissionDenied)
	wantErr(t, "PathExists", must(e.fs.PathExists(ctx, e.p("etc/passwd"))), errdefs.ErrPermissionDenied)
	wantErr(t, "Rmdir", e.fs.Rmdir(ctx, e.p("etc/"+name), true), errdefs.ErrPermissionDenied)
	if exists("/etc/" + name) {
		t.Errorf("/etc/%s was created", name)
	}
	if !exists("/etc/passwd") {
		t.Fatal("/etc/passwd is gone")
	}
}

func must[T any](_ T, err error) error { return err }

func TestRmdir(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	mkdirs(t, e.p("empty"), e.p("full/sub"))
	write(t, e.p("full/sub/f"), "x")
	write(t, e.p("file"), "x")

	if err := e.fs.Rmdir(ctx, e.p("empty"), false); err != nil || exists(e.p("empty")) {
		t.Errorf("Rmdir(empty): %v", err)
	}
	wantErr(t, "Rmdir(full)", e.fs.Rmdir(ctx, e.p("full"), false), errdefs.ErrFailedPrecondition)
	if !exists(e.p("full/sub/f")) {
		t.Error("Rmdir without force removed content")
	}
	if err := e.fs.Rmdir(ctx, e.p("full"), true); err != nil || exists(e.p("full")) {
		t.Errorf("Rmdir(full, force): %v", err)
	}
	if err := e.fs.Rmdir(ctx, e.p("file"), false); err != nil || exists(e.p("file")) {
		t.Errorf("Rmdir(file): %v", err)
	}
	wantErr(t, "Rmdir(missing)", e.fs.Rmdir(ctx, e.p("missing"), true), errdefs.ErrNotFound)
	wantErr(t, "Rmdir(missing/child)", e.fs.Rmdir(ctx, e.p("missing/child"), true), errdefs.ErrNotFound)
	wantErr(t, "Rmdir(working dir)", e.fs.Rmdir(ctx, e.wd, true), errdefs.ErrPermissionDenied)
	wantErr(t, "RmdirContents(working dir)", e.fs.RmdirContents(ctx, e.wd), errdefs.ErrPermissionDenied)
	if !exists(e.wd) {
		t.Fatal("the working directory is gone")
	}
}

// TestRmdirLinkKeepsTarget removes links to full directories, with and
// without force: only the links go.
func TestRmdirLinkKeepsTarget(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	mkdirs(t, e.p("stage/data"))
	write(t, e.p("stage/data/f"), "x")
	symlink(t, e.p("stage"), e.p("pub1"))
	symlink(t, e.p("stage"), e.p("pub2"))
	symlink(t, e.outside, e.p("pub3"))
	for _, c := range []struct {
		l     string
		force bool
	}{{"pub1", false}, {"pub2", true}, {"pub3", true}} {
		if err := e.fs.Rmdir(ctx, e.p(c.l), c.force); err != nil || exists(e.p(c.l)) {
			t.Errorf("Rmdir(%s, %v): %v", c.l, c.force, err)
		}
	}
	if !exists(e.p("stage/data/f")) {
		t.Error("link target content was removed")
	}
	e.outsideIntact()
}

// TestRmdirForceTreeWithLinks removes a tree holding links to outside and
// inside data: the links go, their targets stay.
func TestRmdirForceTreeWithLinks(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	mkdirs(t, e.p("keep/d"), e.p("tree/a/b"))
	write(t, e.p("keep/d/f"), "x")
	write(t, e.p("tree/a/b/f"), "x")
	symlink(t, e.outside, e.p("tree/a/out-abs"))
	symlink(t, "../../../outside", e.p("tree/a/b/out-rel"))
	symlink(t, e.outside+"/secret", e.p("tree/out-file"))
	symlink(t, e.p("keep"), e.p("tree/a/in"))
	if err := e.fs.Rmdir(ctx, e.p("tree"), true); err != nil {
		t.Fatal(err)
	}
	if exists(e.p("tree")) {
		t.Error("tree still exists")
	}
	if !exists(e.p("keep/d/f")) {
		t.Error("inside link target lost its content")
	}
	e.outsideIntact()
}

func TestRmdirContents(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	mkdirs(t, e.p("dir/a/b"), e.p("keep"))
	write(t, e.p("dir/a/b/f"), "x")
	write(t, e.p("dir/f"), "x")
	write(t, e.p("keep/f"), "x")
	symlink(t, e.outside, e.p("dir/out"))
	symlink(t, e.p("keep"), e.p("dir/in"))
	if err := e.fs.RmdirContents(ctx, e.p("dir")); err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(e.p("dir")); err != nil || len(ents) != 0 {
		t.Errorf("dir not emptied: %v %v", ents, err)
	}
	if !exists(e.p("keep/f")) {
		t.Error("an inside link's target was emptied")
	}
	e.outsideIntact()

	// Through an absolute link inside, the target is emptied.
	symlink(t, e.p("keep"), e.p("lk"))
	if err := e.fs.RmdirContents(ctx, e.p("lk")); err != nil {
		t.Fatal(err)
	}
	if exists(e.p("keep/f")) || !exists(e.p("keep")) || !exists(e.p("lk")) {
		t.Error("RmdirContents through a link did not empty just the target")
	}
	write(t, e.p("file"), "x")
	wantErr(t, "RmdirContents(file)", e.fs.RmdirContents(ctx, e.p("file")), errdefs.ErrFailedPrecondition)
	wantErr(t, "RmdirContents(missing)", e.fs.RmdirContents(ctx, e.p("missing")), errdefs.ErrNotFound)
}

func TestCreateSymlink(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	mkdirs(t, e.p("stage"), e.p("stage2"), e.p("pods/x"), e.p("dir"))
	for i := 0; i < 2; i++ { // the second call is a retry: success
		if err := e.fs.CreateSymlink(ctx, e.p("stage"), e.p("pods/x/mount")); err != nil {
			t.Fatalf("CreateSymlink #%d: %v", i, err)
		}
	}
	if target, err := os.Readlink(e.p("pods/x/mount")); err != nil || target != e.p("stage") {
		t.Errorf("link = %q, %v; want the absolute source %q", target, err, e.p("stage"))
	}
	wantErr(t, "another source", e.fs.CreateSymlink(ctx, e.p("stage2"), e.p("pods/x/mount")), errdefs.ErrAlreadyExists)
	wantErr(t, "over a directory", e.fs.CreateSymlink(ctx, e.p("stage"), e.p("dir")), errdefs.ErrAlreadyExists)
	wantErr(t, "missing parent", e.fs.CreateSymlink(ctx, e.p("stage"), e.p("pods/y/mount")), errdefs.ErrNotFound)
	wantErr(t, "source outside", e.fs.CreateSymlink(ctx, e.outside, e.p("pods/x/o")), errdefs.ErrPermissionDenied)
	wantErr(t, "link is the working dir", e.fs.CreateSymlink(ctx, e.p("stage"), e.wd), errdefs.ErrPermissionDenied)
	// A dangling source is allowed, as upstream allows it.
	if err := e.fs.CreateSymlink(ctx, e.p("later"), e.p("pods/x/dangling")); err != nil {
		t.Errorf("dangling source: %v", err)
	}
	// The links CreateSymlink makes are absolute; paths through them
	// must keep working.
	if err := e.fs.Mkdir(ctx, e.p("pods/x/mount/sub")); err != nil {
		t.Errorf("Mkdir through a created link: %v", err)
	}
	if ok, err := e.fs.PathExists(ctx, e.p("pods/x/mount/sub")); !ok || err != nil {
		t.Errorf("PathExists through a created link = %v, %v", ok, err)
	}
	if !exists(e.p("stage/sub")) {
		t.Error("stage/sub missing")
	}
}

func TestIsSymlink(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	mkdirs(t, e.p("dir"))
	write(t, e.p("file"), "x")
	symlink(t, e.p("dir"), e.p("link"))
	symlink(t, e.p("missing"), e.p("dangling"))
	symlink(t, "loop2", e.p("loop1"))
	symlink(t, "loop1", e.p("loop2"))
	for rel, want := range map[string]bool{"link": true, "dangling": false, "dir": false, "file": false, "loop1": false} {
		got, err := e.fs.IsSymlink(ctx, e.p(rel))
		if err != nil || got != want {
			t.Errorf("IsSymlink(%s) = %v, %v; want %v", rel, got, err, want)
		}
	}
	wantErr(t, "IsSymlink(missing)", must(e.fs.IsSymlink(ctx, e.p("missing"))), errdefs.ErrNotFound)
	wantErr(t, "PathExists through a loop", must(e.fs.PathExists(ctx, e.p("loop1/x"))), errdefs.ErrFailedPrecondition)
}

// TestNestedAndSeveralWorkingDirs: a relative link may climb from an inner
// working directory into the outer one, and an absolute link may lead
// into another working directory.
func TestNestedAndSeveralWorkingDirs(t *testing.T) {
	base := t.TempDir()
	outer, inner, other := base+"/kubelet", base+"/kubelet/plugins", base+"/other"
	mkdirs(t, inner+"/drv", outer+"/pods", other+"/data", base+"/outside")
	symlink(t, "../../pods", inner+"/drv/pods")
	symlink(t, other+"/data", outer+"/pods/data")
	symlink(t, "../../../outside", inner+"/drv/out")
	f, err := New([]string{inner, other, outer})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := f.Mkdir(ctx, inner+"/drv/pods/data/x"); err != nil {
		t.Fatal(err)
	}
	if !exists(other + "/data/x") {
		t.Error("x was not created in the other working directory")
	}
	wantErr(t, "Mkdir out of the outer dir", f.Mkdir(ctx, inner+"/drv/out/x"), errdefs.ErrPermissionDenied)
	if exists(base + "/outside/x") {
		t.Error("created outside")
	}
}

func TestCanceledContext(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wantErr(t, "Mkdir", e.fs.Mkdir(ctx, e.p("x")), context.Canceled)
	wantErr(t, "Rmdir", e.fs.Rmdir(ctx, e.p("x"), true), context.Canceled)
	if exists(e.p("x")) {
		t.Error("a canceled Mkdir created the directory")
	}
}

// mount mounts (tmpfs when src is "", else a bind mount of src) at dst and
// unmounts in t.Cleanup, even when the test fails; the cleanup is
// registered after t.TempDir's, so it runs first and the TempDir removal
// never walks into a mount.
func mount(t *testing.T, src, dst string) {
	t.Helper()
	var err error
	if src == "" {
		err = unix.Mount("tmpfs", dst, "tmpfs", 0, "size=1m")
	} else {
		err = unix.Mount(src, dst, "", unix.MS_BIND, "")
	}
	if err != nil {
		t.Fatalf("mount %q on %q: %v", src, dst, err)
	}
	mounted.Lock()
	mounted.points = append(mounted.points, dst)
	mounted.Unlock()
	t.Cleanup(func() {
		for i := 0; i < 8 && unix.Unmount(dst, unix.MNT_DETACH) == nil; i++ {
		}
	})
}

func isMounted(t *testing.T, p string) bool {
	t.Helper()
	ms, err := mountinfo.Read()
	if err != nil {
		t.Fatal(err)
	}
	return len(mountinfo.At(ms, p)) > 0
}

// TestRmdirMountPoint unmounts a tmpfs (through a bind mount, so its data
// can be checked afterwards) and a bind mount of the same filesystem, with
// and without force: the mount points go, the mounted data stays.
func TestRmdirMountPoint(t *testing.T) {
	testutil.RequireRoot(t)
	e := newEnv(t)
	ctx := context.Background()
	mkdirs(t, e.outside+"/tmpfs")
	mount(t, "", e.outside+"/tmpfs")
	write(t, e.outside+"/tmpfs/data", "on tmpfs")
	for _, c := range []struct {
		name, src string
		force     bool
	}{
		{"tmpfs", e.outside + "/tmpfs", true},
		{"samefs", e.outside + "/dir", false},
	} {
		mp := e.p("mnt-" + c.name)
		mkdirs(t, mp)
		mount(t, c.src, mp)
		if ok, err := e.fs.IsSymlink(ctx, mp); !ok || err != nil {
			t.Errorf("IsSymlink(%s mount point) = %v, %v; want true", c.name, ok, err)
		}
		if err := e.fs.Rmdir(ctx, mp, c.force); err != nil {
			t.Fatalf("Rmdir(%s, %v): %v", c.name, c.force, err)
		}
		if isMounted(t, mp) || exists(mp) {
			t.Errorf("%s: mount point still there", c.name)
		}
	}
	if data, err := os.ReadFile(e.outside + "/tmpfs/data"); err != nil || string(data) != "on tmpfs" {
		t.Errorf("tmpfs data: %q, %v", data, err)
	}
	if err := unix.Unmount(e.outside+"/tmpfs", 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(e.outside + "/tmpfs"); err != nil {
		t.Fatal(err)
	}
	e.outsideIntact()
}

// TestRmdirForceNestedMounts removes a tree with a mount point (two mounts
// stacked) deep inside and a link next to it: mounts are unmounted, never
// entered.
func TestRmdirForceNestedMounts(t *testing.T) {
	testutil.RequireRoot(t)
	e := newEnv(t)
	ctx := context.Background()
	mkdirs(t, e.p("tree/a/mnt"), e.p("tree/b"))
	write(t, e.p("tree/b/f"), "x")
	mount(t, e.outside, e.p("tree/a/mnt"))
	mount(t, e.outside+"/dir", e.p("tree/a/mnt"))
	symlink(t, e.outside, e.p("tree/b/out"))
	if err := e.fs.Rmdir(ctx, e.p("tree"), true); err != nil {
		t.Fatal(err)
	}
	if exists(e.p("tree")) || isMounted(t, e.p("tree/a/mnt")) {
		t.Error("tree or its mount is still there")
	}
	e.outsideIntact()
}

// TestRmdirContentsNestedMount empties a directory holding a mount point.
func TestRmdirContentsNestedMount(t *testing.T) {
	testutil.RequireRoot(t)
	e := newEnv(t)
	ctx := context.Background()
	mkdirs(t, e.p("dir/mnt"))
	mount(t, e.outside, e.p("dir/mnt"))
	if err := e.fs.RmdirContents(ctx, e.p("dir")); err != nil {
		t.Fatal(err)
	}
	if exists(e.p("dir/mnt")) || !exists(e.p("dir")) {
		t.Error("dir was not emptied")
	}
	e.outsideIntact()
}

// TestRmdirBusyMount: a mount in use is not detached lazily; the call
// fails with ErrUnavailable and succeeds once the mount is released.
func TestRmdirBusyMount(t *testing.T) {
	testutil.RequireRoot(t)
	e := newEnv(t)
	ctx := context.Background()
	mp := e.p("mnt")
	mkdirs(t, mp)
	mount(t, e.outside, mp)
	f, err := os.Open(mp + "/secret")
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "Rmdir(busy)", e.fs.Rmdir(ctx, mp, true), errdefs.ErrUnavailable)
	if !isMounted(t, mp) {
		t.Error("a busy mount was detached")
	}
	_ = f.Close()
	if err := e.fs.Rmdir(ctx, mp, true); err != nil {
		t.Errorf("Rmdir after release: %v", err)
	}
	e.outsideIntact()
}

// TestMountedByTable checks the fallback for kernels without
// STATX_ATTR_MOUNT_ROOT: another filesystem shows by its device, a bind
// mount of the same filesystem only in the mount table.
func TestMountedByTable(t *testing.T) {
	testutil.RequireRoot(t)
	e := newEnv(t)
	mkdirs(t, e.p("tmpfs"), e.p("bind"), e.p("plain"))
	mount(t, "", e.p("tmpfs"))
	mount(t, e.outside, e.p("bind"))
	dirfd, err := unix.Open(e.wd, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer beneath.Close(dirfd)
	for name, want := range map[string]bool{"tmpfs": true, "bind": true, "plain": false} {
		var stx unix.Statx_t
		if err := unix.Statx(dirfd, name, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_TYPE, &stx); err != nil {
			t.Fatal(err)
		}
		got, err := mountedByTable(dirfd, name, unix.Mkdev(stx.Dev_major, stx.Dev_minor))
		if err != nil || got != want {
			t.Errorf("mountedByTable(%s) = %v, %v; want %v", name, got, err, want)
		}
		if got, err := isMountPoint(dirfd, name); err != nil || got != want {
			t.Errorf("isMountPoint(%s) = %v, %v; want %v", name, got, err, want)
		}
	}
}
