//go:build linux

package blockdev

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// TestVolumeMountsOnLoopDisk: on a real loop disk, the kernel's own
// mount table ties a volume to its mounts by device number: the mount the
// backend made below its working directory, and a bind mount of a
// subdirectory of it made outside, which the backend's view of its
// working directories alone would miss. Unmounted, the volume is mounted
// nowhere again.
func TestVolumeMountsOnLoopDisk(t *testing.T) {
	ctx := context.Background()
	v := newLoopVolume(t, "csi-volmounts.img", 64<<20)
	h, vs, b, id := v.h, v.vs, v.b, v.id
	if got, err := b.VolumeMounts(ctx, id); err != nil || len(got) != 0 {
		t.Fatalf("VolumeMounts of a fresh partition = %q, %v; want none", got, err)
	}
	v.format(t)
	stage := filepath.Join(h.root, "stage")
	if _, err := vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: stage}); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(stage, "sub")
	bind := filepath.Join(h.files, "bind")
	for _, d := range []string{sub, bind} {
		if err := os.Mkdir(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mount(sub, bind, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	got, err := b.VolumeMounts(ctx, id)
	if want := []string{stage, bind}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("VolumeMounts = %q, %v; want %q", got, err, want)
	}
	if err := unix.Unmount(bind, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := vs.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: id, TargetPath: stage}); err != nil {
		t.Fatal(err)
	}
	if got, err := b.VolumeMounts(ctx, id); err != nil || len(got) != 0 {
		t.Fatalf("VolumeMounts after the unmounts = %q, %v; want none", got, err)
	}
}
