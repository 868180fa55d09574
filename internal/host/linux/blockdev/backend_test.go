package blockdev

import (
	"context"
	"errors"
	"fmt"
	"os"
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
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/blockfixture"
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
	blockfixture.WriteFile(t, filepath.Join(fx.sysfs, "block", name, "size"), fmt.Sprint(size/512))
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
	if err := b.PartitionDisk(ctx, blockfixture.Loop3); err != nil {
		t.Fatal(err)
	}
	ids, err := b.ListVolumesOnDisk(ctx, blockfixture.Loop3, 0)
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
			for _, p := range blockfixture.ExtSuperblock(uint64(fi.Size()/4096), 0x4, 0x40, 0) {
				patchFile(t, dev, int64(p.Off), p.Data)
			}
		case "mkfs.xfs":
			patchFile(t, dev, 0, append([]byte("XFSB"), append(blockfixture.BE32(4096), blockfixture.BE64(uint64(fi.Size()/4096))...)...))
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
	if blockfixture.ColonsOK {
		want := map[uint32]*disk.DiskLocation{
			blockfixture.SDA: {Adapter: "2", Bus: "0", Target: "1", LUNID: "3"},
			blockfixture.SDB: {Adapter: "3", Bus: "0", Target: "0", LUNID: "1"},
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
		blockfixture.SDA:   {Page83: "600a0b800011115500000000deadbeef", SerialNumber: "SN-SDA-0001"},
		blockfixture.SDB:   {Page83: "IET     VIRTUAL-DISK    sdb-0001"},
		blockfixture.VDB:   {SerialNumber: "vol-0abc123"},
		blockfixture.NVMe:  {Page83: "0025388b91c3d1a2", SerialNumber: "vol0123456789abcdef0"},
		blockfixture.Loop3: {SerialNumber: "/var/tmp/csi-disk-0001.img"}, // no GPT yet: no disk GUID
	}
	if !reflect.DeepEqual(ids.DiskIDs, want) {
		t.Errorf("IDs = %+v", ids.DiskIDs)
	}

	size, err := svc.GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: blockfixture.VDB})
	if err != nil || size.TotalBytes != 32<<20 {
		t.Errorf("GetDiskStats = %+v, %v", size, err)
	}
	_, err = svc.GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: 999})
	wantErr(t, err, errdefs.ErrNotFound, "disk 999 does not exist")
	_, err = svc.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: 11}) // dm-0: filtered out
	wantErr(t, err, errdefs.ErrNotFound, "disk 11")

	if blockfixture.ColonsOK {
		st, err := svc.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: blockfixture.SDB})
		if err != nil || st.IsOnline {
			t.Errorf("sdb (SCSI state offline) online = %v, %v", st, err)
		}
	}
	st, err := svc.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: blockfixture.VDB})
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

func TestAmbiguousVolumeID(t *testing.T) {
	fx := newFixture(t)
	b := fx.backend(t, Config{})
	ctx := context.Background()
	if err := b.PartitionDisk(ctx, blockfixture.Loop3); err != nil {
		t.Fatal(err)
	}
	// Clone loop3 onto vdb, as a disk restored from a snapshot carries
	// the partition GUIDs of its source.
	fx.cloneDisk(t, "loop3", "vdb")
	s, err := b.scan(ctx, scanTables)
	if err != nil {
		t.Fatal(err)
	}
	loop, _ := s.Disk(blockfixture.Loop3, nil)
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
	if err := b.PartitionDisk(ctx, blockfixture.Loop3); err != nil {
		t.Fatal(err)
	}
	// The mount table shows where the proxy's mount really is: below the
	// resolved root. The disk is still the proxy's, not the host's.
	fx.k.mountTable = []mountinfo.Mount{{ID: 1, Major: 259, Minor: 100, Root: "/", MountPoint: real + "/pv/globalmount", FSType: "ext4", Source: filepath.Join(fx.dev, "loop3p1")}}
	s, err := b.scan(ctx, scanTables)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := s.Disk(blockfixture.Loop3, nil)
	if d.Host != "" || len(d.Mounts) != 1 {
		t.Fatalf("disk with a mount below the resolved root: host %q, %d mounts", d.Host, len(d.Mounts))
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
	wantErr(t, b.PartitionDisk(ctx, blockfixture.Loop3), errdefs.ErrFailedPrecondition, "/dev/loop3 is mounted at /mnt in the host's mount namespace")
	wantErr(t, b.SetDiskOnline(ctx, blockfixture.Loop3, false), errdefs.ErrFailedPrecondition, "belongs to the host")
	// Without the host's table the disk is free.
	if err := fx.backend(t, Config{}).PartitionDisk(ctx, blockfixture.Loop3); err != nil {
		t.Fatal(err)
	}
	_, err := newBackend(Config{SysfsRoot: fx.sysfs, DevRoot: fx.dev, HostMountTable: table + ".missing"}, fx.k)
	wantErr(t, err, errdefs.ErrInvalidArgument, "host mount table")
	_, err = newBackend(Config{SysfsRoot: fx.sysfs, DevRoot: fx.dev, HostMountTable: "relative"}, fx.k)
	wantErr(t, err, errdefs.ErrInvalidArgument, "not an absolute path")
}
