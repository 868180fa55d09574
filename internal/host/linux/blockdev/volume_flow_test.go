package blockdev

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/blockfixture"
)

// The disk and volume flows through the Services on the fake kernel: a
// driver's staging, the offline and SCSI states, and host disks.

func TestVolumeFlowOnFakeKernel(t *testing.T) {
	fx := newFixture(t)
	fx.exec.Respond = fakeMkfs(t)
	ds, vs, root := services(t, fx, Config{})
	ctx := context.Background()

	if _, err := ds.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: blockfixture.Loop3}); err != nil {
		t.Fatal(err)
	}
	if got := fx.k.takeCalls(); !reflect.DeepEqual(got, []string{fmt.Sprintf("add loop3 1 %d %d", 1<<20, (64<<20)-(2<<20))}) {
		t.Fatalf("kernel calls = %q", got)
	}
	if _, err := ds.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: blockfixture.Loop3}); err != nil {
		t.Fatal(err)
	}
	if got := fx.k.takeCalls(); len(got) != 0 {
		t.Fatalf("second PartitionDisk changed the kernel: %q", got)
	}
	vols, err := vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: blockfixture.Loop3})
	if err != nil || len(vols.VolumeIDs) != 1 {
		t.Fatalf("ListVolumesOnDisk = %v, %v", vols, err)
	}
	id := vols.VolumeIDs[0]
	if _, err := blocktopo.ParseGUID(id); err != nil || id != strings.ToLower(id) {
		t.Fatalf("volume ID %q is not a lower-case blocktopo.GUID", id)
	}
	if one, err := vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: blockfixture.Loop3, PartitionNumber: 1}); err != nil || !reflect.DeepEqual(one.VolumeIDs, []string{id}) {
		t.Fatalf("partition 1 = %v, %v", one, err)
	}
	_, err = vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: blockfixture.Loop3, PartitionNumber: 2})
	wantErr(t, err, errdefs.ErrNotFound, "no partition 2")
	ids, _ := ds.ListDiskIDs(ctx, &disk.ListDiskIDsRequest{})
	if p := ids.DiskIDs[blockfixture.Loop3].Page83; p == "" {
		t.Error("a partitioned loop device has no blocktopo.GPT disk blocktopo.GUID as page83")
	}

	// The kernel forgot the partition (a reboot on a kernel without GPT
	// support, a BLKRRPART): the reads still find the volume, and leave
	// the kernel alone; FormatVolume, which changes it, adds it back.
	if err := os.RemoveAll(filepath.Join(fx.sysfs, "block", "loop3", "loop3p1")); err != nil {
		t.Fatal(err)
	}
	if again, err := vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: blockfixture.Loop3}); err != nil || !reflect.DeepEqual(again.VolumeIDs, []string{id}) {
		t.Fatalf("ListVolumesOnDisk without the kernel partition = %v, %v", again, err)
	}
	if isFormatted(t, vs, id) {
		t.Fatal("new volume is formatted")
	}
	if got := fx.k.takeCalls(); len(got) != 0 {
		t.Fatalf("reads reached the kernel: %q", got)
	}
	if _, err := vs.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: id}); err != nil {
		t.Fatal(err)
	}
	if got := fx.k.takeCalls(); len(got) != 1 || !strings.HasPrefix(got[0], "add loop3 1 ") {
		t.Fatalf("FormatVolume's reconcile calls = %q", got)
	}
	dev := filepath.Join(fx.dev, "loop3p1")
	if calls := fx.exec.Calls(); !reflect.DeepEqual(calls, [][]string{{"blkid", "-p", "-o", "export", "--", dev}, {"mkfs.ext4", "-q", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1", dev}}) {
		t.Fatalf("mkfs argv = %q", calls)
	}
	if !isFormatted(t, vs, id) {
		t.Fatal("formatted volume reads as unformatted")
	}
	_, err = vs.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: strings.ToUpper(id)})
	wantErr(t, err, errdefs.ErrFailedPrecondition, "already formatted")

	target := filepath.Join(root, "staging", "globalmount")
	_, err = vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: target})
	wantErr(t, err, errdefs.ErrNotFound, "parent directory")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: target}); err != nil {
			t.Fatalf("MountVolume #%d: %v", i+1, err)
		}
	}
	if got := fx.k.takeCalls(); !reflect.DeepEqual(got, []string{"mount loop3p1 " + target + " ext4 "}) {
		t.Fatalf("mount calls = %q", got)
	}
	at, err := vs.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: target})
	if err != nil || at.VolumeID != id {
		t.Fatalf("GetVolumeIDFromTargetPath = %v, %v", at, err)
	}
	closest, err := vs.GetClosestVolumeIDFromTargetPath(ctx, &volume.GetClosestVolumeIDFromTargetPathRequest{TargetPath: target + "/not/yet/there"})
	if err != nil || closest.VolumeID != id {
		t.Fatalf("GetClosestVolumeIDFromTargetPath = %v, %v", closest, err)
	}
	_, err = vs.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: filepath.Dir(target)})
	wantErr(t, err, errdefs.ErrNotFound, "not a mount point")
	stats, err := vs.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id})
	if err != nil || stats.TotalBytes != 1<<30 || stats.UsedBytes != 1<<20 {
		t.Fatalf("GetVolumeStats = %+v, %v", stats, err)
	}
	num, err := vs.GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: id})
	if err != nil || num.DiskNumber != blockfixture.Loop3 {
		t.Fatalf("GetDiskNumberFromVolumeID = %v, %v", num, err)
	}
	if _, err := vs.WriteVolumeCache(ctx, &volume.WriteVolumeCacheRequest{VolumeID: id}); err != nil {
		t.Fatal(err)
	}
	if got := fx.k.takeCalls(); !reflect.DeepEqual(got, []string{"statfs " + target, "syncfs " + target, "flush loop3p1 false"}) {
		t.Fatalf("stats and flush calls = %q", got)
	}
	if _, err := ds.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: blockfixture.Loop3}); err != nil {
		t.Fatalf("PartitionDisk of a partitioned, mounted disk: %v", err)
	}
	_, err = ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: blockfixture.Loop3, IsOnline: false})
	wantErr(t, err, errdefs.ErrFailedPrecondition, "unmount it first")

	// Growth of a mounted ext4 without CAP_SYS_RESOURCE: refused, nothing
	// changed.
	fx.growDisk(t, "loop3", 256<<20)
	fx.k.caps = 0x000001fffeffffff
	_, err = vs.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: id})
	wantErr(t, err, errdefs.ErrFailedPrecondition, "CAP_SYS_RESOURCE")
	if got := fx.k.takeCalls(); len(got) != 0 {
		t.Fatalf("a refused resize changed the kernel: %q", got)
	}
	// With the capability: partition, then resize2fs online.
	fx.k.caps = ^uint64(0)
	fx.exec = &FakeExec{}
	b2 := fx.backend(t, Config{MountRoots: []string{root}})
	if err := b2.ResizeVolume(ctx, id, 254<<20); err != nil {
		t.Fatal(err)
	}
	if got := fx.k.takeCalls(); !reflect.DeepEqual(got, []string{fmt.Sprintf("resize loop3 1 %d %d", 1<<20, 254<<20)}) {
		t.Fatalf("resize calls = %q", got)
	}
	if calls := fx.exec.Calls(); !reflect.DeepEqual(calls, [][]string{{"resize2fs", dev}}) {
		t.Fatalf("online grow argv = %q", calls)
	}
	// The filesystem (the fake resize2fs did not grow it) is smaller than
	// the partition now: VolumeSizes reports the filesystem, so a retry
	// is not skipped as "nothing to gain".
	cur, maxSize, err := b2.VolumeSizes(ctx, id)
	if err != nil || cur != (64-2)<<20 || maxSize != 254<<20 {
		t.Fatalf("VolumeSizes = %d, %d, %v", cur, maxSize, err)
	}

	// A mount busy for longer than the backend waits stays mounted, and
	// the answer is Unavailable after unmountBusyTries tries.
	fx.k.unmountBusy = unmountBusyTries
	_, err = vs.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: id, TargetPath: target})
	wantErr(t, err, errdefs.ErrUnavailable, "busy")
	if got := fx.k.takeCalls(); len(got) != 1+unmountBusyTries {
		t.Fatalf("a mount busy throughout: calls = %q, want syncfs and %d unmounts", got, unmountBusyTries)
	}
	// Busy for a moment only: the unmount is tried again and works.
	fx.k.unmountBusy = 2
	for i := 0; i < 2; i++ {
		if _, err := vs.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: id, TargetPath: target}); err != nil {
			t.Fatalf("UnmountVolume #%d: %v", i+1, err)
		}
	}
	if got := fx.k.takeCalls(); !reflect.DeepEqual(got, []string{"syncfs " + target, "unmount " + target, "unmount " + target, "unmount " + target}) {
		t.Fatalf("unmount calls = %q", got)
	}
	_, err = vs.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id})
	wantErr(t, err, errdefs.ErrFailedPrecondition, "not mounted")

	// Offline ext4 growth: e2fsck, then resize2fs.
	fx.exec = &FakeExec{}
	b3 := fx.backend(t, Config{MountRoots: []string{root}})
	if err := b3.ResizeVolume(ctx, id, 254<<20); err != nil {
		t.Fatal(err)
	}
	if calls := fx.exec.Calls(); !reflect.DeepEqual(calls, [][]string{{"e2fsck", "-f", "-y", dev}, {"resize2fs", dev}}) {
		t.Fatalf("offline grow argv = %q", calls)
	}
	_ = fx.k.takeCalls()
	// e2fsck finding damage it cannot repair stops the resize.
	fx.exec.Respond = func(argv []string) ([]byte, error) {
		if argv[0] == "e2fsck" {
			return nil, &ExitError{Argv: argv, Code: 4, Stderr: "UNEXPECTED INCONSISTENCY"}
		}
		return nil, nil
	}
	err = b3.ResizeVolume(ctx, id, 254<<20)
	if err == nil || !strings.Contains(err.Error(), "UNEXPECTED INCONSISTENCY") {
		t.Fatalf("resize after a failed e2fsck = %v", err)
	}

	// Offline: the read-only flag, and everything that writes is refused.
	if _, err := ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: blockfixture.Loop3, IsOnline: false}); err != nil {
		t.Fatal(err)
	}
	if got := fx.k.takeCalls(); !reflect.DeepEqual(got, []string{"flush loop3 true", "ro loop3 true"}) {
		t.Fatalf("offline calls = %q", got)
	}
	st, _ := ds.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: blockfixture.Loop3})
	if st.IsOnline {
		t.Fatal("offline disk reads online")
	}
	_, err = vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: target})
	wantErr(t, err, errdefs.ErrFailedPrecondition, "offline")
	// Partitioned already: PartitionDisk reads the layout (upstream reads
	// it while the disk is offline; gcp-pd, aws-ebs and vsphere partition
	// before SetDiskState(online)) and changes nothing.
	if _, err := ds.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: blockfixture.Loop3}); err != nil {
		t.Fatalf("PartitionDisk(offline, partitioned) = %v", err)
	}
	if got := fx.k.takeCalls(); len(got) != 0 {
		t.Fatalf("PartitionDisk(offline, partitioned) made kernel calls %q", got)
	}
	if st, _ := ds.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: blockfixture.Loop3}); st.IsOnline {
		t.Fatal("PartitionDisk brought the offline, partitioned disk online")
	}
	for _, online := range []bool{true, true} {
		if _, err := ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: blockfixture.Loop3, IsOnline: online}); err != nil {
			t.Fatal(err)
		}
	}
	if got := fx.k.takeCalls(); !reflect.DeepEqual(got, []string{"ro loop3 false"}) {
		t.Fatalf("online calls = %q", got)
	}

	// Unknown volumes.
	_, err = vs.IsVolumeFormatted(ctx, &volume.IsVolumeFormattedRequest{VolumeID: "0fc63daf-8483-4772-8e79-000000000000"})
	wantErr(t, err, errdefs.ErrNotFound, "does not exist")
	_, err = vs.GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: "not-a-blocktopo.GUID"})
	wantErr(t, err, errdefs.ErrNotFound, "GPT partition GUIDs")
}

func TestDeviceReadOnlyDiskCountsOnline(t *testing.T) {
	fx := newFixture(t)
	b := fx.backend(t, Config{})
	ctx := context.Background()
	blockfixture.WriteFile(t, filepath.Join(fx.sysfs, "block", "vdb", "ro"), "1") // attached read-only
	if on, _ := b.IsDiskOnline(ctx, blockfixture.VDB); on {
		t.Fatal("read-only disk reads online before SetDiskOnline")
	}
	// Our fake clears the flag like BLKROSET; the device keeps it.
	fx.k.setReadOnlyHook = func(name string) { blockfixture.WriteFile(t, filepath.Join(fx.sysfs, "block", name, "ro"), "1") }
	if err := b.SetDiskOnline(ctx, blockfixture.VDB, true); err != nil {
		t.Fatal(err)
	}
	if on, _ := b.IsDiskOnline(ctx, blockfixture.VDB); !on {
		t.Fatal("a device-read-only disk brought online reads offline")
	}
	if err := b.SetDiskOnline(ctx, blockfixture.VDB, false); err != nil {
		t.Fatal(err)
	}
	if on, _ := b.IsDiskOnline(ctx, blockfixture.VDB); on {
		t.Fatal("offline after SetDiskOnline(false) reads online")
	}
}

func TestSCSIStateAndRescan(t *testing.T) {
	if !blockfixture.ColonsOK {
		t.Skip("the fixture's SCSI addresses need ':' in file names")
	}
	fx := newFixture(t)
	b := fx.backend(t, Config{})
	ctx := context.Background()
	if err := b.SetDiskOnline(ctx, blockfixture.SDB, true); err != nil {
		t.Fatal(err)
	}
	if s, _ := blocktopo.ReadAttr(filepath.Join(fx.sysfs, "block", "sdb", "device"), "state"); s != "running" {
		t.Fatalf("sdb state = %q, want running", s)
	}
	if err := b.SetDiskOnline(ctx, blockfixture.SDB, false); err != nil {
		t.Fatal(err)
	}
	if s, _ := blocktopo.ReadAttr(filepath.Join(fx.sysfs, "block", "sdb", "device"), "state"); s != "offline" {
		t.Fatalf("sdb state = %q, want offline", s)
	}
	if err := b.Rescan(ctx); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		"class/scsi_host/host2/scan": "- - -", "class/scsi_host/host3/scan": "- - -",
		"block/sda/device/rescan": "1", "block/sdb/device/rescan": "1",
	} {
		if got, _ := blocktopo.ReadAttr(fx.sysfs, file); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
}

func TestHostDisksAreNeverChanged(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	dev := func(n string) string { return filepath.Join(fx.dev, n) }

	// vdb holds the root filesystem directly on the whole disk.
	for _, p := range blockfixture.ExtSuperblock(8192, 0x4, 0x40, 0) {
		patchFile(t, dev("vdb"), int64(p.Off), p.Data)
	}
	fx.k.mountTable = []mountinfo.Mount{{ID: 1, Major: 254, Minor: 16, Root: "/", MountPoint: "/", FSType: "ext4", Source: dev("vdb")}}
	b := fx.backend(t, Config{})
	err := b.PartitionDisk(ctx, blockfixture.VDB)
	wantErr(t, err, errdefs.ErrFailedPrecondition, "belongs to the host")
	if !strings.Contains(err.Error(), "is mounted at /") {
		t.Fatalf("error %q does not say why", err)
	}
	wantErr(t, b.SetDiskOnline(ctx, blockfixture.VDB, false), errdefs.ErrFailedPrecondition, "belongs to the host")
	if on, err := b.IsDiskOnline(ctx, blockfixture.VDB); err != nil || !on {
		t.Fatalf("host disk state = %v, %v", on, err)
	}

	// The same disk unmounted is still refused: a filesystem on the whole
	// disk is data.
	fx.k.mountTable = nil
	wantErr(t, b.PartitionDisk(ctx, blockfixture.VDB), errdefs.ErrFailedPrecondition, "whole disk holds ext4")

	// An MBR partition table.
	mbr := make([]byte, 512)
	mbr[446+4], mbr[510], mbr[511] = 0x83, 0x55, 0xaa
	patchFile(t, dev("nvme0n1"), 0, mbr)
	// An MBR data disk counts as partitioned, as upstream counts any
	// initialised disk with a basic partition: left alone, not refused.
	if err := b.PartitionDisk(ctx, blockfixture.NVMe); err != nil {
		t.Fatalf("PartitionDisk(MBR data disk) = %v", err)
	}
	if got := readAt(t, dev("nvme0n1"), 0, 4096); !bytes.Equal(got[:512], mbr) || !bytes.Equal(got[512:], make([]byte, 4096-512)) {
		t.Fatal("PartitionDisk wrote to an MBR data disk")
	}
	// One with no partition entry (boot code only) is empty: not refused
	// either, it gets a GPT.

	// A damaged GPT.
	if err := b.PartitionDisk(ctx, blockfixture.Loop3); err != nil {
		t.Fatal(err)
	}
	img, err := os.ReadFile(dev("loop3"))
	if err != nil {
		t.Fatal(err)
	}
	img[1024] ^= 0xff
	img[len(img)-512-16384] ^= 0xff
	if err := os.WriteFile(dev("loop3"), img, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = b.ListVolumesOnDisk(ctx, blockfixture.Loop3, 0)
	wantErr(t, err, errdefs.ErrFailedPrecondition, "GPT is damaged")
	wantErr(t, b.PartitionDisk(ctx, blockfixture.Loop3), errdefs.ErrFailedPrecondition, "GPT is damaged")

	// Swap, device-mapper holders, a mount outside the mount roots, a mount
	// exactly at a mount root: all make a disk the host's.
	fx.k.swaps = []blocktopo.DevNum{{Major: 259, Minor: 0}}
	wantErr(t, b.PartitionDisk(ctx, blockfixture.NVMe), errdefs.ErrFailedPrecondition, "in use as swap")
	fx.k.swaps = nil
	if err := os.MkdirAll(filepath.Join(fx.sysfs, "block", "sda", "holders", "dm-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantErr(t, b.PartitionDisk(ctx, blockfixture.SDA), errdefs.ErrFailedPrecondition, "held by dm-0")
	for _, mp := range []string{"/mnt/data", "/var/lib/kubelet", "/var/lib/kubelet-x/y"} {
		fx.k.mountTable = []mountinfo.Mount{{ID: 1, Major: 8, Minor: 1, Root: "/", MountPoint: mp, FSType: "xfs", Source: dev("sda1")}}
		if err := os.RemoveAll(filepath.Join(fx.sysfs, "block", "sda", "holders")); err != nil {
			t.Fatal(err)
		}
		wantErr(t, b.PartitionDisk(ctx, blockfixture.SDA), errdefs.ErrFailedPrecondition, "is mounted at "+mp)
	}
	// Strictly below a mount root is the proxy's own mount: sda1 is not in
	// a GPT here, so the disk (mounted, no table) cannot be partitioned,
	// but for that reason, not as a host disk.
	fx.k.mountTable = []mountinfo.Mount{{ID: 1, Major: 8, Minor: 1, Root: "/", MountPoint: "/var/lib/kubelet/plugins/x/globalmount", FSType: "xfs", Source: dev("sda1")}}
	err = b.PartitionDisk(ctx, blockfixture.SDA)
	wantErr(t, err, errdefs.ErrFailedPrecondition, "has mounted filesystems")
}
