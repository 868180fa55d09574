package blocktopo

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/blockfixture"
)

func TestReadSysDisks(t *testing.T) {
	fx := newFixture(t)
	disks, err := ReadSysfsDisks(fx.sysfs, DefaultDiskFilter)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]SysfsDisk{}
	var names []string
	for _, d := range disks {
		byName[d.Name] = d
		names = append(names, d.Name)
	}
	// loop5 (nothing attached), zram0 (RAM), dm-0 (filter) and nvme0c0n1
	// (hidden) are not disks to offer.
	if want := []string{"loop3", "nvme0n1", "sda", "sdb", "vdb"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("disks = %v, want %v", names, want)
	}

	sda := byName["sda"]
	if sda.Dev != (DevNum{8, 0}) || sda.Diskseq != 3 || sda.Size != 64<<20 || sda.LogicalBlock != 512 || sda.PhysicalBlock != 4096 {
		t.Errorf("sda = %+v", sda)
	}
	if sda.Page83 != "600a0b800011115500000000deadbeef" || sda.Serial != "SN-SDA-0001" {
		t.Errorf("sda IDs = %q, %q (want the VPD pages decoded)", sda.Page83, sda.Serial)
	}
	if len(sda.Parts) != 1 || !reflect.DeepEqual(sda.Parts[0], KernelPartition{Name: "sda1", Number: 1, Dev: DevNum{8, 1}, Start: 1 << 20, Size: 126976 * 512}) {
		t.Errorf("sda partitions = %+v", sda.Parts)
	}
	if blockfixture.ColonsOK {
		if sda.SCSI == nil || *sda.SCSI != (SCSIAddress{"2", "0", "1", "3"}) || sda.SCSIState != "running" {
			t.Errorf("sda SCSI = %+v %q", sda.SCSI, sda.SCSIState)
		}
		if sdb := byName["sdb"]; sdb.SCSI == nil || sdb.SCSIState != "offline" {
			t.Errorf("sdb SCSI = %+v %q", sdb.SCSI, sdb.SCSIState)
		}
	}
	if sdb := byName["sdb"]; sdb.Page83 != "IET     VIRTUAL-DISK    sdb-0001" || sdb.Serial != "" {
		t.Errorf("sdb IDs = %q, %q (want the T10 wwid)", sdb.Page83, sdb.Serial)
	}
	if vdb := byName["vdb"]; vdb.Serial != "vol-0abc123" || vdb.Page83 != "" || vdb.SCSI != nil {
		t.Errorf("vdb = %+v", vdb)
	}
	if nv := byName["nvme0n1"]; nv.Page83 != "0025388b91c3d1a2" || nv.Serial != "vol0123456789abcdef0" {
		t.Errorf("nvme0n1 IDs = %q, %q", nv.Page83, nv.Serial)
	}
	if lo := byName["loop3"]; lo.LoopBacking != "/var/tmp/csi-disk-0001.img" || lo.Page83 != "" || lo.Serial != "" || lo.Diskseq != 12 {
		t.Errorf("loop3 = %+v", lo)
	}

	// The filter narrows; a vanished disk is skipped, not an error.
	only, err := ReadSysfsDisks(fx.sysfs, []string{"vd*"})
	if err != nil || len(only) != 1 || only[0].Name != "vdb" {
		t.Fatalf("filter vd*: %v %v", only, err)
	}
	if err := os.Remove(filepath.Join(fx.sysfs, "block", "vdb", "dev")); err != nil {
		t.Fatal(err)
	}
	if after, err := ReadSysfsDisks(fx.sysfs, []string{"vd*"}); err != nil || len(after) != 0 {
		t.Fatalf("vanished disk: %v %v", after, err)
	}
	// A malformed attribute is an error naming the disk.
	blockfixture.WriteFile(t, filepath.Join(fx.sysfs, "block", "sda", "size"), "many\n")
	if _, err := ReadSysfsDisks(fx.sysfs, []string{"sda"}); err == nil {
		t.Fatal("malformed size accepted")
	}
}

func TestParseHelpers(t *testing.T) {
	if d, err := ParseDevNum("259:12\n"); err != nil || d != (DevNum{Major: 259, Minor: 12}) {
		t.Errorf("ParseDevNum = %v %v", d, err)
	}
	for _, bad := range []string{"", "8", "8:x", "-1:0"} {
		if _, err := ParseDevNum(bad); err == nil {
			t.Errorf("ParseDevNum(%q) succeeded", bad)
		}
	}
	if _, ok := parseSCSIAddress("virtio1"); ok {
		t.Error("virtio1 parsed as a SCSI address")
	}
}
