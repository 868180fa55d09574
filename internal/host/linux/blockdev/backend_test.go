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
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// Disk numbers of the fixture (their diskseq).
const (
	nSDA   = 3
	nSDB   = 4
	nVDB   = 5
	nNVMe  = 6
	nLoop3 = 12
)

func wantErr(t *testing.T, err, kind error, contains string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error = %v, want one wrapping %q", err, kind)
	}
	if !strings.Contains(err.Error(), contains) {
		t.Fatalf("error %q does not mention %q", err, contains)
	}
}

// patchFile writes data at off in an existing file.
func patchFile(t *testing.T, path string, off int64, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data, off); err != nil {
		t.Fatal(err)
	}
}

// growDisk makes a fixture disk larger, as a cloud resize plus a rescan
// would: sysfs size and the device file.
func (fx *fixture) growDisk(t *testing.T, name string, size int64) {
	t.Helper()
	writeFile(t, filepath.Join(fx.sysfs, "block", name, "size"), fmt.Sprint(size/512))
	if err := os.Truncate(filepath.Join(fx.dev, name), size); err != nil {
		t.Fatal(err)
	}
}

// cloneDisk copies fixture disk from onto disk to, grown to the same
// size, as a disk restored from a snapshot carries its source's partition
// table and GUIDs.
func (fx *fixture) cloneDisk(t *testing.T, from, to string) {
	t.Helper()
	img, err := os.ReadFile(filepath.Join(fx.dev, from))
	if err != nil {
		t.Fatal(err)
	}
	fx.growDisk(t, to, int64(len(img)))
	patchFile(t, filepath.Join(fx.dev, to), 0, img)
}

// loop3Volume partitions the fixture's loop3 through b and returns the ID
// of the one volume PartitionDisk makes on it: the start of most tests
// of a volume on the fake kernel.
func loop3Volume(t *testing.T, b *Backend) string {
	t.Helper()
	ctx := context.Background()
	if err := b.PartitionDisk(ctx, nLoop3); err != nil {
		t.Fatal(err)
	}
	ids, err := b.ListVolumesOnDisk(ctx, nLoop3, 0)
	if err != nil || len(ids) != 1 {
		t.Fatalf("ListVolumesOnDisk = %v, %v", ids, err)
	}
	return ids[0]
}

// fakeMkfs makes FakeExec's mkfs write a superblock, so the probe sees the
// result as it would after a real mkfs.
func fakeMkfs(t *testing.T) func(argv []string) ([]byte, error) {
	return func(argv []string) ([]byte, error) {
		dev := argv[len(argv)-1]
		fi, err := os.Stat(dev)
		if err != nil {
			return nil, err
		}
		switch argv[0] {
		case "mkfs.ext4":
			for _, p := range extSuperblock(uint64(fi.Size()/4096), 0x4, 0x40, 0) {
				patchFile(t, dev, int64(p.off), p.data)
			}
		case "mkfs.xfs":
			patchFile(t, dev, 0, append([]byte("XFSB"), append(be32b(4096), be64b(uint64(fi.Size()/4096))...)...))
		}
		return nil, nil
	}
}

func TestConfig(t *testing.T) {
	fx := newFixture(t)
	for _, bad := range []Config{
		{Filesystem: "btrfs"},
		{DiskFilter: []string{"sd["}},
		{MountRoots: []string{"var/lib/kubelet"}},
	} {
		if _, err := newBackend(bad, fx.k); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("newBackend(%+v) = %v, want invalid argument", bad, err)
		}
	}
	b, err := newBackend(Config{MountRoots: []string{"/var/lib/kubelet/"}}, fx.k)
	if err != nil {
		t.Fatal(err)
	}
	c := b.Config()
	if c.SysfsRoot != "/sys" || c.DevRoot != "/dev" || c.Filesystem != "ext4" || !reflect.DeepEqual(c.DiskFilter, DefaultDiskFilter) ||
		!reflect.DeepEqual(c.MountRoots, []string{"/var/lib/kubelet"}) || c.ToolTimeout != DefaultToolTimeout || c.Exec == nil {
		t.Fatalf("defaults: %+v", c)
	}
	if !strings.Contains(c.String(), "filesystem=ext4") {
		t.Fatalf("String() = %q", c.String())
	}
	if b.Disk() == nil || b.Volume() == nil {
		t.Fatal("Disk() or blocktopo.Volume() is nil")
	}
}

func TestDiskListings(t *testing.T) {
	fx := newFixture(t)
	svc := disk.NewService(fx.backend(t, Config{}).Disk())
	ctx := context.Background()

	locs, err := svc.ListDiskLocations(ctx, &disk.ListDiskLocationsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if colonsOK {
		want := map[uint32]*disk.DiskLocation{
			nSDA: {Adapter: "2", Bus: "0", Target: "1", LUNID: "3"},
			nSDB: {Adapter: "3", Bus: "0", Target: "0", LUNID: "1"},
		}
		if !reflect.DeepEqual(locs.DiskLocations, want) {
			t.Errorf("locations = %+v", locs.DiskLocations)
		}
	}

	ids, err := svc.ListDiskIDs(ctx, &disk.ListDiskIDsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint32]*disk.DiskIDs{
		nSDA:   {Page83: "600a0b800011115500000000deadbeef", SerialNumber: "SN-SDA-0001"},
		nSDB:   {Page83: "IET     VIRTUAL-DISK    sdb-0001"},
		nVDB:   {SerialNumber: "vol-0abc123"},
		nNVMe:  {Page83: "0025388b91c3d1a2", SerialNumber: "vol0123456789abcdef0"},
		nLoop3: {SerialNumber: "/var/tmp/csi-disk-0001.img"}, // no GPT yet: no disk GUID
	}
	if !reflect.DeepEqual(ids.DiskIDs, want) {
		t.Errorf("IDs = %+v", ids.DiskIDs)
	}

	size, err := svc.GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: nVDB})
	if err != nil || size.TotalBytes != 32<<20 {
		t.Errorf("GetDiskStats = %+v, %v", size, err)
	}
	_, err = svc.GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: 999})
	wantErr(t, err, errdefs.ErrNotFound, "disk 999 does not exist")
	_, err = svc.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: 11}) // dm-0: filtered out
	wantErr(t, err, errdefs.ErrNotFound, "disk 11")

	if colonsOK {
		st, err := svc.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: nSDB})
		if err != nil || st.IsOnline {
			t.Errorf("sdb (SCSI state offline) online = %v, %v", st, err)
		}
	}
	st, err := svc.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: nVDB})
	if err != nil || !st.IsOnline {
		t.Errorf("vdb online = %v, %v", st, err)
	}
}

func TestDiskNumbersWithoutDiskseq(t *testing.T) {
	fx := newFixture(t)
	for _, n := range []string{"sda", "vdb"} {
		if err := os.Remove(filepath.Join(fx.sysfs, "block", n, "diskseq")); err != nil {
			t.Fatal(err)
		}
	}
	b := fx.backend(t, Config{DiskFilter: []string{"sda", "vdb"}})
	first, err := b.ListDiskIDs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	again, _ := b.ListDiskIDs(context.Background())
	if !reflect.DeepEqual(first, again) || len(first) != 2 {
		t.Fatalf("numbers changed between calls: %v vs %v", first, again)
	}
	for n := range first {
		if n < 1<<31 {
			t.Errorf("number %d without diskseq is below 2^31", n)
		}
	}
}

// services returns the disk and volume Services over a fixture backend,
// with a mount root in a temporary directory.
func services(t *testing.T, fx *fixture, cfg Config) (*disk.Service, *volume.Service, string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the volume Service checks POSIX paths, which a Windows temp dir is not")
	}
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	cfg.MountRoots = []string{root}
	b := fx.backend(t, cfg)
	pol, err := hostpath.NewPolicy(hostpath.POSIX, []string{root})
	if err != nil {
		t.Fatal(err)
	}
	return disk.NewService(b.Disk()), volume.NewService(b.Volume(), pol), root
}

// partitionOne partitions disk n through the disk Service and returns the
// ID of the one volume the volume Service then lists on it: how a driver's
// stage starts, and so the start of the Services' volume tests, on the
// fixture and on real loop disks alike.
func partitionOne(t *testing.T, ds *disk.Service, vs *volume.Service, n uint32) string {
	t.Helper()
	ctx := context.Background()
	if _, err := ds.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: n}); err != nil {
		t.Fatal(err)
	}
	vols, err := vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: n})
	if err != nil || len(vols.VolumeIDs) != 1 {
		t.Fatalf("ListVolumesOnDisk = %+v, %v", vols, err)
	}
	return vols.VolumeIDs[0]
}

// isFormatted asks the volume Service whether volume id holds a
// filesystem, failing the test if it cannot tell.
func isFormatted(t *testing.T, vs *volume.Service, id string) bool {
	t.Helper()
	r, err := vs.IsVolumeFormatted(context.Background(), &volume.IsVolumeFormattedRequest{VolumeID: id})
	if err != nil {
		t.Fatal(err)
	}
	return r.Formatted
}

func TestVolumeFlowOnFakeKernel(t *testing.T) {
	fx := newFixture(t)
	fx.exec.Respond = fakeMkfs(t)
	ds, vs, root := services(t, fx, Config{})
	ctx := context.Background()

	if _, err := ds.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: nLoop3}); err != nil {
		t.Fatal(err)
	}
	if got := fx.k.takeCalls(); !reflect.DeepEqual(got, []string{fmt.Sprintf("add loop3 1 %d %d", 1<<20, (64<<20)-(2<<20))}) {
		t.Fatalf("kernel calls = %q", got)
	}
	if _, err := ds.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: nLoop3}); err != nil {
		t.Fatal(err)
	}
	if got := fx.k.takeCalls(); len(got) != 0 {
		t.Fatalf("second PartitionDisk changed the kernel: %q", got)
	}
	vols, err := vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: nLoop3})
	if err != nil || len(vols.VolumeIDs) != 1 {
		t.Fatalf("ListVolumesOnDisk = %v, %v", vols, err)
	}
	id := vols.VolumeIDs[0]
	if _, err := blocktopo.ParseGUID(id); err != nil || id != strings.ToLower(id) {
		t.Fatalf("volume ID %q is not a lower-case blocktopo.GUID", id)
	}
	if one, err := vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: nLoop3, PartitionNumber: 1}); err != nil || !reflect.DeepEqual(one.VolumeIDs, []string{id}) {
		t.Fatalf("partition 1 = %v, %v", one, err)
	}
	_, err = vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: nLoop3, PartitionNumber: 2})
	wantErr(t, err, errdefs.ErrNotFound, "no partition 2")
	ids, _ := ds.ListDiskIDs(ctx, &disk.ListDiskIDsRequest{})
	if p := ids.DiskIDs[nLoop3].Page83; p == "" {
		t.Error("a partitioned loop device has no blocktopo.GPT disk blocktopo.GUID as page83")
	}

	// The kernel forgot the partition (a reboot on a kernel without GPT
	// support, a BLKRRPART): the reads still find the volume, and leave
	// the kernel alone; FormatVolume, which changes it, adds it back.
	if err := os.RemoveAll(filepath.Join(fx.sysfs, "block", "loop3", "loop3p1")); err != nil {
		t.Fatal(err)
	}
	if again, err := vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: nLoop3}); err != nil || !reflect.DeepEqual(again.VolumeIDs, []string{id}) {
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
	if err != nil || num.DiskNumber != nLoop3 {
		t.Fatalf("GetDiskNumberFromVolumeID = %v, %v", num, err)
	}
	if _, err := vs.WriteVolumeCache(ctx, &volume.WriteVolumeCacheRequest{VolumeID: id}); err != nil {
		t.Fatal(err)
	}
	if got := fx.k.takeCalls(); !reflect.DeepEqual(got, []string{"statfs " + target, "syncfs " + target, "flush loop3p1 false"}) {
		t.Fatalf("stats and flush calls = %q", got)
	}
	if _, err := ds.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: nLoop3}); err != nil {
		t.Fatalf("PartitionDisk of a partitioned, mounted disk: %v", err)
	}
	_, err = ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: nLoop3, IsOnline: false})
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
	if _, err := ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: nLoop3, IsOnline: false}); err != nil {
		t.Fatal(err)
	}
	if got := fx.k.takeCalls(); !reflect.DeepEqual(got, []string{"flush loop3 true", "ro loop3 true"}) {
		t.Fatalf("offline calls = %q", got)
	}
	st, _ := ds.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: nLoop3})
	if st.IsOnline {
		t.Fatal("offline disk reads online")
	}
	_, err = vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: target})
	wantErr(t, err, errdefs.ErrFailedPrecondition, "offline")
	// Partitioned already: PartitionDisk reads the layout (upstream reads
	// it while the disk is offline; gcp-pd, aws-ebs and vsphere partition
	// before SetDiskState(online)) and changes nothing.
	if _, err := ds.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: nLoop3}); err != nil {
		t.Fatalf("PartitionDisk(offline, partitioned) = %v", err)
	}
	if got := fx.k.takeCalls(); len(got) != 0 {
		t.Fatalf("PartitionDisk(offline, partitioned) made kernel calls %q", got)
	}
	if st, _ := ds.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: nLoop3}); st.IsOnline {
		t.Fatal("PartitionDisk brought the offline, partitioned disk online")
	}
	for _, online := range []bool{true, true} {
		if _, err := ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: nLoop3, IsOnline: online}); err != nil {
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
	writeFile(t, filepath.Join(fx.sysfs, "block", "vdb", "ro"), "1") // attached read-only
	if on, _ := b.IsDiskOnline(ctx, nVDB); on {
		t.Fatal("read-only disk reads online before SetDiskOnline")
	}
	// Our fake clears the flag like BLKROSET; the device keeps it.
	fx.k.setReadOnlyHook = func(name string) { writeFile(t, filepath.Join(fx.sysfs, "block", name, "ro"), "1") }
	if err := b.SetDiskOnline(ctx, nVDB, true); err != nil {
		t.Fatal(err)
	}
	if on, _ := b.IsDiskOnline(ctx, nVDB); !on {
		t.Fatal("a device-read-only disk brought online reads offline")
	}
	if err := b.SetDiskOnline(ctx, nVDB, false); err != nil {
		t.Fatal(err)
	}
	if on, _ := b.IsDiskOnline(ctx, nVDB); on {
		t.Fatal("offline after SetDiskOnline(false) reads online")
	}
}

func TestSCSIStateAndRescan(t *testing.T) {
	if !colonsOK {
		t.Skip("the fixture's SCSI addresses need ':' in file names")
	}
	fx := newFixture(t)
	b := fx.backend(t, Config{})
	ctx := context.Background()
	if err := b.SetDiskOnline(ctx, nSDB, true); err != nil {
		t.Fatal(err)
	}
	if s, _ := blocktopo.ReadAttr(filepath.Join(fx.sysfs, "block", "sdb", "device"), "state"); s != "running" {
		t.Fatalf("sdb state = %q, want running", s)
	}
	if err := b.SetDiskOnline(ctx, nSDB, false); err != nil {
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
	for _, p := range extSuperblock(8192, 0x4, 0x40, 0) {
		patchFile(t, dev("vdb"), int64(p.off), p.data)
	}
	fx.k.mountTable = []mountinfo.Mount{{ID: 1, Major: 254, Minor: 16, Root: "/", MountPoint: "/", FSType: "ext4", Source: dev("vdb")}}
	b := fx.backend(t, Config{})
	err := b.PartitionDisk(ctx, nVDB)
	wantErr(t, err, errdefs.ErrFailedPrecondition, "belongs to the host")
	if !strings.Contains(err.Error(), "is mounted at /") {
		t.Fatalf("error %q does not say why", err)
	}
	wantErr(t, b.SetDiskOnline(ctx, nVDB, false), errdefs.ErrFailedPrecondition, "belongs to the host")
	if on, err := b.IsDiskOnline(ctx, nVDB); err != nil || !on {
		t.Fatalf("host disk state = %v, %v", on, err)
	}

	// The same disk unmounted is still refused: a filesystem on the whole
	// disk is data.
	fx.k.mountTable = nil
	wantErr(t, b.PartitionDisk(ctx, nVDB), errdefs.ErrFailedPrecondition, "whole disk holds ext4")

	// An MBR partition table.
	mbr := make([]byte, 512)
	mbr[446+4], mbr[510], mbr[511] = 0x83, 0x55, 0xaa
	patchFile(t, dev("nvme0n1"), 0, mbr)
	// An MBR data disk counts as partitioned, as upstream counts any
	// initialised disk with a basic partition: left alone, not refused.
	if err := b.PartitionDisk(ctx, nNVMe); err != nil {
		t.Fatalf("PartitionDisk(MBR data disk) = %v", err)
	}
	if got := readAt(t, dev("nvme0n1"), 0, 4096); !bytes.Equal(got[:512], mbr) || !bytes.Equal(got[512:], make([]byte, 4096-512)) {
		t.Fatal("PartitionDisk wrote to an MBR data disk")
	}
	// One with no partition entry (boot code only) is empty: not refused
	// either, it gets a GPT.

	// A damaged GPT.
	if err := b.PartitionDisk(ctx, nLoop3); err != nil {
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
	_, err = b.ListVolumesOnDisk(ctx, nLoop3, 0)
	wantErr(t, err, errdefs.ErrFailedPrecondition, "GPT is damaged")
	wantErr(t, b.PartitionDisk(ctx, nLoop3), errdefs.ErrFailedPrecondition, "GPT is damaged")

	// Swap, device-mapper holders, a mount outside the mount roots, a mount
	// exactly at a mount root: all make a disk the host's.
	fx.k.swaps = []blocktopo.DevNum{{Major: 259, Minor: 0}}
	wantErr(t, b.PartitionDisk(ctx, nNVMe), errdefs.ErrFailedPrecondition, "in use as swap")
	fx.k.swaps = nil
	if err := os.MkdirAll(filepath.Join(fx.sysfs, "block", "sda", "holders", "dm-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantErr(t, b.PartitionDisk(ctx, nSDA), errdefs.ErrFailedPrecondition, "held by dm-0")
	for _, mp := range []string{"/mnt/data", "/var/lib/kubelet", "/var/lib/kubelet-x/y"} {
		fx.k.mountTable = []mountinfo.Mount{{ID: 1, Major: 8, Minor: 1, Root: "/", MountPoint: mp, FSType: "xfs", Source: dev("sda1")}}
		if err := os.RemoveAll(filepath.Join(fx.sysfs, "block", "sda", "holders")); err != nil {
			t.Fatal(err)
		}
		wantErr(t, b.PartitionDisk(ctx, nSDA), errdefs.ErrFailedPrecondition, "is mounted at "+mp)
	}
	// Strictly below a mount root is the proxy's own mount: sda1 is not in
	// a GPT here, so the disk (mounted, no table) cannot be partitioned,
	// but for that reason, not as a host disk.
	fx.k.mountTable = []mountinfo.Mount{{ID: 1, Major: 8, Minor: 1, Root: "/", MountPoint: "/var/lib/kubelet/plugins/x/globalmount", FSType: "xfs", Source: dev("sda1")}}
	err = b.PartitionDisk(ctx, nSDA)
	wantErr(t, err, errdefs.ErrFailedPrecondition, "has mounted filesystems")
}

func TestFormatChoicesAndLimits(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	b := fx.backend(t, Config{Filesystem: "xfs"})
	wantErr(t, b.FormatVolume(ctx, loop3Volume(t, b)), errdefs.ErrOutOfRange, "XFS needs at least 300 MiB")

	// A larger disk, and mkfs.xfs missing from the host.
	fx2 := newFixture(t)
	fx2.growDisk(t, "loop3", 512<<20)
	fx2.exec.Respond = func(argv []string) ([]byte, error) {
		return nil, &ExitError{Argv: argv, Code: -1, Err: fmt.Errorf("exec: %q: %w", argv[0], exec.ErrNotFound)}
	}
	b2 := fx2.backend(t, Config{Filesystem: "xfs"})
	id := loop3Volume(t, b2)
	wantErr(t, b2.FormatVolume(ctx, id), errdefs.ErrFailedPrecondition, "Debian package xfsprogs")
	// blkid is missing too: the built-in probe decides alone.
	if calls := fx2.exec.Calls(); !reflect.DeepEqual(calls, [][]string{{"blkid", "-p", "-o", "export", "--", filepath.Join(fx2.dev, "loop3p1")}, {"mkfs.xfs", "-q", filepath.Join(fx2.dev, "loop3p1")}}) {
		t.Fatalf("mkfs.xfs argv = %q", calls)
	}

	// A formatted XFS volume grows with xfs_growfs: on a private temporary
	// mount when it is not mounted.
	fx2.exec = &FakeExec{Respond: fakeMkfs(t)}
	b3 := fx2.backend(t, Config{Filesystem: "xfs"})
	if err := b3.FormatVolume(ctx, id); err != nil {
		t.Fatal(err)
	}
	fx2.growDisk(t, "loop3", 1<<30)
	_ = fx2.k.takeCalls()
	if err := b3.ResizeVolume(ctx, id, (1023-1)<<20); err != nil {
		t.Fatal(err)
	}
	calls := fx2.k.takeCalls()
	if len(calls) != 3 || !strings.HasPrefix(calls[0], "resize loop3 1 ") || !strings.HasPrefix(calls[1], "mount loop3p1 ") ||
		!strings.HasSuffix(calls[1], " xfs nouuid") || !strings.HasPrefix(calls[2], "unmount ") {
		t.Fatalf("offline XFS grow kernel calls = %q", calls)
	}
	tmp := strings.TrimPrefix(calls[2], "unmount ")
	if ex := fx2.exec.Calls(); !reflect.DeepEqual(ex[len(ex)-1], []string{"xfs_growfs", "-d", tmp}) {
		t.Fatalf("xfs_growfs argv = %q", ex)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary mount point %s left behind: %v", tmp, err)
	}
	_, _, err := b3.VolumeSizes(ctx, "0fc63daf-8483-4772-8e79-000000000000")
	wantErr(t, err, errdefs.ErrNotFound, "does not exist")
}

func TestMountTargetRules(t *testing.T) {
	fx := newFixture(t)
	fx.exec.Respond = fakeMkfs(t)
	ds, vs, root := services(t, fx, Config{})
	ctx := context.Background()
	id := partitionOne(t, ds, vs, nLoop3)
	mount := func(target string) error {
		_, err := vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: target})
		return err
	}
	wantErr(t, mount(filepath.Join(root, "m")), errdefs.ErrFailedPrecondition, "not formatted")
	if _, err := vs.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: id}); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(root, "full")
	writeFile(t, filepath.Join(full, "data"), "x")
	wantErr(t, mount(full), errdefs.ErrFailedPrecondition, "not empty")
	file := filepath.Join(root, "file")
	writeFile(t, file, "x")
	wantErr(t, mount(file), errdefs.ErrFailedPrecondition, "not a directory")
	// A link as the target: refused either way, PermissionDenied when it
	// leads out of the working directory (the caller tried to reach
	// outside), FailedPrecondition when it stays inside (a mount point is
	// the directory at the path, never a link to it).
	link := filepath.Join(root, "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	wantErr(t, mount(link), errdefs.ErrPermissionDenied, "resolves outside")
	inside := filepath.Join(root, "inside")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	innerLink := filepath.Join(root, "inner-link")
	if err := os.Symlink(inside, innerLink); err != nil {
		t.Fatal(err)
	}
	wantErr(t, mount(innerLink), errdefs.ErrFailedPrecondition, "symlink")
	wantErr(t, mount(link+"/sub"), errdefs.ErrPermissionDenied, "resolves outside")

	// Something else mounted at the target: never stacked on.
	other := filepath.Join(root, "tmpfs")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	fx.k.mountTable = append(fx.k.mountTable, mountinfo.Mount{ID: 9, Major: 0, Minor: 55, Root: "/", MountPoint: other, FSType: "tmpfs", Source: "tmpfs"})
	wantErr(t, mount(other), errdefs.ErrFailedPrecondition, "not a volume the proxy manages")
	_, err := vs.GetClosestVolumeIDFromTargetPath(ctx, &volume.GetClosestVolumeIDFromTargetPathRequest{TargetPath: other + "/x"})
	wantErr(t, err, errdefs.ErrNotFound, "tmpfs (tmpfs at "+other+")")
	if got := fx.k.takeCalls(); len(got) != 1 || !strings.HasPrefix(got[0], "add ") {
		t.Fatalf("refused mounts reached the kernel: %q", got)
	}
}

func TestAmbiguousVolumeID(t *testing.T) {
	fx := newFixture(t)
	b := fx.backend(t, Config{})
	ctx := context.Background()
	if err := b.PartitionDisk(ctx, nLoop3); err != nil {
		t.Fatal(err)
	}
	// Clone loop3 onto vdb, as a disk restored from a snapshot carries
	// the partition GUIDs of its source.
	fx.cloneDisk(t, "loop3", "vdb")
	s, err := b.scan(ctx, scanTables)
	if err != nil {
		t.Fatal(err)
	}
	loop, _ := s.Disk(nLoop3, nil)
	id := blocktopo.VolumeID(&loop.Table.Entries[0])
	_, err = b.DiskNumber(ctx, id)
	wantErr(t, err, errdefs.ErrFailedPrecondition, "ambiguous")
}

func TestSymlinkedMountRoot(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	fx := newFixture(t)
	real := t.TempDir()
	if r, err := filepath.EvalSymlinks(real); err == nil {
		real = r
	}
	link := filepath.Join(t.TempDir(), "kubelet")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	b := fx.backend(t, Config{MountRoots: []string{link}})
	ctx := context.Background()
	if err := b.PartitionDisk(ctx, nLoop3); err != nil {
		t.Fatal(err)
	}
	// The mount table shows where the proxy's mount really is: below the
	// resolved root. The disk is still the proxy's, not the host's.
	fx.k.mountTable = []mountinfo.Mount{{ID: 1, Major: 259, Minor: 100, Root: "/", MountPoint: real + "/pv/globalmount", FSType: "ext4", Source: filepath.Join(fx.dev, "loop3p1")}}
	s, err := b.scan(ctx, scanTables)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := s.Disk(nLoop3, nil)
	if d.Host != "" || len(d.Mounts) != 1 {
		t.Fatalf("disk with a mount below the resolved root: host %q, %d mounts", d.Host, len(d.Mounts))
	}
}

// TestFormatAsksBlkid: a signature only libblkid knows (the built-in probe
// reads nothing) stops FormatVolume before mkfs runs, and so does blkid's
// "ambivalent result" (several signatures); a partition blkid finds empty
// (exit status 2) is formatted.
func TestFormatAsksBlkid(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		out    string
		code   int
		refuse string
	}{
		{"jfs", "DEVNAME=/dev/loop3p1\nUUID=1234\nTYPE=jfs\nPART_ENTRY_SCHEME=gpt\n", 0, "already holds TYPE=jfs (blkid -p)"},
		{"ambivalent", "", 8, "more than one signature"},
		{"nothing", "", 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t)
			fx.exec.Respond = func(argv []string) ([]byte, error) {
				if argv[0] != "blkid" || tc.code == 0 {
					if argv[0] == "blkid" {
						return []byte(tc.out), nil
					}
					return nil, nil
				}
				return nil, &ExitError{Argv: argv, Code: tc.code, Stderr: "ambivalent result (probably more filesystems on the device)"}
			}
			b := fx.backend(t, Config{})
			err := b.FormatVolume(ctx, loop3Volume(t, b))
			calls := fx.exec.Calls()
			if tc.refuse == "" {
				if err != nil || len(calls) != 2 || calls[1][0] != "mkfs.ext4" {
					t.Fatalf("FormatVolume = %v, calls %q; want mkfs after blkid", err, calls)
				}
				return
			}
			wantErr(t, err, errdefs.ErrFailedPrecondition, tc.refuse)
			if len(calls) != 1 {
				t.Fatalf("calls = %q; want blkid only", calls)
			}
		})
	}
}

// TestHostMountTableOnFixture: a mount of a disk that only the host's table
// (Config.HostMountTable) shows makes the disk the host's; the same mount
// in both tables is one mount; an explicit table that cannot be read stops
// New.
func TestHostMountTableOnFixture(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	table := filepath.Join(t.TempDir(), "mountinfo")
	// loop3 is 7:3 in the fixture tree.
	if err := os.WriteFile(table, []byte("22 1 254:0 / / rw - ext4 /dev/vda rw\n90 22 7:3 / /mnt rw - ext4 /dev/loop3 rw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := fx.backend(t, Config{HostMountTable: table})
	wantErr(t, b.PartitionDisk(ctx, nLoop3), errdefs.ErrFailedPrecondition, "/dev/loop3 is mounted at /mnt in the host's mount namespace")
	wantErr(t, b.SetDiskOnline(ctx, nLoop3, false), errdefs.ErrFailedPrecondition, "belongs to the host")
	// Without the host's table the disk is free.
	if err := fx.backend(t, Config{}).PartitionDisk(ctx, nLoop3); err != nil {
		t.Fatal(err)
	}
	_, err := newBackend(Config{SysfsRoot: fx.sysfs, DevRoot: fx.dev, HostMountTable: table + ".missing"}, fx.k)
	wantErr(t, err, errdefs.ErrInvalidArgument, "host mount table")
	_, err = newBackend(Config{SysfsRoot: fx.sysfs, DevRoot: fx.dev, HostMountTable: "relative"}, fx.k)
	wantErr(t, err, errdefs.ErrInvalidArgument, "not an absolute path")
}

// readAt reads n bytes of a file at off.
func readAt(t *testing.T, path string, off int64, n int) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestProtectiveMBRFollowsGrowth: when a disk grows and a volume grows
// with it, the protective MBR's 0xEE entry covers the new size too (else
// sfdisk and fdisk complain that it does not).
func TestProtectiveMBRFollowsGrowth(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	b := fx.backend(t, Config{})
	id := loop3Volume(t, b)
	fx.growDisk(t, "loop3", 512<<20)
	_, maxSize, err := b.VolumeSizes(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ResizeVolume(ctx, id, maxSize); err != nil {
		t.Fatal(err)
	}
	sector0 := readAt(t, filepath.Join(fx.dev, "loop3"), 0, 512)
	if blocktopo.ClassifyMBR(sector0) != blocktopo.MBRProtective {
		t.Fatal("sector 0 is no longer a protective MBR")
	}
	if got, want := binary.LittleEndian.Uint32(sector0[446+12:]), uint32(512<<20/512-1); got != want {
		t.Fatalf("the protective MBR covers %d sectors after growth, want %d", got, want)
	}
}

// TestMountChecksExt4: MountVolume runs e2fsck -p (what mount-utils' fsck
// -a runs) on an ext4 volume before mounting it, as mount-utils'
// FormatAndMount does: errors it corrects (exit 1) mount, errors it cannot
// correct (exit 4) are FailedPrecondition and nothing is mounted; XFS is
// not checked (fsck.xfs does nothing; XFS replays its log when mounted).
func TestMountChecksExt4(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		fs     string
		code   int
		refuse string
	}{
		{"ext4", 0, ""},
		{"ext4", 1, ""},
		{"ext4", 4, "e2fsck found errors it could not correct"},
		{"xfs", 0, ""},
	} {
		t.Run(fmt.Sprintf("%s exit %d", tc.fs, tc.code), func(t *testing.T) {
			fx := newFixture(t)
			fx.growDisk(t, "loop3", 512<<20)
			mkfs := fakeMkfs(t)
			fx.exec.Respond = func(argv []string) ([]byte, error) {
				if argv[0] == "e2fsck" && tc.code != 0 {
					return nil, &ExitError{Argv: argv, Code: tc.code, Stderr: "UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY."}
				}
				return mkfs(argv)
			}
			_, vs, root := services(t, fx, Config{Filesystem: tc.fs})
			b := fx.backend(t, Config{Filesystem: tc.fs, MountRoots: []string{root}})
			id := loop3Volume(t, b)
			if err := b.FormatVolume(ctx, id); err != nil {
				t.Fatal(err)
			}
			_ = fx.k.takeCalls()
			dev := filepath.Join(fx.dev, "loop3p1")
			_, err := vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: filepath.Join(root, "m")})
			calls := fx.exec.Calls()
			last := calls[len(calls)-1]
			if tc.fs == "xfs" {
				if err != nil || last[0] == "e2fsck" {
					t.Fatalf("MountVolume(xfs) = %v, last tool %q", err, last)
				}
				return
			}
			if !reflect.DeepEqual(last, []string{"e2fsck", "-p", dev}) {
				t.Fatalf("last tool before the mount = %q, want e2fsck -p", last)
			}
			mounts := fx.k.takeCalls()
			if tc.refuse != "" {
				wantErr(t, err, errdefs.ErrFailedPrecondition, tc.refuse)
				if len(mounts) != 0 {
					t.Fatalf("mounted after a failed check: %q", mounts)
				}
				return
			}
			if err != nil || len(mounts) != 1 {
				t.Fatalf("MountVolume = %v, kernel calls %q", err, mounts)
			}
		})
	}
}

// TestFormatRefusesBusyVolume: a volume something holds (an O_EXCL open
// fails: an mkfs left running by a killed daemon, a mount in another
// namespace) is not formatted: the answer is Unavailable, retryable, and
// no tool runs, so a format never starts while another may be writing.
func TestFormatRefusesBusyVolume(t *testing.T) {
	fx := newFixture(t)
	fx.exec.Respond = fakeMkfs(t)
	ctx := context.Background()
	b := fx.backend(t, Config{})
	id := loop3Volume(t, b)
	fx.k.mu.Lock()
	fx.k.busy = map[string]bool{"loop3p1": true}
	fx.k.mu.Unlock()
	wantErr(t, b.FormatVolume(ctx, id), errdefs.ErrUnavailable, "a previous format may still be running; retry")
	if calls := fx.exec.Calls(); len(calls) != 0 {
		t.Fatalf("tools ran on a busy volume: %q", calls)
	}
	fx.k.mu.Lock()
	fx.k.busy = nil
	fx.k.mu.Unlock()
	if err := b.FormatVolume(ctx, id); err != nil {
		t.Fatalf("FormatVolume once the volume is free: %v", err)
	}
}
