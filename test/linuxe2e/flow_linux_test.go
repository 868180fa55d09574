//go:build linux

package linuxe2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/loopdisk"
	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

// typeLinuxData is the GPT type PartitionDisk gives its partition.
const typeLinuxData = "0fc63daf-8483-4772-8e79-3d69d8477de4"

// TestStageFlow is a CSI node plugin's life cycle of one block volume on a
// real loop disk, through the daemon's sockets, for each filesystem the
// daemon can be told to create. The two run one after the other: two
// daemons would both reconcile every loop disk's partitions.
func TestStageFlow(t *testing.T) {
	testutil.RequireRoot(t)
	for _, tc := range loopdisk.Growable {
		t.Run(tc.Name, func(t *testing.T) {
			testutil.RequireTool(t, tc.Package, tc.Tools...)
			start := time.Now()
			n := newNode(t, tc.Name)
			stageFlow(t, n, tc.Size)
			t.Logf("%s: %d mutating calls made twice; flow took %v (daemon start included)", tc.Name, n.twiceCalls, time.Since(start).Round(time.Millisecond))
		})
	}
}

func stageFlow(t *testing.T, n *node, size int64) {
	ctx := n.ctx()
	l := n.attach("csi-e2e-"+n.fsType+".img", size)
	// A second, small disk: its volume is the "other volume" that must
	// not be mounted over the first.
	other := n.attach("csi-e2e-other.img", 32<<20)

	// 1. Find the disk the way drivers do. Before it is partitioned a
	// loop device's only ID is its backing file (SerialNumber); its
	// number is the kernel's diskseq.
	num := n.findDisk(l.File, "")
	if seq, err := l.Diskseq(); err != nil || seq != num {
		t.Fatalf("disk number %d is not %s's diskseq (%d, %v)", num, l.Name, seq, err)
	}
	if got := n.diskSize(num); got != size {
		t.Fatalf("GetDiskStats = %d bytes, want %d", got, size)
	}
	if !n.online(num) {
		t.Fatal("a fresh loop disk reads offline")
	}
	locs, err := n.disk.ListDiskLocations(ctx, &diskv1.ListDiskLocationsRequest{})
	n.ok("ListDiskLocations", err)
	if _, ok := locs.DiskLocations[num]; ok {
		t.Errorf("a loop disk has a SCSI location: %v", locs.DiskLocations[num])
	}

	// 2. Online (already online: a no-op, twice).
	n.twice("SetDiskState(online)", func() error {
		_, err := n.disk.SetDiskState(n.ctx(), &diskv1.SetDiskStateRequest{DiskNumber: num, IsOnline: true})
		return err
	})
	if !n.online(num) || l.Attr("ro") != "0" {
		t.Fatalf("after SetDiskState(online): online %v, ro %s", n.online(num), l.Attr("ro"))
	}

	// 3. Partition: a GPT with one Linux data partition, visible to the
	// kernel at once (BLKPG); the second call leaves the table alone.
	n.twice("PartitionDisk", func() error { return n.partition(num) })
	gpt, err := linuxnode.ReadGPT(l.Path)
	n.ok("read the GPT", err)
	if len(gpt.Partitions) != 1 || gpt.Partitions[0].TypeGUID != typeLinuxData || gpt.Partitions[0].Index != 1 {
		t.Fatalf("GPT after PartitionDisk: %+v", gpt.Partitions)
	}
	part := l.Path + "p1"
	if _, err := os.Stat(part); err != nil {
		t.Fatalf("no partition device after PartitionDisk: %v", err)
	}
	if start := l.Attr(l.Name + "p1/start"); start != strconv.FormatUint(gpt.Partitions[0].First, 10) {
		t.Fatalf("kernel partition starts at sector %s, the GPT says %d", start, gpt.Partitions[0].First)
	}
	// Partitioned, the disk is also found by its GPT disk GUID (page83),
	// and its number has not changed.
	if got := n.findDisk("", gpt.DiskGUID); got != num {
		t.Fatalf("disk with page83 %s is %d, want %d", gpt.DiskGUID, got, num)
	}
	otherNum := n.findDisk(other.File, "")
	n.twice("PartitionDisk(other disk)", func() error { return n.partition(otherNum) })

	// 4. The volume: the partition's unique GUID.
	vols, err := n.vol.ListVolumesOnDisk(ctx, &volumev1.ListVolumesOnDiskRequest{DiskNumber: num})
	n.ok("ListVolumesOnDisk", err)
	if len(vols.VolumeIds) != 1 || vols.VolumeIds[0] != gpt.Partitions[0].ID {
		t.Fatalf("ListVolumesOnDisk = %v, the GPT's partition GUID is %s", vols.VolumeIds, gpt.Partitions[0].ID)
	}
	id := vols.VolumeIds[0]
	one, err := n.vol.ListVolumesOnDisk(ctx, &volumev1.ListVolumesOnDiskRequest{DiskNumber: num, PartitionNumber: 1})
	if err != nil || len(one.VolumeIds) != 1 || one.VolumeIds[0] != id {
		t.Fatalf("ListVolumesOnDisk(partition 1) = %v, %v", one, err)
	}
	_, err = n.vol.ListVolumesOnDisk(ctx, &volumev1.ListVolumesOnDiskRequest{DiskNumber: num, PartitionNumber: 2})
	n.wantErr("ListVolumesOnDisk(partition 2)", err, codes.NotFound, "has no partition 2")
	dn, err := n.vol.GetDiskNumberFromVolumeID(ctx, &volumev1.GetDiskNumberFromVolumeIDRequest{VolumeId: id})
	if err != nil || dn.DiskNumber != num {
		t.Fatalf("GetDiskNumberFromVolumeID = %v, %v; want %d", dn, err, num)
	}
	otherGPT, err := linuxnode.ReadGPT(other.Path)
	n.ok("read the other disk's GPT", err)
	otherID := otherGPT.Partitions[0].ID

	// 5. Format once: IsVolumeFormatted, FormatVolume, and a second
	// FormatVolume is refused without touching the volume.
	formatted := func() bool {
		t.Helper()
		r, err := n.vol.IsVolumeFormatted(n.ctx(), &volumev1.IsVolumeFormattedRequest{VolumeId: id})
		n.ok("IsVolumeFormatted", err)
		return r.Formatted
	}
	if formatted() {
		t.Fatal("a new partition reads formatted")
	}
	_, err = n.vol.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: id})
	n.ok("FormatVolume", err)
	if !formatted() {
		t.Fatal("IsVolumeFormatted is false after FormatVolume")
	}
	head := loopdisk.ReadHead(t, part)
	before := n.state()
	_, err = n.vol.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: id})
	n.wantErr("FormatVolume(formatted volume)", err, codes.FailedPrecondition, "already formatted")
	if !bytes.Equal(head, loopdisk.ReadHead(t, part)) || n.state() != before {
		t.Fatal("a refused FormatVolume changed the volume")
	}

	// 6. Stage: Mkdir the staging path's parent, MountVolume.
	staging := n.path("plugins", "kubernetes.io", "csi", "example.csi.io", "4f5e6d7c8b9a", "globalmount")
	n.twice("Mkdir(staging parent)", func() error {
		_, err := n.fs.Mkdir(n.ctx(), &filesystemv1.MkdirRequest{Path: filepath.Dir(staging)})
		return err
	})
	n.twice("MountVolume(staging)", func() error {
		_, err := n.vol.MountVolume(n.ctx(), &volumev1.MountVolumeRequest{VolumeId: id, TargetPath: staging})
		return err
	})
	if c := n.mountsAt(staging); c != 1 {
		t.Fatalf("%d mounts at the staging path, want 1", c)
	}
	for _, m := range n.s.Mounts() {
		if m.MountPoint == staging && (m.Source != part || m.FSType != n.fsType) {
			t.Fatalf("staging mount is %s %s, want %s %s", m.Source, m.FSType, part, n.fsType)
		}
	}
	at, err := n.vol.GetVolumeIDFromTargetPath(ctx, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: staging})
	if err != nil || at.VolumeId != id {
		t.Fatalf("GetVolumeIDFromTargetPath(staging) = %v, %v; want %s", at, err, id)
	}
	// Another volume at the mounted path: refused, nothing stacked.
	_, err = n.vol.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: otherID, TargetPath: staging})
	n.wantErr("MountVolume(other volume, staging)", err, codes.FailedPrecondition, "already the mount point of volume "+id)
	if c := n.mountsAt(staging); c != 1 {
		t.Fatalf("%d mounts at the staging path after the refused mount, want 1", c)
	}
	// Taking the disk offline while it is mounted is refused.
	_, err = n.disk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: num, IsOnline: false})
	n.wantErr("SetDiskState(offline) while mounted", err, codes.FailedPrecondition, "unmount it first")

	payload := bytes.Repeat([]byte("csi-node-proxy linuxe2e "), 8<<10)
	if err := os.WriteFile(filepath.Join(staging, "data"), payload, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = n.vol.WriteVolumeCache(ctx, &volumev1.WriteVolumeCacheRequest{VolumeId: id})
	n.ok("WriteVolumeCache", err)

	// 7. Publish: the pod's volume path is a symlink to the staging path.
	publish := n.publishPath("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "pvc-e2e")
	n.twice("CreateSymlink(publish -> staging)", func() error {
		_, err := n.fs.CreateSymlink(n.ctx(), &filesystemv1.CreateSymlinkRequest{SourcePath: staging, TargetPath: publish})
		return err
	})
	if target, err := os.Readlink(publish); err != nil || target != staging {
		t.Fatalf("publish path links to %q (%v), want %q", target, err, staging)
	}
	isLink, err := n.fs.IsSymlink(ctx, &filesystemv1.IsSymlinkRequest{Path: publish})
	if err != nil || !isLink.IsSymlink {
		t.Fatalf("IsSymlink(publish) = %v, %v", isLink, err)
	}
	if got, err := os.ReadFile(filepath.Join(publish, "data")); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("data through the publish link: %d bytes, %v", len(got), err)
	}
	at, err = n.vol.GetVolumeIDFromTargetPath(ctx, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: publish})
	if err != nil || at.VolumeId != id {
		t.Fatalf("GetVolumeIDFromTargetPath(publish) = %v, %v; want %s", at, err, id)
	}

	// 8. Stats, checked against statfs(2).
	total0, used0 := n.volumeStats(id, staging)
	if total0 <= 0 || used0 < int64(len(payload)) || total0 > size {
		t.Fatalf("GetVolumeStats = total %d used %d on a %d-byte disk with %d bytes written", total0, used0, size, len(payload))
	}

	// 9. The cloud grows the disk: the backing file doubles and the loop
	// driver is told (LOOP_SET_CAPACITY); the driver rescans and expands.
	l.Grow(t, 2*size)
	n.twice("Rescan", func() error {
		_, err := n.disk.Rescan(n.ctx(), &diskv1.RescanRequest{})
		return err
	})
	if got := n.diskSize(num); got != 2*size {
		t.Fatalf("after growth GetDiskStats = %d, want %d", got, 2*size)
	}
	if got := n.findDisk(l.File, ""); got != num {
		t.Fatalf("the disk's number changed with its capacity: %d -> %d", num, got)
	}
	partSize := l.Attr(l.Name + "p1/size")
	resize := func() error {
		_, err := n.vol.ResizeVolume(n.ctx(), &volumev1.ResizeVolumeRequest{VolumeId: id, SizeBytes: 0})
		return err
	}
	grown := false
	if n.fsType == "ext4" {
		// Online ext4 growth needs CAP_SYS_RESOURCE, which the CI VM
		// lacks: documented FailedPrecondition, nothing changed.
		before := n.state()
		if err := resize(); err == nil {
			t.Log("online ext4 growth worked: the daemon has CAP_SYS_RESOURCE")
			grown = true
		} else {
			n.wantErr("ResizeVolume(mounted ext4)", err, codes.FailedPrecondition, "CAP_SYS_RESOURCE")
			if after := n.state(); after != before {
				t.Fatalf("a refused ResizeVolume changed the node:\n%s", diff(before, after))
			}
		}
		if grown {
			// The call was made once above; a second must change
			// nothing.
			n.twice("ResizeVolume(0) (online ext4)", resize)
		}
	} else {
		n.twice("ResizeVolume(0) (online xfs)", resize)
		grown = true
	}
	if grown {
		checkGrown(t, n, l, id, staging, partSize, total0, size)
	}

	// 10. Unpublish: Rmdir(force) of the link removes the link, never the
	// data behind it.
	n.twice("Rmdir(publish, force)", func() error {
		_, err := n.fs.Rmdir(n.ctx(), &filesystemv1.RmdirRequest{Path: publish, Force: true})
		return err
	})
	if exists(publish) {
		t.Fatal("the publish link survived Rmdir(force)")
	}
	if got, err := os.ReadFile(filepath.Join(staging, "data")); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("data after unpublish: %d bytes, %v", len(got), err)
	}

	// 11. ext4 without CAP_SYS_RESOURCE: grow offline (unmount, resize,
	// mount again), as docs/linux-block.md says.
	if !grown {
		n.twice("UnmountVolume(staging) for offline growth", func() error {
			_, err := n.vol.UnmountVolume(n.ctx(), &volumev1.UnmountVolumeRequest{VolumeId: id, TargetPath: staging})
			return err
		})
		n.twice("ResizeVolume(0) (offline ext4)", resize)
		if got := l.Attr(l.Name + "p1/size"); got == partSize {
			t.Fatalf("offline ResizeVolume did not grow the partition (%s sectors)", got)
		}
		n.twice("MountVolume(staging) again", func() error {
			_, err := n.vol.MountVolume(n.ctx(), &volumev1.MountVolumeRequest{VolumeId: id, TargetPath: staging})
			return err
		})
		checkGrown(t, n, l, id, staging, partSize, total0, size)
		if got, err := os.ReadFile(filepath.Join(staging, "data")); err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("data after offline growth: %d bytes, %v", len(got), err)
		}
	}

	// 12. Unstage: UnmountVolume, then Rmdir of the staging directory.
	n.twice("UnmountVolume(staging)", func() error {
		_, err := n.vol.UnmountVolume(n.ctx(), &volumev1.UnmountVolumeRequest{VolumeId: id, TargetPath: staging})
		return err
	})
	if c := n.mountsAt(staging); c != 0 {
		t.Fatalf("%d mounts left at the staging path", c)
	}
	_, err = n.vol.GetVolumeIDFromTargetPath(ctx, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: staging})
	n.wantErr("GetVolumeIDFromTargetPath(unmounted)", err, codes.NotFound, "")
	_, err = n.vol.GetVolumeStats(ctx, &volumev1.GetVolumeStatsRequest{VolumeId: id})
	n.wantErr("GetVolumeStats(unmounted)", err, codes.FailedPrecondition, "not mounted")
	n.twiceRemove("Rmdir(staging)", func() error {
		_, err := n.fs.Rmdir(n.ctx(), &filesystemv1.RmdirRequest{Path: staging})
		return err
	})
	if exists(staging) {
		t.Fatal("the staging directory survived Rmdir")
	}

	// 13. Offline: the kernel's read-only flag, which the partition
	// follows; the volume cannot be mounted while the disk is offline.
	n.twice("SetDiskState(offline)", func() error {
		_, err := n.disk.SetDiskState(n.ctx(), &diskv1.SetDiskStateRequest{DiskNumber: num, IsOnline: false})
		return err
	})
	if n.online(num) || l.Attr("ro") != "1" || l.Attr(l.Name+"p1/ro") != "1" {
		t.Fatalf("after SetDiskState(offline): online %v, ro %s, p1 ro %s", n.online(num), l.Attr("ro"), l.Attr(l.Name+"p1/ro"))
	}
	_, err = n.vol.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: id, TargetPath: staging})
	n.wantErr("MountVolume(offline disk)", err, codes.FailedPrecondition, "offline")
	_, err = n.vol.ResizeVolume(ctx, &volumev1.ResizeVolumeRequest{VolumeId: id})
	if err != nil {
		// Nothing to gain is success before the offline check.
		n.wantErr("ResizeVolume(offline disk)", err, codes.FailedPrecondition, "offline")
	}
	// The data is still there: a read-only mount by the test shows it.
	ro := filepath.Join(n.s.Dir, "verify")
	n.ok("mkdir", os.Mkdir(ro, 0o750))
	opts := ""
	if n.fsType == "xfs" {
		opts = "nouuid,norecovery"
	}
	n.ok("read-only mount of the offline volume", unix.Mount(part, ro, n.fsType, unix.MS_RDONLY, opts))
	got, err := os.ReadFile(filepath.Join(ro, "data"))
	n.ok("unmount", unix.Unmount(ro, 0))
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("data on the offline disk: %d bytes, %v", len(got), err)
	}
}

// checkGrown checks that the partition and the filesystem grew to about
// the doubled disk, through GetVolumeStats (against statfs) and sysfs.
func checkGrown(t *testing.T, n *node, l *linuxnode.Loop, id, staging, partSizeBefore string, totalBefore, size int64) {
	t.Helper()
	if got := l.Attr(l.Name + "p1/size"); got == partSizeBefore {
		t.Fatalf("the partition did not grow (%s sectors)", got)
	}
	total, _ := n.volumeStats(id, staging)
	if total < totalBefore+size/2 {
		t.Fatalf("after growth GetVolumeStats total = %d, was %d; the disk grew by %d", total, totalBefore, size)
	}
	// Nothing more to gain: ResizeVolume is a no-op now.
	r, err := n.vol.ResizeVolume(n.ctx(), &volumev1.ResizeVolumeRequest{VolumeId: id})
	if err != nil || r == nil {
		t.Fatalf("ResizeVolume with nothing to gain: %v", err)
	}
	t.Logf("grown: filesystem %d -> %d bytes, partition %s -> %s sectors", totalBefore, total, partSizeBefore, l.Attr(l.Name+"p1/size"))
}
