package blockdev

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestReadSysDisks(t *testing.T) {
	fx := newFixture(t)
	disks, err := readSysDisks(fx.sysfs, DefaultDiskFilter)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]sysDisk{}
	var names []string
	for _, d := range disks {
		byName[d.name] = d
		names = append(names, d.name)
	}
	// loop5 (nothing attached), zram0 (RAM), dm-0 (filter) and nvme0c0n1
	// (hidden) are not disks to offer.
	if want := []string{"loop3", "nvme0n1", "sda", "sdb", "vdb"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("disks = %v, want %v", names, want)
	}

	sda := byName["sda"]
	if sda.dev != (devNum{8, 0}) || sda.diskseq != 3 || sda.size != 64<<20 || sda.logicalBlock != 512 || sda.physicalBlock != 4096 {
		t.Errorf("sda = %+v", sda)
	}
	if sda.page83 != "600a0b800011115500000000deadbeef" || sda.serial != "SN-SDA-0001" {
		t.Errorf("sda IDs = %q, %q (want the VPD pages decoded)", sda.page83, sda.serial)
	}
	if len(sda.parts) != 1 || !reflect.DeepEqual(sda.parts[0], sysPart{name: "sda1", number: 1, dev: devNum{8, 1}, start: 1 << 20, size: 126976 * 512}) {
		t.Errorf("sda partitions = %+v", sda.parts)
	}
	if colonsOK {
		if sda.scsi == nil || *sda.scsi != (scsiAddress{"2", "0", "1", "3"}) || sda.scsiState != "running" {
			t.Errorf("sda SCSI = %+v %q", sda.scsi, sda.scsiState)
		}
		if sdb := byName["sdb"]; sdb.scsi == nil || sdb.scsiState != "offline" {
			t.Errorf("sdb SCSI = %+v %q", sdb.scsi, sdb.scsiState)
		}
	}
	if sdb := byName["sdb"]; sdb.page83 != "IET     VIRTUAL-DISK    sdb-0001" || sdb.serial != "" {
		t.Errorf("sdb IDs = %q, %q (want the T10 wwid)", sdb.page83, sdb.serial)
	}
	if vdb := byName["vdb"]; vdb.serial != "vol-0abc123" || vdb.page83 != "" || vdb.scsi != nil {
		t.Errorf("vdb = %+v", vdb)
	}
	if nv := byName["nvme0n1"]; nv.page83 != "0025388b91c3d1a2" || nv.serial != "vol0123456789abcdef0" {
		t.Errorf("nvme0n1 IDs = %q, %q", nv.page83, nv.serial)
	}
	if lo := byName["loop3"]; lo.loopBacking != "/var/tmp/csi-disk-0001.img" || lo.page83 != "" || lo.serial != "" || lo.diskseq != 12 {
		t.Errorf("loop3 = %+v", lo)
	}

	// The filter narrows; a vanished disk is skipped, not an error.
	only, err := readSysDisks(fx.sysfs, []string{"vd*"})
	if err != nil || len(only) != 1 || only[0].name != "vdb" {
		t.Fatalf("filter vd*: %v %v", only, err)
	}
	if err := os.Remove(filepath.Join(fx.sysfs, "block", "vdb", "dev")); err != nil {
		t.Fatal(err)
	}
	if after, err := readSysDisks(fx.sysfs, []string{"vd*"}); err != nil || len(after) != 0 {
		t.Fatalf("vanished disk: %v %v", after, err)
	}
	// A malformed attribute is an error naming the disk.
	writeFile(t, filepath.Join(fx.sysfs, "block", "sda", "size"), "many\n")
	if _, err := readSysDisks(fx.sysfs, []string{"sda"}); err == nil {
		t.Fatal("malformed size accepted")
	}
}

func TestParseHelpers(t *testing.T) {
	if d, err := parseDevNum("259:12\n"); err != nil || d != (devNum{259, 12}) {
		t.Errorf("parseDevNum = %v %v", d, err)
	}
	for _, bad := range []string{"", "8", "8:x", "-1:0"} {
		if _, err := parseDevNum(bad); err == nil {
			t.Errorf("parseDevNum(%q) succeeded", bad)
		}
	}
	if _, ok := parseSCSIAddress("virtio1"); ok {
		t.Error("virtio1 parsed as a SCSI address")
	}
	caps, err := parseCapEff([]byte("Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t000001fffeffffff\n"))
	if err != nil || caps&(1<<capSysResource) != 0 || caps&(1<<21) == 0 {
		t.Errorf("parseCapEff = %x %v (this machine: everything but CAP_SYS_RESOURCE)", caps, err)
	}
	if _, err := parseCapEff([]byte("Name: x\n")); err == nil {
		t.Error("parseCapEff without CapEff succeeded")
	}
	swaps := parseSwaps([]byte("Filename\tType\tSize\tUsed\tPriority\n/dev/vdb2 partition 1048572 0 -2\n/swap\\040file file 1024 0 -3\n"))
	if !reflect.DeepEqual(swaps, []string{"/dev/vdb2", "/swap file"}) {
		t.Errorf("parseSwaps = %q", swaps)
	}
}
