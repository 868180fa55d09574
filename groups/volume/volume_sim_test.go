package volume_test

import (
	"context"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/simtest"
)

var ctx = context.Background()

const kubelet = `C:\var\lib\kubelet`

type env struct {
	h     *simulated.Host
	vols  *volume.Service
	disks *disk.Service
}

func newEnv(t *testing.T) env {
	t.Helper()
	h := simtest.Node(t, simulated.DefaultConfig(nil))
	return env{h: h, vols: volume.NewService(h.Volume(), simtest.Paths(t, h)), disks: disk.NewService(h.Disk())}
}

// stage runs the gcp-pd/aws-ebs NodeStageVolume sequence on disk n and
// returns the volume.
func (e env) stage(t *testing.T, n uint32, target string) string {
	t.Helper()
	_, err := e.disks.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: true})
	simtest.Must(t, err)
	_, err = e.disks.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: n})
	simtest.Must(t, err)
	l, err := e.vols.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: n})
	simtest.Must(t, err)
	id := l.VolumeIDs[0]
	f, err := e.vols.IsVolumeFormatted(ctx, &volume.IsVolumeFormattedRequest{VolumeID: id})
	simtest.Must(t, err)
	if !f.Formatted {
		_, err = e.vols.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: id})
		simtest.Must(t, err)
	}
	_, err = e.vols.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: target})
	simtest.Must(t, err)
	return id
}

func TestSimStageAndUnstage(t *testing.T) {
	e := newEnv(t)
	target := kubelet + `\plugins\pd.csi.storage.gke.io\staging\pv1`
	simtest.Must(t, e.h.Filesystem().Mkdir(ctx, target))
	id := e.stage(t, 1, target)
	id2 := e.stage(t, 1, target) // the kubelet retry
	if id != id2 {
		t.Fatalf("a retried stage found volume %s, then %s", id, id2)
	}
	got, err := e.vols.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: target})
	if err != nil || got.VolumeID != id {
		t.Fatalf("GetVolumeIDFromTargetPath = %+v, %v", got, err)
	}
	st, err := e.vols.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id})
	if err != nil || st.TotalBytes != 1022<<20 || st.UsedBytes != simulated.NTFSOverhead(1022<<20) {
		t.Errorf("GetVolumeStats = %+v, %v", st, err)
	}
	// NodeUnstage: unmount, find the disk, take it offline.
	_, err = e.vols.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: id, TargetPath: target})
	simtest.Must(t, err)
	_, err = e.vols.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: id, TargetPath: target})
	simtest.Must(t, err) // nothing mounted: success
	dn, err := e.vols.GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: id})
	if err != nil || dn.DiskNumber != 1 {
		t.Fatalf("GetDiskNumberFromVolumeID = %+v, %v", dn, err)
	}
	_, err = e.disks.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: 1, IsOnline: false})
	simtest.Must(t, err)
	_, err = e.vols.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: target})
	simtest.WantKind(t, err, errdefs.ErrNotFound)
	// Its volume is gone while the disk is offline, as on Windows.
	_, err = e.vols.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id})
	simtest.WantKind(t, err, errdefs.ErrNotFound)
}

func TestSimMountVolume(t *testing.T) {
	e := newEnv(t)
	target := kubelet + `\staging`
	a := e.stage(t, 1, target)
	// The same volume at the same path again (GUID in upper case): success.
	upper := strings.Replace(strings.ToUpper(a), "VOLUME", "Volume", 1)
	_, err := e.vols.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: upper, TargetPath: target})
	simtest.Must(t, err)
	// Another volume at that path: refused by the Service.
	b := e.stage(t, 2, kubelet+`\alt`)
	_, err = e.vols.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: b, TargetPath: target})
	simtest.WantKind(t, err, errdefs.ErrFailedPrecondition)
	// Unmounting with the wrong volume: refused.
	_, err = e.vols.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: b, TargetPath: target})
	simtest.WantKind(t, err, errdefs.ErrFailedPrecondition)
	// Outside the working dirs, even by a prefix that only looks inside.
	for _, p := range []string{`C:\var\lib\kubelet-x\m`, `C:\Windows\m`, `D:\m`} {
		_, err = e.vols.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: a, TargetPath: p})
		simtest.WantKind(t, err, errdefs.ErrPermissionDenied)
	}
	// A working directory itself, however spelt: mounting over it would
	// hide everything kubelet keeps there; unmounting it likewise.
	for _, p := range []string{kubelet, `c:/var/lib/kubelet/`, kubelet + `\.`} {
		_, err = e.vols.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: a, TargetPath: p})
		simtest.WantKind(t, err, errdefs.ErrPermissionDenied)
		_, err = e.vols.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: a, TargetPath: p})
		simtest.WantKind(t, err, errdefs.ErrPermissionDenied)
	}
	_, err = e.vols.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: "not-a-volume", TargetPath: target})
	simtest.WantKind(t, err, errdefs.ErrInvalidArgument)
	// A non-empty directory: the host refuses it.
	simtest.Must(t, e.h.WriteFile(kubelet+`\full`, nil))
	simtest.Must(t, e.h.Filesystem().Mkdir(ctx, kubelet+`\dir`))
	simtest.Must(t, e.h.WriteFile(kubelet+`\dir\f`, nil))
	_, err = e.vols.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: b, TargetPath: kubelet + `\dir`})
	simtest.WantKind(t, err, errdefs.ErrFailedPrecondition)
}

func TestSimFormatVolumeTwice(t *testing.T) {
	e := newEnv(t)
	id := e.stage(t, 1, kubelet+`\s`)
	simtest.Must(t, e.h.WriteFile(kubelet+`\s\data`, []byte("precious")))
	_, err := e.vols.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: id})
	simtest.WantKind(t, err, errdefs.ErrFailedPrecondition)
	if got, err := e.h.ReadFile(kubelet + `\s\data`); err != nil || string(got) != "precious" {
		t.Errorf("the refused format lost data: %q, %v", got, err)
	}
}

func TestSimResizeVolume(t *testing.T) {
	e := newEnv(t)
	id := e.stage(t, 1, kubelet+`\s`)
	size := func() int64 {
		t.Helper()
		st, err := e.vols.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id})
		simtest.Must(t, err)
		return st.TotalBytes
	}
	before := size()
	// Right after formatting: nothing to gain, success.
	_, err := e.vols.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: id})
	simtest.Must(t, err)
	// Disk grown by 64 MiB (< 100 MiB): a no-op.
	simtest.Must(t, e.h.ResizeDisk(1, 1<<30+64<<20))
	_, err = e.vols.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: id})
	simtest.Must(t, err)
	if got := size(); got != before {
		t.Errorf("a 64 MiB gain resized the volume to %d", got)
	}
	// Disk grown to 2 GiB: the volume grows to the maximum.
	simtest.Must(t, e.h.ResizeDisk(1, 2<<30))
	_, err = e.vols.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: id})
	simtest.Must(t, err)
	if got := size(); got != 2046<<20 {
		t.Errorf("size after growth = %d; want %d", got, 2046<<20)
	}
	_, err = e.vols.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: id, SizeBytes: 3 << 30})
	simtest.WantKind(t, err, errdefs.ErrOutOfRange)
	_, err = e.vols.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: id, SizeBytes: 512 << 20})
	simtest.Must(t, err) // a shrink: skipped
	if got := size(); got != 2046<<20 {
		t.Errorf("a shrink request changed the size to %d", got)
	}
}

func TestSimClosestVolumeAndCache(t *testing.T) {
	e := newEnv(t)
	id := e.stage(t, 1, kubelet+`\s`)
	simtest.Must(t, e.h.Filesystem().Mkdir(ctx, kubelet+`\s\a\b`))
	got, err := e.vols.GetClosestVolumeIDFromTargetPath(ctx, &volume.GetClosestVolumeIDFromTargetPathRequest{TargetPath: kubelet + `\s\a\b`})
	if err != nil || got.VolumeID != id {
		t.Errorf("closest volume = %+v, %v", got, err)
	}
	got, err = e.vols.GetClosestVolumeIDFromTargetPath(ctx, &volume.GetClosestVolumeIDFromTargetPathRequest{TargetPath: kubelet})
	if err != nil || got.VolumeID == id || got.VolumeID == "" {
		t.Errorf("closest volume of the kubelet dir = %+v, %v; want C:", got, err)
	}
	_, err = e.vols.WriteVolumeCache(ctx, &volume.WriteVolumeCacheRequest{VolumeID: id})
	simtest.Must(t, err)
	_, err = e.vols.WriteVolumeCache(ctx, &volume.WriteVolumeCacheRequest{VolumeID: `\\?\Volume{00000000-0000-4000-8000-000000000000}\`})
	simtest.WantKind(t, err, errdefs.ErrNotFound)
}

// TestSimUnmountThroughPublishLink: a pod's publish path is a link to the
// staging mount point. UnmountVolume of the publish path must neither
// report "nothing mounted" (the volume is still mounted, at staging: a
// driver that then takes the disk offline would do so under a live mount)
// nor a bare NotFound: it is FailedPrecondition naming the situation, and
// the staging mount is left as it was.
func TestSimUnmountThroughPublishLink(t *testing.T) {
	e := newEnv(t)
	staging := kubelet + `\plugins\kubernetes.io\csi\pd.csi.storage.gke.io\pv1\globalmount`
	publish := kubelet + `\pods\uid1\volumes\kubernetes.io~csi\pv1\mount`
	simtest.Must(t, e.h.MkdirAll(staging))
	simtest.Must(t, e.h.MkdirAll(kubelet+`\pods\uid1\volumes\kubernetes.io~csi\pv1`))
	id := e.stage(t, 1, staging)
	simtest.Must(t, e.h.Filesystem().CreateSymlink(ctx, staging, publish))
	_, err := e.vols.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: id, TargetPath: publish})
	simtest.WantKind(t, err, errdefs.ErrFailedPrecondition)
	if err != nil && !strings.Contains(err.Error(), "not its mount point") {
		t.Errorf("UnmountVolume through the publish link: %v; want it to say the path is not the mount point", err)
	}
	got, err := e.vols.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: staging})
	if err != nil || got.VolumeID != id {
		t.Errorf("after the refused unmount, staging holds %+v, %v; want volume %s still mounted", got, err, id)
	}
}
