//go:build linux

package blockdev

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/loopdisk"
)

// realServices returns the disk and volume Services on the real backend,
// limited to the given disks so the test never touches anyone else's.
func realServices(t *testing.T, h *harness, fs string, disks ...string) (*disk.Service, *volume.Service, *Backend) {
	t.Helper()
	b, err := New(Config{Filesystem: fs, DiskFilter: disks, MountRoots: []string{h.root}})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := hostpath.NewPolicy(hostpath.POSIX, []string{h.root})
	if err != nil {
		t.Fatal(err)
	}
	return disk.NewService(b.Disk()), volume.NewService(b.Volume(), pol), b
}

// loopVolume is where a root test of one volume starts: a harness with
// one loop disk, the real backend and its Services limited to that disk,
// the disk's number (found by its ID, as a driver finds it) and the one
// volume PartitionDisk made on it, not yet formatted.
type loopVolume struct {
	h  *harness
	l  *loopDisk
	ds *disk.Service
	vs *volume.Service
	b  *Backend
	n  uint32
	id string
}

// newLoopVolume attaches a loop disk of size bytes backed by the file
// named file and partitions it through the Services, for ext4. It skips
// the test unless it runs as root with mkfs.ext4 installed, since every
// caller formats the volume.
func newLoopVolume(t *testing.T, file string, size int64) *loopVolume {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "e2fsprogs", "mkfs.ext4")
	v := &loopVolume{h: newHarness(t)}
	v.l = v.h.attach(file, size)
	v.ds, v.vs, v.b = realServices(t, v.h, "ext4", v.l.name)
	v.n = findLoop(t, v.ds, v.l)
	v.id = partitionOne(t, v.ds, v.vs, v.n)
	return v
}

// format formats the volume through the volume Service.
func (v *loopVolume) format(t *testing.T) {
	t.Helper()
	if _, err := v.vs.FormatVolume(context.Background(), &volume.FormatVolumeRequest{VolumeID: v.id}); err != nil {
		t.Fatal(err)
	}
}

// blkid asks util-linux about a device, as an independent witness; "" if
// blkid is not installed.
func blkid(t *testing.T, tag, dev string) string {
	t.Helper()
	if _, err := exec.LookPath("blkid"); err != nil {
		return ""
	}
	out, err := exec.Command("blkid", "-p", "-s", tag, "-o", "value", dev).Output()
	if err != nil {
		t.Logf("blkid %s %s: %v", tag, dev, err)
	}
	return strings.TrimSpace(string(out))
}

func hasCapSysResource(t *testing.T) bool {
	caps, err := linuxKernel{}.capabilities()
	if err != nil {
		t.Fatal(err)
	}
	return caps&(1<<capSysResource) != 0
}

// TestLoopDiskLifecycle drives a CSI node's whole disk and volume flow
// through the group Services on real loop devices, for ext4 and XFS.
func TestLoopDiskLifecycle(t *testing.T) {
	testutil.RequireRoot(t)
	for _, tc := range loopdisk.Growable {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			testutil.RequireTool(t, tc.Package, tc.Tools...)
			lifecycle(t, tc.Name, tc.Size)
		})
	}
}

func lifecycle(t *testing.T, fs string, size int64) {
	ctx := context.Background()
	h := newHarness(t)
	l := h.attach("csi-test-"+fs+".img", size)
	ds, vs, b := realServices(t, h, fs, l.name)

	// Find the disk the way a driver does: by its IDs.
	n := findLoop(t, ds, l)
	if seq, _ := blocktopo.ReadAttr("/sys/block/"+l.name, "diskseq"); seq != strconv.FormatUint(uint64(n), 10) {
		t.Fatalf("disk number %d is not %s's diskseq %s", n, l.name, seq)
	}
	locs, err := ds.ListDiskLocations(ctx, &disk.ListDiskLocationsRequest{})
	if err != nil || locs.DiskLocations[n] != nil {
		t.Fatalf("a loop device has a location: %+v, %v", locs, err)
	}
	st, err := ds.GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: n})
	if err != nil || st.TotalBytes != size {
		t.Fatalf("GetDiskStats = %+v, %v", st, err)
	}

	for i := 0; i < 2; i++ {
		if _, err := ds.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: n}); err != nil {
			t.Fatalf("PartitionDisk #%d: %v", i+1, err)
		}
	}
	part := l.path + "p1"
	if _, err := os.Stat(part); err != nil {
		t.Fatalf("no partition device after PartitionDisk: %v", err)
	}
	vols, err := vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: n})
	if err != nil || len(vols.VolumeIDs) != 1 {
		t.Fatalf("ListVolumesOnDisk = %+v, %v", vols, err)
	}
	id := vols.VolumeIDs[0]
	if one, err := vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: n, PartitionNumber: 1}); err != nil || one.VolumeIDs[0] != id {
		t.Fatalf("ListVolumesOnDisk(partition 1) = %+v, %v", one, err)
	}
	if w := blkid(t, "PART_ENTRY_UUID", part); w != "" && w != id {
		t.Fatalf("blkid says the partition blocktopo.GUID is %s, the volume ID is %s", w, id)
	}
	// Partitioned, the loop device has a GPT disk GUID for page83.
	ids, err := ds.ListDiskIDs(ctx, &disk.ListDiskIDsRequest{})
	if err != nil || ids.DiskIDs[n] == nil || ids.DiskIDs[n].Page83 == "" {
		t.Fatalf("ListDiskIDs after PartitionDisk = %+v, %v", ids, err)
	}
	if w := blkid(t, "PTUUID", l.path); w != "" && w != ids.DiskIDs[n].Page83 {
		t.Fatalf("blkid says the disk blocktopo.GUID is %s, page83 is %s", w, ids.DiskIDs[n].Page83)
	}

	// BLKRRPART drops BLKPG partitions on a kernel without a GPT parser
	// (a reboot loses them too). The reads that follow still find the
	// volume, as the table on the disk has it, and leave the kernel
	// alone; FormatVolume, which changes the volume, brings the device
	// back.
	if err := unix.IoctlSetInt(int(l.dev.Fd()), unix.BLKRRPART, 0); err != nil {
		t.Fatalf("BLKRRPART: %v", err)
	}
	if vols, err := vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: n}); err != nil || len(vols.VolumeIDs) != 1 || vols.VolumeIDs[0] != id {
		t.Fatalf("ListVolumesOnDisk after BLKRRPART = %+v, %v", vols, err)
	}
	if isFormatted(t, vs, id) {
		t.Fatal("a new partition is formatted")
	}
	if _, err := os.Stat(part); err == nil {
		t.Fatal("a read gave the partition its device back")
	}
	if _, err := vs.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(part); err != nil {
		t.Fatalf("FormatVolume did not restore the partition device after BLKRRPART: %v", err)
	}
	if !isFormatted(t, vs, id) {
		t.Fatal("formatted volume reads unformatted")
	}
	if w := blkid(t, "TYPE", part); w != "" && w != fs {
		t.Fatalf("blkid says %s holds %s", part, w)
	}
	// A Linux driver (rollback, a mixed fleet) must be able to mount the
	// partition with mount-utils' rules: blkid -p on it must give the
	// filesystem and no partition table type.
	if _, err := exec.LookPath("blkid"); err == nil {
		if got := mountUtilsFormat(t, part); got != fs {
			t.Fatalf("mount-utils' GetDiskFormat rule reads %q on %s, want %s", got, part, fs)
		}
	}
	_, err = vs.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: id})
	wantErr(t, err, errdefs.ErrFailedPrecondition, "already formatted")

	target := filepath.Join(h.root, "globalmount")
	for i := 0; i < 2; i++ {
		if _, err := vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: target}); err != nil {
			t.Fatalf("MountVolume #%d: %v", i+1, err)
		}
	}
	if at, err := vs.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: target}); err != nil || at.VolumeID != id {
		t.Fatalf("GetVolumeIDFromTargetPath = %+v, %v", at, err)
	}
	if c, err := vs.GetClosestVolumeIDFromTargetPath(ctx, &volume.GetClosestVolumeIDFromTargetPathRequest{TargetPath: target + "/a/b"}); err != nil || c.VolumeID != id {
		t.Fatalf("GetClosestVolumeIDFromTargetPath = %+v, %v", c, err)
	}
	_, err = vs.GetClosestVolumeIDFromTargetPath(ctx, &volume.GetClosestVolumeIDFromTargetPathRequest{TargetPath: h.root + "/elsewhere"})
	wantErr(t, err, errdefs.ErrNotFound, "not a volume the proxy manages")

	payload := bytes.Repeat([]byte("csi-node-proxy "), 64<<10/15)
	if err := os.WriteFile(filepath.Join(target, "data"), payload, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := vs.WriteVolumeCache(ctx, &volume.WriteVolumeCacheRequest{VolumeID: id}); err != nil {
		t.Fatal(err)
	}
	stats, err := vs.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id})
	if err != nil || stats.TotalBytes <= 0 || stats.UsedBytes <= 0 || stats.UsedBytes > stats.TotalBytes || stats.TotalBytes > size {
		t.Fatalf("GetVolumeStats = %+v, %v", stats, err)
	}
	if dn, err := vs.GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: id}); err != nil || dn.DiskNumber != n {
		t.Fatalf("GetDiskNumberFromVolumeID = %+v, %v", dn, err)
	}
	_, err = ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: false})
	wantErr(t, err, errdefs.ErrFailedPrecondition, "unmount it first")

	// The cloud grows the disk; the driver rescans and expands.
	h.grow(l, 2*size)
	if _, err := ds.Rescan(ctx, &disk.RescanRequest{}); err != nil {
		t.Fatal(err)
	}
	if st, err := ds.GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: n}); err != nil || st.TotalBytes != 2*size {
		t.Fatalf("after growth GetDiskStats = %+v, %v (the number must survive a capacity change)", st, err)
	}
	cur0, max0, err := b.VolumeSizes(ctx, id)
	if err != nil || max0-cur0 < volume.MinResizeGain {
		t.Fatalf("VolumeSizes = %d, %d, %v", cur0, max0, err)
	}
	_, err = vs.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: id})
	onlineGrown := err == nil
	switch {
	case fs == "ext4" && !hasCapSysResource(t):
		// This machine: no CAP_SYS_RESOURCE, so EXT4_IOC_RESIZE_FS is
		// refused; the backend says so before changing anything.
		wantErr(t, err, errdefs.ErrFailedPrecondition, "CAP_SYS_RESOURCE")
		if cur, _, _ := b.VolumeSizes(ctx, id); cur != cur0 {
			t.Fatalf("a refused resize changed the volume: %d -> %d", cur0, cur)
		}
	case err != nil:
		t.Fatalf("online ResizeVolume: %v", err)
	}
	if onlineGrown {
		grown, err := vs.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id})
		if err != nil || grown.TotalBytes <= stats.TotalBytes+size/2 {
			t.Fatalf("after online growth GetVolumeStats = %+v (was %+v), %v", grown, stats, err)
		}
	}

	for i := 0; i < 2; i++ {
		if _, err := vs.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: id, TargetPath: target}); err != nil {
			t.Fatalf("UnmountVolume #%d: %v", i+1, err)
		}
	}
	_, err = vs.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: target})
	wantErr(t, err, errdefs.ErrNotFound, "not a mount point")
	_, err = vs.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id})
	wantErr(t, err, errdefs.ErrFailedPrecondition, "not mounted")

	if !onlineGrown {
		// Offline growth: e2fsck -f -y, resize2fs.
		if _, err := vs.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: id}); err != nil {
			t.Fatalf("offline ResizeVolume: %v", err)
		}
	}
	// The protective MBR covers the grown disk (sfdisk and fdisk check).
	sector0 := make([]byte, 512)
	if _, err := l.dev.ReadAt(sector0, 0); err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint32(sector0[446+12:]); blocktopo.ClassifyMBR(sector0) != blocktopo.MBRProtective || int64(got) != 2*size/512-1 {
		t.Fatalf("after growth the protective MBR covers %d sectors, want %d", got, 2*size/512-1)
	}
	cur, maxSize, err := b.VolumeSizes(ctx, id)
	if err != nil || maxSize-cur >= volume.MinResizeGain || cur <= cur0 {
		t.Fatalf("after growth VolumeSizes = %d, %d (was %d, %d), %v", cur, maxSize, cur0, max0, err)
	}
	// Nothing left to gain: skipped as success.
	if _, err := vs.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: id}); err != nil {
		t.Fatal(err)
	}

	// Mount again: the data survived, the filesystem is bigger.
	if _, err := vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: target}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(target, "data")); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("data after growth: %d bytes, %v", len(got), err)
	}
	if grown, err := vs.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id}); err != nil || grown.TotalBytes <= stats.TotalBytes+size/2 {
		t.Fatalf("after growth GetVolumeStats = %+v (was %+v), %v", grown, stats, err)
	}
	if _, err := vs.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: id, TargetPath: target}); err != nil {
		t.Fatal(err)
	}

	// Offline and back.
	for i := 0; i < 2; i++ {
		if _, err := ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: false}); err != nil {
			t.Fatalf("SetDiskState(offline) #%d: %v", i+1, err)
		}
	}
	if s, err := ds.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: n}); err != nil || s.IsOnline {
		t.Fatalf("GetDiskState = %+v, %v", s, err)
	}
	if ro, _ := blocktopo.ReadAttr("/sys/block/"+l.name+"/"+l.name+"p1", "ro"); ro != "1" {
		t.Fatalf("the partition of an offline disk is not read-only (ro=%q)", ro)
	}
	_, err = vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: target})
	wantErr(t, err, errdefs.ErrFailedPrecondition, "offline")
	// Partitioned: PartitionDisk reads the table and changes nothing; the
	// disk stays offline (drivers partition before SetDiskState(online)).
	if _, err := ds.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: n}); err != nil {
		t.Fatalf("PartitionDisk(offline, partitioned) = %v", err)
	}
	if s, err := ds.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: n}); err != nil || s.IsOnline {
		t.Fatalf("after PartitionDisk(offline, partitioned): GetDiskState = %+v, %v; want offline", s, err)
	}
	if _, err := ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: true}); err != nil {
		t.Fatal(err)
	}
	if s, err := ds.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: n}); err != nil || !s.IsOnline {
		t.Fatalf("GetDiskState = %+v, %v", s, err)
	}
	if _, err := vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: target}); err != nil {
		t.Fatalf("MountVolume after online: %v", err)
	}
	// The harness unmounts and detaches, and checks nothing is left.
}

// TestWrongInputs: unknown disks and volumes, and the disk holding the
// root filesystem.
func TestWrongInputs(t *testing.T) {
	testutil.RequireRoot(t)
	ctx := context.Background()
	h := newHarness(t)
	root, err := rootDisk()
	if err != nil {
		t.Skipf("the root filesystem is not on a disk: %v", err)
	}
	ds, vs, _ := realServices(t, h, "ext4", root)

	_, err = ds.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: 0})
	wantErr(t, err, errdefs.ErrNotFound, "disk 0 does not exist")
	_, err = ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: 0, IsOnline: true})
	wantErr(t, err, errdefs.ErrNotFound, "disk 0")
	_, err = vs.IsVolumeFormatted(ctx, &volume.IsVolumeFormattedRequest{VolumeID: "6e9c8e8c-0000-4000-8000-000000000000"})
	wantErr(t, err, errdefs.ErrNotFound, "does not exist")
	_, err = vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: "6e9c8e8c-0000-4000-8000-000000000000", TargetPath: h.root + "/m"})
	wantErr(t, err, errdefs.ErrNotFound, "does not exist")
	_, err = vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: 0})
	wantErr(t, err, errdefs.ErrNotFound, "disk 0")

	seq, err := blocktopo.ReadAttr("/sys/block/"+root, "diskseq")
	if err != nil {
		t.Skipf("no diskseq for %s: %v", root, err)
	}
	n, _ := strconv.ParseUint(seq, 10, 32)
	_, err = ds.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: uint32(n)})
	wantErr(t, err, errdefs.ErrFailedPrecondition, "belongs to the host")
	if !strings.Contains(err.Error(), "mounted at /") {
		t.Fatalf("the refusal does not say the disk holds the root filesystem: %v", err)
	}
	_, err = ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: uint32(n), IsOnline: false})
	wantErr(t, err, errdefs.ErrFailedPrecondition, "belongs to the host")
	if s, err := ds.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: uint32(n)}); err != nil || !s.IsOnline {
		t.Fatalf("root disk state = %+v, %v", s, err)
	}
	// GetClosestVolumeIDFromTargetPath on the root filesystem: a whole
	// disk, not a volume.
	_, err = vs.GetClosestVolumeIDFromTargetPath(ctx, &volume.GetClosestVolumeIDFromTargetPathRequest{TargetPath: h.root})
	wantErr(t, err, errdefs.ErrNotFound, "not a volume the proxy manages")
}

// rootDisk returns the kernel name of the whole disk holding "/".
func rootDisk() (string, error) {
	var st unix.Stat_t
	if err := unix.Stat("/", &st); err != nil {
		return "", err
	}
	dir := fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(real, "partition")); err == nil {
		real = filepath.Dir(real)
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	return filepath.Base(real), nil
}
