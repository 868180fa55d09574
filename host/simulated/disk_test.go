package simulated_test

import (
	"context"
	"errors"
	"reflect"
	"regexp"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
)

var volumeIDPattern = regexp.MustCompile(`^\\\\\?\\Volume\{[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\}\\$`)

// TestDiskLocationsAndIDs: a SCSI disk's location is reported as Windows
// reports it (upstream parses MSFT_Disk.Location, whose "Port N" part it
// drops; the Windows backend reads IOCTL_SCSI_GET_ADDRESS and does the
// same): Adapter, Target and LUNID, and Bus always "". The bus number
// stays in ListDisks.
func TestDiskLocationsAndIDs(t *testing.T) {
	h := defaultHost(t)
	withBus, err := h.AddDisk(simulated.DiskSpec{Size: 1 << 30, Location: "2:3:4:5"})
	must(t, err)
	locs, err := h.Disk().ListDiskLocations(ctx)
	must(t, err)
	want := map[uint32]disk.DiskLocation{
		0:       {Adapter: "0", Target: "0", LUNID: "0"},
		1:       {Adapter: "1", Target: "0", LUNID: "0"},
		2:       {Adapter: "1", Target: "0", LUNID: "1"},
		withBus: {Adapter: "2", Target: "4", LUNID: "5"},
	}
	if !reflect.DeepEqual(locs, want) {
		t.Errorf("ListDiskLocations = %v; want %v", locs, want)
	}
	if got := h.ListDisks()[withBus].Location; got != "2:3:4:5" {
		t.Errorf("ListDisks: disk %d is at %q, want the configured 2:3:4:5", withBus, got)
	}
	// A disk without a location is not listed; its IDs are, empty.
	n, err := h.AddDisk(simulated.DiskSpec{Size: 1 << 30})
	must(t, err)
	locs, _ = h.Disk().ListDiskLocations(ctx)
	if _, ok := locs[n]; ok {
		t.Errorf("disk %d has no location but is listed", n)
	}
	ids, err := h.Disk().ListDiskIDs(ctx)
	must(t, err)
	if got := ids[1]; got.Page83 != "60022480000000000000000000000001" || got.SerialNumber != "SIM-DATA-0001" {
		t.Errorf("IDs of disk 1 = %+v", got)
	}
	if got, ok := ids[n]; !ok || got != (disk.DiskIDs{}) {
		t.Errorf("IDs of disk %d = %+v, %v; want empty IDs", n, got, ok)
	}
}

// TestNVMeDiskLocation: an NVMe disk's location is what upstream parses
// out of its MSFT_Disk.Location ("Integrated : Bus 2 : Device 0 :
// Function 0 : Adapter 0"), which the Windows backend reads for disks on
// the NVMe bus: Adapter "0", Bus the PCI bus number, Target and LUNID "".
// Never LUN "0": azuredisk's FindDiskByLun("0") would pick the NVMe disk.
func TestNVMeDiskLocation(t *testing.T) {
	h := defaultHost(t)
	nvme, err := h.AddDisk(simulated.DiskSpec{Size: 1 << 30, BusType: "nvme", Location: "2", Serial: "NVME-1"})
	must(t, err)
	unlocated, err := h.AddDisk(simulated.DiskSpec{Size: 1 << 30, BusType: "NVMe"})
	must(t, err)
	locs, err := h.Disk().ListDiskLocations(ctx)
	must(t, err)
	if got, want := locs[nvme], (disk.DiskLocation{Adapter: "0", Bus: "2"}); got != want {
		t.Errorf("location of NVMe disk %d = %+v, want %+v", nvme, got, want)
	}
	if l, ok := locs[unlocated]; ok {
		t.Errorf("NVMe disk %d without a location is listed at %+v", unlocated, l)
	}
	if got := locs[1]; got != (disk.DiskLocation{Adapter: "1", Target: "0", LUNID: "0"}) {
		t.Errorf("location of SCSI disk 1 = %+v", got)
	}
	for _, d := range h.ListDisks() {
		want := map[uint32][2]string{
			0: {"SCSI", "0:0:0:0"}, 1: {"SCSI", "1:0:0:0"}, 2: {"SCSI", "1:0:0:1"},
			nvme: {"NVMe", "2"}, unlocated: {"NVMe", ""},
		}[d.Number]
		if got := [2]string{d.BusType, d.Location}; got != want {
			t.Errorf("ListDisks: disk %d has bus type and location %q, want %q", d.Number, got, want)
		}
	}
	// The rest of the disk is an ordinary disk.
	must(t, h.Disk().PartitionDisk(ctx, nvme))
	ids, err := h.Disk().ListDiskIDs(ctx)
	must(t, err)
	if ids[nvme].SerialNumber != "NVME-1" {
		t.Errorf("IDs of NVMe disk %d = %+v", nvme, ids[nvme])
	}
}

func TestPartitionDisk(t *testing.T) {
	h := defaultHost(t)
	ids, err := h.Volume().ListVolumesOnDisk(ctx, 1, 0)
	if err != nil || len(ids) != 0 {
		t.Fatalf("a RAW disk lists %v, %v; want no volumes", ids, err)
	}
	must(t, h.Disk().PartitionDisk(ctx, 1))
	d := h.ListDisks()[1]
	if d.PartitionStyle != "GPT" || len(d.Partitions) != 1 {
		t.Fatalf("after PartitionDisk: %+v", d)
	}
	p := d.Partitions[0]
	// 1 GiB: from 1 MiB to 1 GiB - 1 MiB.
	if p.Number != 1 || p.Offset != 1<<20 || p.Size != 1022<<20 || p.Type != "Basic" {
		t.Errorf("partition = %+v; want number 1 at 1 MiB, 1022 MiB, Basic", p)
	}
	if !volumeIDPattern.MatchString(p.VolumeID) {
		t.Errorf("volume ID %q is not a lower-case v4 \\\\?\\Volume{GUID}\\", p.VolumeID)
	}
	// Idempotent: same partition, same volume.
	must(t, h.Disk().PartitionDisk(ctx, 1))
	if again := h.ListDisks()[1]; !reflect.DeepEqual(again, d) {
		t.Errorf("second PartitionDisk changed the disk:\n%+v\n%+v", d, again)
	}
	cur, maximum, err := h.Volume().VolumeSizes(ctx, p.VolumeID)
	if err != nil || cur != 1022<<20 || maximum != 1022<<20 {
		t.Errorf("VolumeSizes = %d, %d, %v", cur, maximum, err)
	}
	// Every volume gets its own ID.
	if other := volumeOf(t, h, 2); other == p.VolumeID {
		t.Error("two volumes share an ID")
	}
}

func TestDiskErrors(t *testing.T) {
	h := defaultHost(t)
	wantErr(t, h.Disk().PartitionDisk(ctx, 9), errdefs.ErrNotFound, "disk 9 does not exist")
	_, err := h.Disk().DiskSize(ctx, 9)
	wantErr(t, err, errdefs.ErrNotFound, "disk 9")
	wantErr(t, h.Disk().SetDiskOnline(ctx, 9, true), errdefs.ErrNotFound)
	_, err = h.Disk().IsDiskOnline(ctx, 9)
	wantErr(t, err, errdefs.ErrNotFound)
	_, err = h.Volume().ListVolumesOnDisk(ctx, 9, 0)
	wantErr(t, err, errdefs.ErrNotFound)

	// The system disk cannot go offline.
	wantErr(t, h.Disk().SetDiskOnline(ctx, 0, false), errdefs.ErrFailedPrecondition, "system disk")
}

func TestOfflineDisk(t *testing.T) {
	h := defaultHost(t)
	id := formatted(t, h, 1)
	must(t, h.Filesystem().Mkdir(ctx, kubelet+`\stage`))
	must(t, h.Volume().MountVolume(ctx, id, kubelet+`\stage`))

	must(t, h.Disk().SetDiskOnline(ctx, 1, false))
	must(t, h.Disk().SetDiskOnline(ctx, 1, false)) // no-op
	if online, err := h.Disk().IsDiskOnline(ctx, 1); online || err != nil {
		t.Fatalf("IsDiskOnline = %v, %v", online, err)
	}
	if size, err := h.Disk().DiskSize(ctx, 1); size != 1<<30 || err != nil {
		t.Errorf("DiskSize of an offline disk = %d, %v", size, err)
	}
	// Partitioned already: PartitionDisk reads the layout (readable while
	// offline, as upstream reads MSFT_Disk and MSFT_Partition) and is done;
	// the disk stays offline.
	before := h.ListDisks()[1]
	must(t, h.Disk().PartitionDisk(ctx, 1))
	if after := h.ListDisks()[1]; !reflect.DeepEqual(after, before) {
		t.Errorf("PartitionDisk of an offline, partitioned disk changed it:\n%+v\n%+v", before, after)
	}
	_, err := h.Volume().ListVolumesOnDisk(ctx, 1, 0)
	wantErr(t, err, errdefs.ErrFailedPrecondition, "disk 1 is offline")

	// Its volumes are gone while it is offline, as on Windows: an offline
	// disk's volume devices are removed (FindFirstVolume does not list
	// them, MSFT_Volume has no instance, opening \\?\Volume{…} fails),
	// so every volume call is NotFound, as the Windows backend answers.
	v := h.Volume()
	checks := map[string]error{
		"IsVolumeFormatted": func() error { _, err := v.IsVolumeFormatted(ctx, id); return err }(),
		"FormatVolume":      v.FormatVolume(ctx, id),
		"VolumeSizes":       func() error { _, _, err := v.VolumeSizes(ctx, id); return err }(),
		"ResizeVolume":      v.ResizeVolume(ctx, id, 500<<20),
		"VolumeStats":       func() error { _, _, err := v.VolumeStats(ctx, id); return err }(),
		"DiskNumber":        func() error { _, err := v.DiskNumber(ctx, id); return err }(),
		"FlushVolume":       v.FlushVolume(ctx, id),
		"MountVolume":       v.MountVolume(ctx, id, kubelet+`\alt`),
	}
	for name, err := range checks {
		t.Run(name, func(t *testing.T) { wantErr(t, err, errdefs.ErrNotFound, "does not exist", "disk 1 is offline") })
	}
	// Paths through its mount point lead nowhere, as a mounted folder
	// whose volume is not present does on Windows; the mount point itself
	// is still there, and still names the volume.
	if ok, err := h.Filesystem().PathExists(ctx, kubelet+`\stage\x`); ok || err != nil {
		t.Errorf("PathExists(below the mount point) = %v, %v; want false, nil", ok, err)
	}
	_, err = v.ClosestVolume(ctx, kubelet+`\stage\x`)
	wantErr(t, err, errdefs.ErrNotFound, "disk 1 is offline")
	if ok, err := h.Filesystem().PathExists(ctx, kubelet+`\stage`); !ok || err != nil {
		t.Errorf("PathExists(mount point) = %v, %v", ok, err)
	}
	if ok, _ := h.Filesystem().IsSymlink(ctx, kubelet+`\stage`); ok {
		t.Error("IsSymlink is true for a mount point of an offline volume")
	}
	if got, err := v.VolumeAt(ctx, kubelet+`\stage`); err != nil || got != id {
		t.Errorf("VolumeAt(mount point) = %q, %v; want %s", got, err, id)
	}

	// Back online, everything works again, files included.
	must(t, h.Disk().SetDiskOnline(ctx, 1, true))
	must(t, h.Filesystem().Mkdir(ctx, kubelet+`\stage\x`))
}

// TestUnmountWhileDiskOffline: NodeUnstage of a driver that took the disk
// offline first (or whose disk was detached) must still be able to remove
// the mount point. DeleteVolumeMountPoint needs no volume, and the
// Windows backend's UnmountVolume removes it; so does the simulated host.
func TestUnmountWhileDiskOffline(t *testing.T) {
	h := defaultHost(t)
	id := formatted(t, h, 1)
	stage := kubelet + `\stage`
	must(t, h.Filesystem().Mkdir(ctx, stage))
	must(t, h.Volume().MountVolume(ctx, id, stage))
	must(t, h.WriteFile(stage+`\data`, []byte("kept")))
	must(t, h.Disk().SetDiskOnline(ctx, 1, false))

	must(t, h.Volume().UnmountVolume(ctx, id, stage))
	if got, err := h.Volume().VolumeAt(ctx, stage); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("VolumeAt(%s) after UnmountVolume = %q, %v; want NotFound", stage, got, err)
	}
	must(t, h.Filesystem().Rmdir(ctx, stage, false)) // an empty folder now

	// The volume kept its files: back online, mounted elsewhere, they are there.
	must(t, h.Disk().SetDiskOnline(ctx, 1, true))
	alt := kubelet + `\alt`
	must(t, h.Volume().MountVolume(ctx, id, alt))
	if b, err := h.ReadFile(alt + `\data`); err != nil || string(b) != "kept" {
		t.Errorf("ReadFile(data) = %q, %v; want the file written before", b, err)
	}
}

func TestAddRemoveResizeDisk(t *testing.T) {
	h := defaultHost(t)
	n, err := h.AddDisk(simulated.DiskSpec{Size: 1 << 30})
	if err != nil || n != 3 {
		t.Fatalf("AddDisk = %d, %v; want 3", n, err)
	}
	seven := uint32(7)
	if n, err := h.AddDisk(simulated.DiskSpec{Size: 1 << 30, Number: &seven}); err != nil || n != 7 {
		t.Fatalf("AddDisk(number 7) = %d, %v", n, err)
	}
	_, err = h.AddDisk(simulated.DiskSpec{Size: 1 << 30, Number: &seven})
	wantErr(t, err, errdefs.ErrAlreadyExists, "disk 7 already exists")
	_, err = h.AddDisk(simulated.DiskSpec{Size: 1})
	wantErr(t, err, errdefs.ErrInvalidArgument, "out of range")
	_, err = h.AddDisk(simulated.DiskSpec{Size: 1 << 30, FileSystem: "NTFS", DriveLetter: "C"})
	wantErr(t, err, errdefs.ErrAlreadyExists, "drive C:")

	// A pre-formatted disk with a drive letter.
	e, err := h.AddDisk(simulated.DiskSpec{Size: 1 << 30, FileSystem: "NTFS", DriveLetter: "E"})
	must(t, err)
	must(t, h.Filesystem().Mkdir(ctx, `E:\data`))

	id := volumeOf(t, h, 1)
	must(t, h.RemoveDisk(1))
	wantErr(t, h.RemoveDisk(1), errdefs.ErrNotFound)
	_, err = h.Volume().DiskNumber(ctx, id)
	wantErr(t, err, errdefs.ErrNotFound, "does not exist")
	// The lowest free number comes back, as on Windows.
	if n, _ := h.AddDisk(simulated.DiskSpec{Size: 1 << 30}); n != 1 {
		t.Errorf("new disk got number %d; want 1", n)
	}
	// Removing the E: disk frees the letter.
	must(t, h.RemoveDisk(e))
	if ok, _ := h.Filesystem().PathExists(ctx, `E:\data`); ok {
		t.Error(`E:\data exists after its disk is gone`)
	}
	wantErr(t, h.RemoveDisk(0), errdefs.ErrFailedPrecondition, "system disk")

	// Grow disk 2: its volume's maximum follows; shrinking is refused.
	id = volumeOf(t, h, 2)
	must(t, h.ResizeDisk(2, 3<<30))
	if _, maximum, _ := h.Volume().VolumeSizes(ctx, id); maximum != 3<<30-2<<20 {
		t.Errorf("maximum after growing = %d; want %d", maximum, 3<<30-2<<20)
	}
	if size, _ := h.Disk().DiskSize(ctx, 2); size != 3<<30 {
		t.Errorf("DiskSize = %d", size)
	}
	wantErr(t, h.ResizeDisk(2, 1<<30), errdefs.ErrOutOfRange, "cannot shrink")
	wantErr(t, h.ResizeDisk(42, 1<<30), errdefs.ErrNotFound)
}

func TestRescanCounts(t *testing.T) {
	h := defaultHost(t)
	for range 3 {
		must(t, h.Disk().Rescan(ctx))
	}
	if n := h.RescanCount(); n != 3 {
		t.Errorf("RescanCount = %d; want 3", n)
	}
}

func TestSystemDiskLayout(t *testing.T) {
	h := defaultHost(t)
	d := h.ListDisks()[0]
	var types []string
	for _, p := range d.Partitions {
		types = append(types, p.Type)
	}
	if !d.System || d.PartitionStyle != "GPT" || !reflect.DeepEqual(types, []string{"System", "Reserved", "Basic"}) {
		t.Fatalf("system disk = %+v", d)
	}
	ids, err := h.Volume().ListVolumesOnDisk(ctx, 0, 0)
	if err != nil || len(ids) != 2 || ids[1] != systemVolume(t, h) {
		t.Errorf("volumes on disk 0 = %v, %v; want the EFI volume and C:", ids, err)
	}
	// The MSR partition exists but holds no volume.
	if ids, err := h.Volume().ListVolumesOnDisk(ctx, 0, 2); err != nil || len(ids) != 0 {
		t.Errorf("volumes on partition 2 = %v, %v; want none", ids, err)
	}
	if ids, err := h.Volume().ListVolumesOnDisk(ctx, 0, 3); err != nil || len(ids) != 1 || ids[0] != systemVolume(t, h) {
		t.Errorf("volumes on partition 3 = %v, %v; want C:", ids, err)
	}
	_, err = h.Volume().ListVolumesOnDisk(ctx, 0, 4)
	wantErr(t, err, errdefs.ErrNotFound, "no partition 4")
	// PartitionDisk leaves it alone: it has a data partition.
	must(t, h.Disk().PartitionDisk(ctx, 0))
	if again := h.ListDisks()[0]; !reflect.DeepEqual(again, d) {
		t.Error("PartitionDisk changed the system disk")
	}
	wantErr(t, h.Volume().FormatVolume(ctx, systemVolume(t, h)), errdefs.ErrFailedPrecondition, "system disk")
}

// TestPartitionOfflineRAWDisk: gcp-pd, aws-ebs and vsphere call
// PartitionDisk before SetDiskState(online), and disks arrive offline
// under the OfflineShared SAN policy. A RAW disk cannot be initialised
// offline, so PartitionDisk brings it online first, as the Windows
// backend does, and partitions it.
func TestPartitionOfflineRAWDisk(t *testing.T) {
	h := defaultHost(t)
	must(t, h.Disk().SetDiskOnline(ctx, 1, false))
	must(t, h.Disk().PartitionDisk(ctx, 1))
	d := h.ListDisks()[1]
	if !d.Online || d.PartitionStyle != "GPT" || len(d.Partitions) != 1 || d.Partitions[0].Type != "Basic" {
		t.Errorf("offline RAW disk after PartitionDisk: %+v; want online, GPT, one Basic partition", d)
	}
}

// TestDiskReadOnlyAttribute: a disk attached read-only reports it, the
// attribute changes on online and offline disks alike, a hypervisor can
// set it behind the driver's back (SetDiskReadOnlyAttribute, a re-attach
// as in kubernetes-csi/csi-proxy#437), and ListDisks shows it.
func TestDiskReadOnlyAttribute(t *testing.T) {
	h, err := simulated.New(simulated.Config{WorkingDirs: []string{`C:\var\lib\kubelet`},
		Disks: []simulated.DiskSpec{{Size: 1 << 30, ReadOnly: true, Offline: true}, {Size: 1 << 30}}})
	must(t, err)
	ctx := context.Background()
	d := h.Disk()
	ro := func(n uint32) bool {
		t.Helper()
		v, err := d.IsDiskReadOnly(ctx, n)
		must(t, err)
		return v
	}
	if !ro(1) || ro(2) {
		t.Fatalf("read-only: disk 1 %v, disk 2 %v; want true, false", ro(1), ro(2))
	}
	must(t, d.SetDiskReadOnly(ctx, 1, false)) // offline
	must(t, d.SetDiskReadOnly(ctx, 1, false)) // again
	if ro(1) {
		t.Error("disk 1 still read-only")
	}
	must(t, h.SetDiskReadOnlyAttribute(2, true))
	if !ro(2) {
		t.Error("SetDiskReadOnlyAttribute did not set the attribute")
	}
	for _, di := range h.ListDisks() {
		if want := di.Number == 2; di.ReadOnly != want {
			t.Errorf("ListDisks: disk %d ReadOnly %v", di.Number, di.ReadOnly)
		}
	}
	if _, err := d.IsDiskReadOnly(ctx, 9); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("IsDiskReadOnly(9) = %v; want NotFound", err)
	}
	if err := h.SetDiskReadOnlyAttribute(9, true); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("SetDiskReadOnlyAttribute(9) = %v; want NotFound", err)
	}
}
