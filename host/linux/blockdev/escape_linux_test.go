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
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/linux/mountinfo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
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
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "e2fsprogs", "mkfs.ext4")
	ctx := context.Background()
	h := newHarness(t)
	l := h.attach("csi-test-escape.img", 32<<20)
	ds, vs, b := realServices(t, h, "ext4", l.name)
	var n uint32
	ids, err := ds.ListDiskIDs(ctx, &disk.ListDiskIDsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for num, id := range ids.DiskIDs {
		if id.SerialNumber == l.file { // a loop disk's serial is its backing file
			n = num
		}
	}
	if n == 0 {
		t.Fatalf("loop disk %s not listed: %+v", l.name, ids.DiskIDs)
	}
	if _, err := ds.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: n}); err != nil {
		t.Fatal(err)
	}
	vols, err := vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: n})
	if err != nil || len(vols.VolumeIDs) != 1 {
		t.Fatalf("ListVolumesOnDisk = %+v, %v", vols, err)
	}
	if _, err := vs.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: vols.VolumeIDs[0]}); err != nil {
		t.Fatal(err)
	}
	e := &escapeEnv{h: h, vs: vs, b: b, id: vols.VolumeIDs[0], outside: filepath.Join(h.files, "outside"),
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
func (e *escapeEnv) mounts() []string {
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
	before := e.mounts()
	target := filepath.Join(e.escape, "mnt")
	_, err := e.vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: e.id, TargetPath: target})
	wantErr(t, err, errdefs.ErrPermissionDenied, "resolves outside")
	wantErr(t, e.b.MountVolume(ctx, e.id, target), errdefs.ErrPermissionDenied, target)
	// The link itself as the target: the same refusal, not "a symlink".
	wantErr(t, e.b.MountVolume(ctx, e.id, e.escape), errdefs.ErrPermissionDenied, "resolves outside")
	if after := e.mounts(); !reflect.DeepEqual(after, before) {
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
	if left := e.mounts(); !reflect.DeepEqual(left, before) {
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
	dev, err := v.device("/dev")
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(dev, mnt, "ext4", 0, ""); err != nil {
		t.Fatalf("mount %s outside the working directory: %v", dev, err)
	}
	before := e.mounts()
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
	if after := e.mounts(); !reflect.DeepEqual(after, before) {
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
