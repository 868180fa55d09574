//go:build linux

package blockdev

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/loopdisk"
)

// mountUtilsFormat applies k8s.io/mount-utils' GetDiskFormat rule (v0.37,
// mount_linux.go getDiskFormat) to a device: run
// `blkid -p -s TYPE -s PTTYPE -o export <dev>`; exit status 2 means
// "unformatted" (""); any PTTYPE line makes the answer
// "unknown data, probably partitions" (and kubelet refuses to format or
// mount it); otherwise the TYPE line is the filesystem type.
func mountUtilsFormat(t *testing.T, dev string) string {
	t.Helper()
	out, err := exec.Command("blkid", "-p", "-s", "TYPE", "-s", "PTTYPE", "-o", "export", dev).Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 2 {
		return ""
	}
	if err != nil {
		t.Fatalf("blkid -p %s: %v", dev, err)
	}
	var fstype, pttype string
	for _, l := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
		switch {
		case !ok:
		case k == "TYPE":
			fstype = v
		case k == "PTTYPE":
			pttype = v
		}
	}
	if pttype != "" {
		return "unknown data, probably partitions"
	}
	return fstype
}

// TestWholeDiskVolume: aws-ebs, gce-pd and azuredisk on Linux format the
// whole device (mkfs /dev/xvdf, no partition table). Such a disk is one
// volume, the whole disk, whose ID is the filesystem UUID (as blkid and
// /dev/disk/by-uuid show it); PartitionDisk leaves it alone, and it
// stages, grows and unstages through the Services.
func TestWholeDiskVolume(t *testing.T) {
	testutil.RequireRoot(t)
	for _, tc := range loopdisk.WholeDisk {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			testutil.RequireTool(t, tc.Package, tc.Mkfs[0])
			testutil.RequireTool(t, "util-linux", "blkid")
			wholeDisk(t, tc.Name, tc.Mkfs, tc.Size)
		})
	}
}

func wholeDisk(t *testing.T, fs string, mkfs []string, size int64) {
	ctx := context.Background()
	h := newHarness(t)
	l := h.attach("csi-whole-"+fs+".img", size)
	if out, err := exec.Command(mkfs[0], append(mkfs[1:], l.path)...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v: %s", mkfs, err, out)
	}
	uuid := blkid(t, "UUID", l.path)
	if uuid == "" {
		t.Fatalf("blkid finds no UUID on %s", l.path)
	}
	// The daemon's filesystem setting is the other one: a whole-disk
	// volume is mounted as what it holds, whatever the proxy would create.
	other := map[string]string{"ext4": "xfs", "xfs": "ext4"}[fs]
	ds, vs, b := realServices(t, h, other, l.name)
	n := findLoop(t, ds, l)

	vols, err := vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: n})
	if err != nil || len(vols.VolumeIDs) != 1 || vols.VolumeIDs[0] != uuid {
		t.Fatalf("ListVolumesOnDisk = %+v, %v; want the filesystem UUID %s", vols, err, uuid)
	}
	id := uuid
	head := loopdisk.ReadHead(t, l.path)
	for i := 0; i < 2; i++ {
		if _, err := ds.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: n}); err != nil {
			t.Fatalf("PartitionDisk #%d of a whole-disk %s: %v", i+1, fs, err)
		}
	}
	if !bytes.Equal(head, loopdisk.ReadHead(t, l.path)) || blkid(t, "PTTYPE", l.path) != "" {
		t.Fatal("PartitionDisk wrote to a disk holding a whole-disk filesystem")
	}
	if r, err := vs.IsVolumeFormatted(ctx, &volume.IsVolumeFormattedRequest{VolumeID: id}); err != nil || !r.Formatted {
		t.Fatalf("IsVolumeFormatted = %+v, %v", r, err)
	}
	err = b.FormatVolume(ctx, id)
	wantErr(t, err, errdefs.ErrFailedPrecondition, "already holds "+fs)
	if dn, err := vs.GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: id}); err != nil || dn.DiskNumber != n {
		t.Fatalf("GetDiskNumberFromVolumeID = %+v, %v", dn, err)
	}

	staging := filepath.Join(h.root, "globalmount")
	for i := 0; i < 2; i++ {
		if _, err := vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: staging}); err != nil {
			t.Fatalf("MountVolume #%d: %v", i+1, err)
		}
	}
	if at, err := vs.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: staging}); err != nil || at.VolumeID != id {
		t.Fatalf("GetVolumeIDFromTargetPath = %+v, %v", at, err)
	}
	if c, err := vs.GetClosestVolumeIDFromTargetPath(ctx, &volume.GetClosestVolumeIDFromTargetPathRequest{TargetPath: staging + "/x/y"}); err != nil || c.VolumeID != id {
		t.Fatalf("GetClosestVolumeIDFromTargetPath = %+v, %v", c, err)
	}
	payload := bytes.Repeat([]byte("whole disk "), 4<<10)
	if err := os.WriteFile(filepath.Join(staging, "data"), payload, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := vs.WriteVolumeCache(ctx, &volume.WriteVolumeCacheRequest{VolumeID: id}); err != nil {
		t.Fatal(err)
	}
	stats, err := vs.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id})
	if err != nil || stats.TotalBytes <= 0 || stats.TotalBytes > size {
		t.Fatalf("GetVolumeStats = %+v, %v", stats, err)
	}
	_, err = ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: false})
	wantErr(t, err, errdefs.ErrFailedPrecondition, "unmount it first")

	// The cloud grows the disk; NodeExpand.
	h.grow(l, 2*size)
	if _, err := ds.Rescan(ctx, &disk.RescanRequest{}); err != nil {
		t.Fatal(err)
	}
	cur0, max0, err := b.VolumeSizes(ctx, id)
	if err != nil || max0 != 2*size || cur0 > size {
		t.Fatalf("VolumeSizes after growth = %d, %d, %v; want current <= %d, maximum %d", cur0, max0, err, size, 2*size)
	}
	_, err = vs.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: id})
	grown := err == nil
	switch {
	case fs == "ext4" && !hasCapSysResource(t):
		wantErr(t, err, errdefs.ErrFailedPrecondition, "CAP_SYS_RESOURCE")
	case err != nil:
		t.Fatalf("online ResizeVolume: %v", err)
	}
	for i := 0; i < 2; i++ {
		if _, err := vs.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: id, TargetPath: staging}); err != nil {
			t.Fatalf("UnmountVolume #%d: %v", i+1, err)
		}
	}
	if !grown {
		if _, err := vs.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: id}); err != nil {
			t.Fatalf("offline ResizeVolume: %v", err)
		}
	}
	if cur, _, err := b.VolumeSizes(ctx, id); err != nil || cur < 2*size-volume.MinResizeGain {
		t.Fatalf("after ResizeVolume the filesystem is %d bytes, %v; want about %d", cur, err, 2*size)
	}
	if _, err := vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: staging}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(staging, "data")); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("data after growth: %d bytes, %v", len(got), err)
	}
	if _, err := vs.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: id, TargetPath: staging}); err != nil {
		t.Fatal(err)
	}
	// Re-stage after an offline unstage: PartitionDisk on the offline
	// whole-disk volume reads it and leaves it alone, offline.
	if _, err := ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: false}); err != nil {
		t.Fatal(err)
	}
	if _, err := ds.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: n}); err != nil {
		t.Fatalf("PartitionDisk(offline whole-disk volume): %v", err)
	}
	if s, err := ds.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: n}); err != nil || s.IsOnline {
		t.Fatalf("GetDiskState = %+v, %v; want offline", s, err)
	}
	if _, err := ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: true}); err != nil {
		t.Fatal(err)
	}
	if got := mountUtilsFormat(t, l.path); got != fs {
		t.Fatalf("mount-utils' rule reads %q on the whole disk, want %s", got, fs)
	}
}

// findLoop finds a loop disk's number by its backing file, as drivers find
// disks by their IDs.
func findLoop(t *testing.T, ds *disk.Service, l *loopDisk) uint32 {
	t.Helper()
	ids, err := ds.ListDiskIDs(context.Background(), &disk.ListDiskIDsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for num, id := range ids.DiskIDs {
		if id.SerialNumber == l.file {
			return num
		}
	}
	t.Fatalf("no disk with serial %s in %+v", l.file, ids.DiskIDs)
	return 0
}
