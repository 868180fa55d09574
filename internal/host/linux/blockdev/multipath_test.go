package blockdev

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/blockfixture"
)

// Disk numbers (diskseq) of the constructed multipath layout.
const (
	nMpath = 21 // dm-1, the multipath device
	nPathC = 22 // sdc, a path of dm-1
	nPathD = 23 // sdd, a path of dm-1
	nLVMPV = 24 // sde, an LVM physical volume under dm-3
)

// mpathWWID is the LUN's NAA ID as the paths' wwid shows it; multipathd
// names the map by udev's ID_SERIAL, the same ID behind scsi_id's
// designator-type prefix "3" (NAA).
const mpathWWID = "600a098038303053453f463045727a6b"

// addMultipathLayout constructs, in the fixture's sysfs, the layout the
// kernel documents for device-mapper (Documentation/ABI/testing/sysfs-block-dm:
// dm/name, dm/uuid; sysfs-block: holders/, slaves/) as multipathd and kpartx
// leave it. No recorded tree: this machine has no device-mapper. It builds
//   - sdc (4:0:0:1) and sdd (5:0:0:1): two SCSI paths to one LUN, each
//     with the LUN's wwid and VPD 0x80 serial, both held by dm-1;
//   - dm-1: the multipath map "mpatha", uuid "mpath-3<wwid>", slaves
//     sdc and sdd;
//   - sde: a disk held by dm-3, an LVM logical volume (uuid "LVM-...").
//
// The device nodes are sparse files as large as sysfs says.
func addMultipathLayout(t *testing.T, fx *fixture) {
	t.Helper()
	blk := func(parts ...string) string { return filepath.Join(append([]string{fx.sysfs, "block"}, parts...)...) }
	const size = 256 << 20
	disk := func(name, dev string, seq int) {
		for attr, v := range map[string]string{
			"dev": dev, "diskseq": fmt.Sprint(seq), "size": fmt.Sprint(size / 512), "ro": "0", "hidden": "0", "removable": "0",
			"queue/logical_block_size": "512", "queue/physical_block_size": "512",
		} {
			blockfixture.WriteFile(t, blk(name, attr), v+"\n")
		}
		makeSparse(t, filepath.Join(fx.dev, name), size)
	}
	vpd80 := func(serial string) string { return string([]byte{0, 0x80, 0, byte(len(serial))}) + serial }
	for i, p := range []struct{ name, dev, hctl string }{{"sdc", "8:32", "4:0:0:1"}, {"sdd", "8:48", "5:0:0:1"}} {
		disk(p.name, p.dev, nPathC+i)
		if blockfixture.ColonsOK {
			if err := os.MkdirAll(blk(p.name, "device", "scsi_device", p.hctl), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		blockfixture.WriteFile(t, blk(p.name, "device", "state"), "running\n")
		blockfixture.WriteFile(t, blk(p.name, "device", "wwid"), "naa."+mpathWWID+"\n")
		blockfixture.WriteFile(t, blk(p.name, "device", "vpd_pg80"), vpd80("SN-LUN-0001"))
		if err := os.MkdirAll(blk(p.name, "holders", "dm-1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(blk("dm-1", "slaves", p.name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	disk("dm-1", "253:1", nMpath)
	blockfixture.WriteFile(t, blk("dm-1", "dm", "name"), "mpatha\n")
	blockfixture.WriteFile(t, blk("dm-1", "dm", "uuid"), "mpath-3"+mpathWWID+"\n")
	blockfixture.WriteFile(t, blk("dm-1", "dm", "suspended"), "0\n")

	disk("sde", "8:64", nLVMPV)
	if err := os.MkdirAll(blk("sde", "holders", "dm-3"), 0o755); err != nil {
		t.Fatal(err)
	}
	disk("dm-3", "253:3", 25)
	blockfixture.WriteFile(t, blk("dm-3", "dm", "name"), "vg0-data\n")
	blockfixture.WriteFile(t, blk("dm-3", "dm", "uuid"), "LVM-Qm0fW1yQ2tq3bH8pZ7xJk3vT9sLpN4cRd8XyZ0a1b2c3d4e5f6g7h8i9j0k1l2m3\n")
	if err := os.MkdirAll(blk("dm-3", "slaves", "sde"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// addKpartxPartition adds what kpartx makes for partition n of dm-1 (as
// multipathd's udev rules run it when the table changes): a dm-linear
// device dm-2 named "mpatha-part<n>", uuid "part<n>-" + the map's uuid,
// whose slave is dm-1 and which dm-1 holds.
func addKpartxPartition(t *testing.T, fx *fixture, n int, size int64) {
	t.Helper()
	blk := func(parts ...string) string { return filepath.Join(append([]string{fx.sysfs, "block"}, parts...)...) }
	for attr, v := range map[string]string{
		"dev": "253:2", "diskseq": "26", "size": fmt.Sprint(size / 512), "ro": "0", "hidden": "0", "removable": "0",
		"queue/logical_block_size": "512", "queue/physical_block_size": "512",
		"dm/name": fmt.Sprintf("mpatha-part%d", n), "dm/uuid": fmt.Sprintf("part%d-mpath-3%s", n, mpathWWID),
	} {
		blockfixture.WriteFile(t, blk("dm-2", attr), v+"\n")
	}
	for _, d := range []string{blk("dm-2", "slaves", "dm-1"), blk("dm-1", "holders", "dm-2")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	makeSparse(t, filepath.Join(fx.dev, "dm-2"), size)
}

// TestDMMultipathOnConstructedSysfs (issue 17 item 7): on a sysfs tree
// constructed from the kernel's documented device-mapper layout, a
// dm-multipath map is the disk (IDs from its paths' wwid and serial), its
// paths are not disks of their own and are never taken offline, its
// kpartx partitions are its volumes' devices (they do not make it a host
// disk), and other device-mapper targets (LVM) are neither offered nor
// make their disks anything but the host's.
func TestDMMultipathOnConstructedSysfs(t *testing.T) {
	fx := newFixture(t)
	addMultipathLayout(t, fx)
	fx.exec.Respond = fakeMkfs(t)
	b := fx.backend(t, Config{})
	ctx := context.Background()

	ids, err := b.ListDiskIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids[nMpath].Page83, mpathWWID; got != want {
		t.Errorf("multipath disk Page83 = %q, want %q (the LUN's NAA ID, as Windows' MPIO disk shows it)", got, want)
	}
	if got := ids[nMpath].SerialNumber; got != "SN-LUN-0001" {
		t.Errorf("multipath disk SerialNumber = %q, want the LUN's VPD 0x80 serial", got)
	}
	for n, what := range map[uint32]string{nPathC: "path sdc", nPathD: "path sdd", 25: "LVM volume dm-3", 26: "kpartx partition"} {
		if _, ok := ids[n]; ok {
			t.Errorf("%s (disk %d) is listed as a disk", what, n)
		}
	}
	if _, ok := ids[nLVMPV]; !ok {
		t.Error("the LVM physical volume sde is not listed (host disks are listed)")
	}
	wantErr(t, b.PartitionDisk(ctx, nLVMPV), errdefs.ErrFailedPrecondition, "held by dm-3")
	for _, n := range []uint32{nPathC, nPathD} {
		wantErr(t, b.SetDiskOnline(ctx, n, false), errdefs.ErrNotFound, fmt.Sprintf("disk %d", n))
	}

	// PartitionDisk writes the GPT onto the map itself; device-mapper
	// devices take no BLKPG partitions (kpartx makes them), so none is
	// asked for.
	if err := b.PartitionDisk(ctx, nMpath); err != nil {
		t.Fatal(err)
	}
	for _, c := range fx.k.takeCalls() {
		if strings.HasPrefix(c, "add ") {
			t.Errorf("BLKPG on a device-mapper disk: %q", c)
		}
	}
	vols, err := b.ListVolumesOnDisk(ctx, nMpath, 0)
	if err != nil || len(vols) != 1 {
		t.Fatalf("ListVolumesOnDisk(multipath) = %v, %v", vols, err)
	}
	wantErr(t, b.FormatVolume(ctx, vols[0]), errdefs.ErrUnavailable, "kpartx")

	// kpartx (run by multipathd's udev rules on the table change) adds
	// dm-2 for partition 1: the volume's device, not a holder that makes
	// the map the host's.
	_, v, err := b.lookup(ctx, vols[0])
	if err != nil {
		t.Fatal(err)
	}
	addKpartxPartition(t, fx, 1, v.Size())
	if err := b.FormatVolume(ctx, vols[0]); err != nil {
		t.Fatal(err)
	}
	if calls := fx.exec.Calls(); len(calls) == 0 || calls[len(calls)-1][len(calls[len(calls)-1])-1] != filepath.Join(fx.dev, "dm-2") {
		t.Fatalf("mkfs ran on %v, want the kpartx device dm-2", calls)
	}
	if n, err := b.DiskNumber(ctx, vols[0]); err != nil || n != nMpath {
		t.Fatalf("DiskNumber = %d, %v, want the multipath disk %d", n, err, nMpath)
	}

	// Offline: the map gets the read-only flag; no path's SCSI state is
	// touched, so the other users of the LUN's paths are unaffected.
	fx.k.takeCalls()
	if err := b.SetDiskOnline(ctx, nMpath, false); err != nil {
		t.Fatal(err)
	}
	if got := fx.k.takeCalls(); !reflect.DeepEqual(got, []string{"flush dm-1 true", "ro dm-1 true"}) {
		t.Fatalf("offline calls = %q", got)
	}
	for _, p := range []string{"sdc", "sdd"} {
		if st, _ := blocktopo.ReadAttr(filepath.Join(fx.sysfs, "block", p), "device/state"); st != "running" {
			t.Errorf("path %s state = %q: a member path was taken offline", p, st)
		}
	}
	if err := b.SetDiskOnline(ctx, nMpath, true); err != nil {
		t.Fatal(err)
	}
}
