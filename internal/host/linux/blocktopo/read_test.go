package blocktopo

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/blockfixture"
)

// source is a Source for the fixture with no mounts, swap or devices.
func (fx *fixture) source() Source {
	return Source{SysfsRoot: fx.sysfs, DevRoot: fx.dev, DiskFilter: DefaultDiskFilter, MountRoots: []string{"/var/lib/kubelet"}}
}

// opener reads the fixture's device files.
func (fx *fixture) opener() DeviceOpener {
	return func(path string) (Device, error) { return os.Open(path) }
}

// treeHash hashes every name and file of a directory tree: what a Read
// must leave as it was. Files of a dev directory (sparse device images of
// many MiB) are hashed by size and modification time, which any write
// changes.
func treeHash(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v\n", p, d.IsDir())
		if !d.IsDir() && filepath.Base(filepath.Dir(p)) == "dev" {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%d %d\n", fi.Size(), fi.ModTime().UnixNano())
		} else if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// partitionLoop3 writes a GPT with one partition at 1 MiB, 8 MiB long,
// onto the fixture's loop3 and returns the partition's volume ID.
func (fx *fixture) partitionLoop3(t *testing.T) string {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(fx.dev, "loop3"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	table := NewGPT(512, mustGUID("11111111-2222-4333-8444-555555555555"))
	id := mustGUID("0fc63daf-0000-4000-8000-00000000a001")
	table.Entries = append(table.Entries, GPTEntry{Index: 1, Type: TypeLinuxData, ID: id, First: 2048, Last: 2048 + 16384 - 1, Name: "data"})
	if _, err := f.WriteAt(ProtectiveMBR(nil, 512, 131072), 0); err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(f, table, 64<<20); err != nil {
		t.Fatal(err)
	}
	return id.String()
}

// addKernelPartition gives loop3 a kernel partition in the fixture's
// sysfs, as BLKPG would.
func (fx *fixture) addKernelPartition(t *testing.T, n int, start, size int64, dev string) {
	t.Helper()
	dir := filepath.Join(fx.sysfs, "block", "loop3", fmt.Sprintf("loop3p%d", n))
	for attr, v := range map[string]string{"partition": fmt.Sprint(n), "start": fmt.Sprint(start / 512), "size": fmt.Sprint(size / 512), "dev": dev} {
		blockfixture.WriteFile(t, filepath.Join(dir, attr), v+"\n")
	}
}

// TestReadDisksAndClasses: the fixture's disks come out numbered by
// diskseq, in number order, with the devices that are never offered left
// out, classified by the mount tables and swap the Source gives: a mount
// outside the mount roots (in the proxy's table or only in the host's)
// or swap makes a disk the host's; a mount below a root does not, and
// the host's copy of a mount the proxy sees is not counted twice.
func TestReadDisksAndClasses(t *testing.T) {
	fx := newFixture(t)
	src := fx.source()
	src.Mounts = []mountinfo.Mount{
		{ID: 1, Major: 8, Minor: 1, Root: "/", MountPoint: "/", FSType: "ext4", Source: "/dev/sda1"},
		{ID: 2, Major: 259, Minor: 0, Root: "/", MountPoint: "/var/lib/kubelet/plugins/x/staging/pv1", FSType: "xfs", Source: "/dev/nvme0n1"},
	}
	src.HostMounts = []mountinfo.Mount{
		// The proxy's own nvme mount, seen from the host: the same mount.
		{ID: 7, Major: 259, Minor: 0, Root: "/", MountPoint: "/var/lib/kubelet/plugins/x/staging/pv1", FSType: "xfs", Source: "/dev/nvme0n1"},
		// vdb mounted only on the host, at /mnt.
		{ID: 8, Major: 254, Minor: 16, Root: "/", MountPoint: "/mnt", FSType: "ext4", Source: "/dev/vdb"},
	}
	src.Swaps = []DevNum{{Major: 7, Minor: 3}}
	before := treeHash(t, filepath.Dir(fx.sysfs))
	s, err := Read(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range s.Disks {
		got = append(got, fmt.Sprintf("%d %s host=%t offline=%t mounts=%d hostmounts=%d swap=%v", d.Number, d.Name, d.Host != "", d.Offline, len(d.Mounts), len(d.HostMounts), d.Swap))
	}
	want := []string{
		"3 sda host=true offline=false mounts=1 hostmounts=0 swap=[]",
		"4 sdb host=false offline=true mounts=0 hostmounts=0 swap=[]",
		"5 vdb host=true offline=false mounts=0 hostmounts=1 swap=[]",
		"6 nvme0n1 host=false offline=false mounts=1 hostmounts=0 swap=[]",
		"12 loop3 host=true offline=false mounts=0 hostmounts=0 swap=[loop3]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("disks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	sda, _ := s.Disk(blockfixture.SDA, nil)
	if !strings.Contains(sda.Host, "/dev/sda1 is mounted at /") {
		t.Errorf("sda's host reason = %q", sda.Host)
	}
	vdb, _ := s.Disk(blockfixture.VDB, nil)
	if !strings.Contains(vdb.Host, "/dev/vdb is mounted at /mnt in the host's mount namespace") || vdb.InUse() != vdb.Host {
		t.Errorf("vdb: host %q, in use %q", vdb.Host, vdb.InUse())
	}
	if len(s.HostMounts) != 1 || s.HostMounts[0].MountPoint != "/mnt" {
		t.Errorf("host-only mounts = %+v", s.HostMounts)
	}
	if _, err := s.Disk(99, DefaultDiskFilter); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("disk 99: %v", err)
	}
	for _, d := range s.Disks {
		if d.Table != nil || d.TableErr != nil {
			t.Errorf("%s has a layout though no device reader was given", d.Name)
		}
	}
	if after := treeHash(t, filepath.Dir(fx.sysfs)); after != before {
		t.Error("Read changed the fixture's sysfs or devices")
	}
}

// TestReadDeviceReadOnly: a read-only disk that is not SCSI is offline
// (the backend's flag) unless the Source says the device itself is
// read-only.
func TestReadDeviceReadOnly(t *testing.T) {
	fx := newFixture(t)
	blockfixture.WriteFile(t, filepath.Join(fx.sysfs, "block", "vdb", "ro"), "1\n")
	src := fx.source()
	for _, tc := range []struct {
		deviceRO map[uint32]bool
		offline  bool
	}{{nil, true}, {map[uint32]bool{blockfixture.VDB: true}, false}} {
		src.DeviceReadOnly = tc.deviceRO
		s, err := Read(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		if d, _ := s.Disk(blockfixture.VDB, nil); d.Offline != tc.offline {
			t.Errorf("device read-only %v: offline = %v, want %v", tc.deviceRO, d.Offline, tc.offline)
		}
	}
}

// TestReadLayoutsAndVolumes: the layouts come from the DeviceReader for
// the disks Tables selects; a GPT partition is a volume whether or not the
// kernel has a partition for it, and KernelDevice names the kernel's
// partition only when it lies exactly where the table says. StaleParts
// lists what the kernel has that the table does not describe. Reading
// writes nothing.
func TestReadLayoutsAndVolumes(t *testing.T) {
	fx := newFixture(t)
	id := fx.partitionLoop3(t)
	src := fx.source()
	src.Devices = fx.opener()
	src.Tables = func(d *Disk) bool { return d.Number == blockfixture.Loop3 }
	read := func() (*Snapshot, *Disk) {
		t.Helper()
		s, err := Read(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		d, err := s.Disk(blockfixture.Loop3, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s, d
	}
	before := treeHash(t, filepath.Dir(fx.sysfs))

	// The table's partition, and no kernel partition.
	s, d := read()
	if d.Table == nil || d.TableErr != nil || len(d.Table.Entries) != 1 {
		t.Fatalf("loop3's table = %+v, %v", d.Table, d.TableErr)
	}
	if sda, _ := s.Disk(blockfixture.SDA, nil); sda.Table != nil || sda.TableErr != nil {
		t.Error("sda's layout was read though Tables did not select it")
	}
	vols := d.Volumes()
	if len(vols) != 1 || vols[0].ID != id || vols[0].Part != nil {
		t.Fatalf("volumes = %+v", vols)
	}
	if _, ok := vols[0].KernelDevice(fx.dev); ok {
		t.Error("a volume without a kernel partition has a kernel device")
	}
	if v, err := s.Volume(strings.ToUpper(id)); err != nil || v.Disk.Number != blockfixture.Loop3 || v.Size() != 8<<20 {
		t.Errorf("Volume(%s) = %+v, %v", id, v, err)
	}
	if !d.Partitioned() || d.WholeVolume() != "" {
		t.Errorf("partitioned %v, whole volume %q", d.Partitioned(), d.WholeVolume())
	}

	// The kernel's partition 1, smaller than the entry, and a partition 2
	// the table does not list.
	fx.addKernelPartition(t, 1, 1<<20, 4<<20, "259:7")
	fx.addKernelPartition(t, 2, 20<<20, 1<<20, "259:8")
	_, d = read()
	v := d.Volumes()[0]
	if v.Part == nil || v.Part.Name != "loop3p1" {
		t.Fatalf("volume's kernel partition = %+v", v.Part)
	}
	if _, ok := v.KernelDevice(fx.dev); ok {
		t.Error("a kernel partition smaller than its entry counts as the volume's device")
	}
	var stale []string
	for _, p := range d.StaleParts(d.Table, true) {
		stale = append(stale, p.Name)
	}
	if !reflect.DeepEqual(stale, []string{"loop3p2"}) {
		t.Errorf("stale partitions (growable) = %v, want [loop3p2]", stale)
	}
	if n := len(d.StaleParts(d.Table, false)); n != 2 {
		t.Errorf("stale partitions (exact) = %d, want 2", n)
	}

	// The kernel's partition where the table says.
	fx.addKernelPartition(t, 1, 1<<20, 8<<20, "259:7")
	s, d = read()
	v = d.Volumes()[0]
	if dev, ok := v.KernelDevice(fx.dev); !ok || dev != filepath.Join(fx.dev, "loop3p1") {
		t.Errorf("KernelDevice = %q, %v", dev, ok)
	}
	if _, bv := s.ByDevice(DevNum{Major: 259, Minor: 7}, "", fx.dev); bv == nil || bv.ID != id {
		t.Errorf("ByDevice(259:7) = %+v", bv)
	}

	// Reads wrote nothing; the partitions above were the test's.
	if after := treeHash(t, filepath.Dir(fx.sysfs)); after == before {
		t.Fatal("the test's own partitions did not change the tree: treeHash sees nothing")
	}
	again := treeHash(t, filepath.Dir(fx.sysfs))
	read()
	if treeHash(t, filepath.Dir(fx.sysfs)) != again {
		t.Error("Read changed the fixture's sysfs or devices")
	}
}

// TestReadWholeDiskVolume: a disk without a partition table holding a
// filesystem with a UUID is one volume named by the UUID.
func TestReadWholeDiskVolume(t *testing.T) {
	fx := newFixture(t)
	dev := filepath.Join(fx.dev, "vdb")
	f, err := os.OpenFile(dev, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range blockfixture.ExtSuperblock(1000, 0x4, 0x40, 0) {
		if _, err := f.WriteAt(p.Data, int64(p.Off)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.WriteAt([]byte("\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff\x01"), 1024+0x68); err != nil {
		t.Fatal(err)
	}
	f.Close()
	src := fx.source()
	src.Devices = fx.opener()
	s, err := Read(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := s.Disk(blockfixture.VDB, nil)
	const uuid = "11223344-5566-7788-99aa-bbccddeeff01"
	if d.WholeVolume() != uuid || d.Content.MountType() != "ext4" {
		t.Fatalf("whole volume %q, content %+v", d.WholeVolume(), d.Content)
	}
	if v, err := s.Volume(uuid); err != nil || !v.Whole() || v.Disk != d {
		t.Errorf("Volume(%s) = %+v, %v", uuid, v, err)
	}
}

// TestNumberingWithoutDiskseq: a disk without diskseq is numbered from
// 2^31 up, the same number for as long as the Numbering lives and the
// disk's sysfs object stays, and a fresh Numbering starts again.
func TestNumberingWithoutDiskseq(t *testing.T) {
	fx := newFixture(t)
	if err := os.Remove(filepath.Join(fx.sysfs, "block", "vdb", "diskseq")); err != nil {
		t.Fatal(err)
	}
	src := fx.source()
	src.Numbers = &Numbering{}
	number := func() uint32 {
		s, err := Read(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range s.Disks {
			if d.Name == "vdb" {
				return d.Number
			}
		}
		t.Fatal("no vdb")
		return 0
	}
	first := number()
	if first < 1<<31 || number() != first {
		t.Fatalf("vdb without diskseq is numbered %d, then %d", first, number())
	}
	if n := (&Numbering{}).Number(&SysfsDisk{Name: "sdz", Diskseq: 77}); n != 77 {
		t.Errorf("a disk with diskseq 77 is numbered %d", n)
	}
}

// TestReadLayoutOfUnreadableDisk: a device that cannot be opened is the
// layout's error, and the snapshot goes on with the other disks.
func TestReadLayoutOfUnreadableDisk(t *testing.T) {
	fx := newFixture(t)
	if err := os.Remove(filepath.Join(fx.dev, "sdb")); err != nil {
		t.Fatal(err)
	}
	src := fx.source()
	src.Devices = fx.opener()
	s, err := Read(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	sdb, _ := s.Disk(blockfixture.SDB, nil)
	vdb, _ := s.Disk(blockfixture.VDB, nil)
	if sdb.TableErr == nil || vdb.TableErr != nil {
		t.Errorf("sdb layout error %v, vdb %v", sdb.TableErr, vdb.TableErr)
	}
}
