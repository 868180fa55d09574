//go:build linux

package blockdev

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// escapeEnv is a formatted volume on a real loop disk, a directory outside
// the working directory (in the harness's own scratch space, so the
// harness unmounts anything that lands there) and a link below the
// working directory that leads to it, as a pod with a hostPath could plant.
type escapeEnv struct {
	h       *harness
	vs      *volume.Service
	b       *Backend
	id      string
	outside string // outside the working directory
	escape  string // h.root/pods/evil/escape -> outside
}

func newEscapeEnv(t *testing.T) *escapeEnv {
	t.Helper()
	v := newLoopVolume(t, "csi-test-escape.img", 32<<20)
	v.format(t)
	h := v.h
	e := &escapeEnv{h: h, vs: v.vs, b: v.b, id: v.id, outside: filepath.Join(h.files, "outside"),
		escape: filepath.Join(h.root, "pods", "evil", "escape")}
	if err := os.MkdirAll(e.outside, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(e.escape), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(e.outside, e.escape); err != nil {
		t.Fatal(err)
	}
	return e
}

// mounts lists the harness's mounts: below its directories or of its
// loop devices.
func (e *escapeEnv) Mounts() []string {
	e.h.t.Helper()
	ms, err := mountinfo.Read()
	if err != nil {
		e.h.t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		if e.h.ours(m) {
			out = append(out, m.Source+" at "+m.MountPoint)
		}
	}
	return out
}

// TestMountThroughLinkOutIsRefused: a mount target below a link that leads
// out of the working directory is PermissionDenied, through the Service
// and straight at the backend (which must not rely on the Service's
// VolumeAt check), and nothing is mounted or created outside.
func TestMountThroughLinkOutIsRefused(t *testing.T) {
	e := newEscapeEnv(t)
	ctx := context.Background()
	before := e.Mounts()
	target := filepath.Join(e.escape, "mnt")
	_, err := e.vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: e.id, TargetPath: target})
	wantErr(t, err, errdefs.ErrPermissionDenied, "resolves outside")
	wantErr(t, e.b.MountVolume(ctx, e.id, target), errdefs.ErrPermissionDenied, target)
	// The link itself as the target: the same refusal, not "a symlink".
	wantErr(t, e.b.MountVolume(ctx, e.id, e.escape), errdefs.ErrPermissionDenied, "resolves outside")
	if after := e.Mounts(); !reflect.DeepEqual(after, before) {
		t.Fatalf("a refused mount changed the mount table: %q, was %q", after, before)
	}
	if _, err := os.Lstat(filepath.Join(e.outside, "mnt")); !os.IsNotExist(err) {
		t.Fatalf("a refused mount created its target outside the working directory: %v", err)
	}

	// A link that stays inside is followed in the parent directories.
	inside := filepath.Join(e.h.root, "stage")
	if err := os.Mkdir(inside, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(inside, filepath.Join(e.h.root, "pods", "evil", "in")); err != nil {
		t.Fatal(err)
	}
	viaLink := filepath.Join(e.h.root, "pods", "evil", "in", "mnt")
	if _, err := e.vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: e.id, TargetPath: viaLink}); err != nil {
		t.Fatalf("MountVolume through a link that stays inside: %v", err)
	}
	at, err := e.vs.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: filepath.Join(inside, "mnt")})
	if err != nil || at.VolumeID != e.id {
		t.Fatalf("the mount is not at %s: %+v, %v", filepath.Join(inside, "mnt"), at, err)
	}
	if _, err := e.vs.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: e.id, TargetPath: viaLink}); err != nil {
		t.Fatalf("UnmountVolume through a link that stays inside: %v", err)
	}
	if left := e.Mounts(); !reflect.DeepEqual(left, before) {
		t.Fatalf("after the unmount: %q, want %q", left, before)
	}
}

// TestUnmountThroughLinkOutIsRefused: a volume mounted outside the working
// directory (as a host mount is) cannot be unmounted through a link below
// the working directory, neither a link to the mount point nor a path
// below a link to its parent, and its ID is not told either.
func TestUnmountThroughLinkOutIsRefused(t *testing.T) {
	e := newEscapeEnv(t)
	ctx := context.Background()
	mnt := filepath.Join(e.outside, "mnt-b")
	if err := os.Mkdir(mnt, 0o750); err != nil {
		t.Fatal(err)
	}
	_, v, err := e.b.lookup(ctx, e.id)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := device(v, "/dev")
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(dev, mnt, "ext4", 0, ""); err != nil {
		t.Fatalf("mount %s outside the working directory: %v", dev, err)
	}
	before := e.Mounts()
	direct := filepath.Join(e.h.root, "pods", "l-mnt-b")
	if err := os.Symlink(mnt, direct); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{direct, filepath.Join(e.escape, "mnt-b")} {
		_, err := e.vs.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: e.id, TargetPath: target})
		wantErr(t, err, errdefs.ErrPermissionDenied, "resolves outside")
		wantErr(t, e.b.UnmountVolume(ctx, e.id, target), errdefs.ErrPermissionDenied, "resolves outside")

		_, err = e.vs.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: target})
		wantErr(t, err, errdefs.ErrPermissionDenied, "resolves outside")
		_, err = e.b.VolumeAt(ctx, target)
		wantErr(t, err, errdefs.ErrPermissionDenied, target)
		_, err = e.vs.GetClosestVolumeIDFromTargetPath(ctx, &volume.GetClosestVolumeIDFromTargetPathRequest{TargetPath: target + "/x"})
		wantErr(t, err, errdefs.ErrPermissionDenied, "resolves outside")
	}
	if after := e.Mounts(); !reflect.DeepEqual(after, before) {
		t.Fatalf("a refused unmount changed the mount table: %q, was %q", after, before)
	}
	if len(mountinfo.At(mustMounts(t), mnt)) != 1 {
		t.Fatalf("the mount outside the working directory is gone")
	}
}

func mustMounts(t *testing.T) []mountinfo.Mount {
	t.Helper()
	ms, err := mountinfo.Read()
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// nestedEnv is a formatted volume on the fake kernel with nested working
// directories <base>/kubelet and <base>/kubelet/plugins, and a link
// <kubelet>/pods/x/l -> <kubelet>, through which <kubelet>/pods/x/l/plugins
// names the inner working directory.
func nestedEnv(t *testing.T) (fx *fixture, b *Backend, id, outer, inner string) {
	t.Helper()
	fx = newFixture(t)
	fx.exec.Respond = fakeMkfs(t)
	base := t.TempDir()
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r
	}
	outer, inner = base+"/kubelet", base+"/kubelet/plugins"
	for _, d := range []string{inner, outer + "/pods/x"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outer, outer+"/pods/x/l"); err != nil {
		t.Fatal(err)
	}
	b = fx.backend(t, Config{MountRoots: []string{outer, inner}})
	id = loop3Volume(t, b)
	if err := b.FormatVolume(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	_ = fx.k.takeCalls()
	return fx, b, id, outer, inner
}

// TestNestedWorkingDirThroughLinkIsNoMountTarget: the inner working
// directory, named through a link to the outer one, is neither mounted on
// nor unmounted (the path text is below the outer one; the identity check
// finds the inner one).
func TestNestedWorkingDirThroughLinkIsNoMountTarget(t *testing.T) {
	fx, b, id, outer, inner := nestedEnv(t)
	ctx := context.Background()
	via := outer + "/pods/x/l/plugins"
	wantErr(t, b.MountVolume(ctx, id, via), errdefs.ErrPermissionDenied, "working directory itself")
	wantErr(t, b.MountVolume(ctx, id, outer+"/pods/x/l"), errdefs.ErrFailedPrecondition, "symlink")
	// The volume mounted on the inner working directory (by someone
	// else): not unmounted through the link either.
	dev := fx.k.devOf("loop3p1")
	fx.k.mountTable = append(fx.k.mountTable, mountinfo.Mount{ID: 9, Major: dev.Major, Minor: dev.Minor, Root: "/", MountPoint: inner, FSType: "ext4", Source: filepath.Join(fx.dev, "loop3p1")})
	wantErr(t, b.UnmountVolume(ctx, id, via), errdefs.ErrPermissionDenied, "working directory itself")
	if got := fx.k.takeCalls(); len(got) != 0 {
		t.Fatalf("refused calls reached the kernel: %q", got)
	}
}

// TestUnmountChecksTheFilesystemAtTheTarget: the backend unmounts only
// when what is mounted at the target directory it opened is the volume's
// filesystem, whatever the Service checked before on its own resolution
// of the path.
func TestUnmountChecksTheFilesystemAtTheTarget(t *testing.T) {
	fx, b, id, outer, _ := nestedEnv(t)
	ctx := context.Background()
	mine, other := outer+"/pods/x/mine", outer+"/pods/x/other"
	if err := b.MountVolume(ctx, id, mine); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	fx.k.mountTable = append(fx.k.mountTable, mountinfo.Mount{ID: 9, Major: 0, Minor: 55, Root: "/", MountPoint: other, FSType: "tmpfs", Source: "tmpfs"})
	_ = fx.k.takeCalls()
	wantErr(t, b.UnmountVolume(ctx, id, other), errdefs.ErrFailedPrecondition, "not volume")
	if got := fx.k.takeCalls(); len(got) != 0 {
		t.Fatalf("a refused unmount reached the kernel: %q", got)
	}
	if err := b.UnmountVolume(ctx, id, mine); err != nil {
		t.Fatal(err)
	}
	if got := fx.k.takeCalls(); !reflect.DeepEqual(got, []string{"syncfs " + mine, "unmount " + mine}) {
		t.Fatalf("unmount calls = %q", got)
	}
}
