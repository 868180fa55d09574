package wirecompat

import (
	"strconv"
	"strings"
	"testing"

	diskv1 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1"
	diskv1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1alpha1"
	diskv1beta1 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1beta1"
	diskv1beta2 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1beta2"
	diskv1beta3 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1beta3"
	"google.golang.org/grpc/codes"
)

// These tests drive the older group-versions upstream v1.3.0 still serves,
// the ones drivers fall back to when the v1 pipes are missing (azuredisk:
// disk v1beta2, volume v1beta2, filesystem v1beta1; gcp-pd: disk v1beta2,
// volume v1beta1, filesystem v1beta1; csi-driver-smb: filesystem v1beta1,
// smb v1beta1). Each volume version stages, publishes and unstages its own
// RAW disk (11 to 14, see testdata/sim.json) with the disk and filesystem
// versions of its era, so the tests leave the shared daemon as they found
// it. Before v1beta3 disks are named by decimal strings, which the daemon
// parses; a string that is not a disk number is InvalidArgument.

// Disk IDs of the older versions that name no disk.
const (
	notANumber = "disk-1"
	// tooLarge would wrap onto disk 1 if truncated to 32 bits, as upstream
	// did; it is refused instead.
	tooLarge = "4294967297"
)

func diskID(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

// wantEmptyError checks an old response's error string, which upstream
// never filled.
func wantEmptyError(t *testing.T, what, got string) {
	t.Helper()
	if got != "" {
		t.Errorf("%s: error field %q, want empty (failures are gRPC errors)", what, got)
	}
}

// ---------------------------------------------------------------- disk

func TestDiskV1alpha1(t *testing.T) {
	c := diskv1alpha1.NewDiskClient(conn(t, "disk/v1alpha1"))
	x := ctx(t)

	locs := must[*diskv1alpha1.ListDiskLocationsResponse](t, "ListDiskLocations")(c.ListDiskLocations(x, &diskv1alpha1.ListDiskLocationsRequest{}))
	// adapter:bus:target:lun; Bus is "" for SCSI disks, as upstream gives.
	for id, want := range map[string]string{"0": "0::0:0", "1": "1::0:0", "9": "2::0:5", "11": "3::0:1"} {
		l := locs.DiskLocations[id]
		if l == nil {
			t.Errorf("ListDiskLocations: no disk %q in %v", id, locs.DiskLocations)
			continue
		}
		if got := strings.Join([]string{l.Adapter, l.Bus, l.Target, l.LUNID}, ":"); got != want {
			t.Errorf("ListDiskLocations[%q] = %s, want %s", id, got, want)
		}
	}
	must[*diskv1alpha1.RescanResponse](t, "Rescan")(c.Rescan(x, &diskv1alpha1.RescanRequest{}))

	// GetDiskNumberByName looks the name up as a page 0x83 identifier.
	n := must[*diskv1alpha1.GetDiskNumberByNameResponse](t, "GetDiskNumberByName")(c.GetDiskNumberByName(x, &diskv1alpha1.GetDiskNumberByNameRequest{DiskName: "6002248000000000000000000000000b"}))
	if n.DiskNumber != "11" {
		t.Errorf("GetDiskNumberByName(page83 of disk 11) = %q, want \"11\"", n.DiskNumber)
	}
	_, err := c.GetDiskNumberByName(x, &diskv1alpha1.GetDiskNumberByNameRequest{DiskName: "60022480000000000000000000000099"})
	wantCode(t, "GetDiskNumberByName unknown", err, codes.NotFound)
	_, err = c.GetDiskNumberByName(x, &diskv1alpha1.GetDiskNumberByNameRequest{DiskName: "WC-OLD-11"})
	wantCode(t, "GetDiskNumberByName serial number", err, codes.NotFound)
	_, err = c.GetDiskNumberByName(x, &diskv1alpha1.GetDiskNumberByNameRequest{})
	wantCode(t, "GetDiskNumberByName empty", err, codes.InvalidArgument)

	// PartitionDisk succeeds in TestStageFlowV1alpha1; here its failures.
	for id, want := range map[string]codes.Code{
		notANumber:     codes.InvalidArgument,
		"":             codes.InvalidArgument,
		"-1":           codes.InvalidArgument,
		tooLarge:       codes.InvalidArgument,
		diskID(noDisk): codes.NotFound,
	} {
		_, err := c.PartitionDisk(x, &diskv1alpha1.PartitionDiskRequest{DiskID: id})
		wantCode(t, "PartitionDisk "+strconv.Quote(id), err, want)
	}
	// An offline disk that has a data partition needs nothing (upstream
	// reads the layout, which is readable offline).
	must[*diskv1alpha1.PartitionDiskResponse](t, "PartitionDisk offline, partitioned disk")(c.PartitionDisk(x, &diskv1alpha1.PartitionDiskRequest{DiskID: diskID(offPartDisk)}))
}

func TestDiskV1beta1(t *testing.T) {
	c := diskv1beta1.NewDiskClient(conn(t, "disk/v1beta1"))
	x := ctx(t)

	locs := must[*diskv1beta1.ListDiskLocationsResponse](t, "ListDiskLocations")(c.ListDiskLocations(x, &diskv1beta1.ListDiskLocationsRequest{}))
	if l := locs.DiskLocations["12"]; l == nil || l.Adapter != "3" || l.LUNID != "2" {
		t.Errorf("ListDiskLocations[\"12\"] = %v, want 3:0:0:2", l)
	}
	must[*diskv1beta1.RescanResponse](t, "Rescan")(c.Rescan(x, &diskv1beta1.RescanRequest{}))

	// Identifiers under upstream's keys, page83 and serialNumber, always
	// both (the system disk's too).
	ids := must[*diskv1beta1.ListDiskIDsResponse](t, "ListDiskIDs")(c.ListDiskIDs(x, &diskv1beta1.ListDiskIDsRequest{}))
	for id, want := range map[string]map[string]string{
		"0":  {"page83": "60022480000000000000000000000000", "serialNumber": "SIM-SYSTEM-0000"},
		"1":  {"page83": "60022480000000000000000000000001", "serialNumber": "SIM-DATA-0001"},
		"12": {"page83": "6002248000000000000000000000000c", "serialNumber": "WC-OLD-12"},
	} {
		got := ids.DiskIDs[id]
		if got == nil || len(got.Identifiers) != 2 || got.Identifiers["page83"] != want["page83"] || got.Identifiers["serialNumber"] != want["serialNumber"] {
			t.Errorf("ListDiskIDs[%q] = %v, want identifiers %v", id, got, want)
		}
	}

	for id, size := range map[string]int64{"0": 128 << 30, "12": 1 << 30, "009": 1 << 30} {
		st := must[*diskv1beta1.DiskStatsResponse](t, "DiskStats "+id)(c.DiskStats(x, &diskv1beta1.DiskStatsRequest{DiskID: id}))
		if st.DiskSize != size {
			t.Errorf("DiskStats(%q) = %d, want %d", id, st.DiskSize, size)
		}
	}
	_, err := c.DiskStats(x, &diskv1beta1.DiskStatsRequest{DiskID: notANumber})
	wantCode(t, "DiskStats not a number", err, codes.InvalidArgument)
	_, err = c.DiskStats(x, &diskv1beta1.DiskStatsRequest{DiskID: tooLarge})
	wantCode(t, "DiskStats beyond uint32", err, codes.InvalidArgument)
	_, err = c.DiskStats(x, &diskv1beta1.DiskStatsRequest{DiskID: diskID(noDisk)})
	wantCode(t, "DiskStats missing disk", err, codes.NotFound)
	_, err = c.PartitionDisk(x, &diskv1beta1.PartitionDiskRequest{DiskID: notANumber})
	wantCode(t, "PartitionDisk not a number", err, codes.InvalidArgument)
	_, err = c.PartitionDisk(x, &diskv1beta1.PartitionDiskRequest{DiskID: diskID(noDisk)})
	wantCode(t, "PartitionDisk missing disk", err, codes.NotFound)
}

func TestDiskV1beta2(t *testing.T) {
	c := diskv1beta2.NewDiskClient(conn(t, "disk/v1beta2"))
	x := ctx(t)

	locs := must[*diskv1beta2.ListDiskLocationsResponse](t, "ListDiskLocations")(c.ListDiskLocations(x, &diskv1beta2.ListDiskLocationsRequest{}))
	if l := locs.DiskLocations["13"]; l == nil || l.LUNID != "3" {
		t.Errorf("ListDiskLocations[\"13\"] = %v, want 3:0:0:3", l)
	}
	must[*diskv1beta2.RescanResponse](t, "Rescan")(c.Rescan(x, &diskv1beta2.RescanRequest{}))
	ids := must[*diskv1beta2.ListDiskIDsResponse](t, "ListDiskIDs")(c.ListDiskIDs(x, &diskv1beta2.ListDiskIDsRequest{}))
	if d := ids.DiskIDs["13"]; d == nil || d.Identifiers["serialNumber"] != "WC-OLD-13" {
		t.Errorf("ListDiskIDs[\"13\"] = %v", d)
	}
	if st := must[*diskv1beta2.DiskStatsResponse](t, "DiskStats")(c.DiskStats(x, &diskv1beta2.DiskStatsRequest{DiskID: "13"})); st.DiskSize != 1<<30 {
		t.Errorf("DiskStats(13) = %d", st.DiskSize)
	}
	if st := must[*diskv1beta2.GetAttachStateResponse](t, "GetAttachState 9")(c.GetAttachState(x, &diskv1beta2.GetAttachStateRequest{DiskID: diskID(offDisk)})); st.IsOnline {
		t.Errorf("GetAttachState(%d): configured offline, reported online", offDisk)
	}
	// Already online: a no-op that succeeds.
	must[*diskv1beta2.SetAttachStateResponse](t, "SetAttachState 0 online")(c.SetAttachState(x, &diskv1beta2.SetAttachStateRequest{DiskID: "0", IsOnline: true}))

	wantCodes(t, []codeCase{
		{"SetAttachState not a number", errOf(c.SetAttachState(x, &diskv1beta2.SetAttachStateRequest{DiskID: notANumber, IsOnline: true})), codes.InvalidArgument},
		{"SetAttachState missing disk", errOf(c.SetAttachState(x, &diskv1beta2.SetAttachStateRequest{DiskID: diskID(noDisk), IsOnline: true})), codes.NotFound},
		{"SetAttachState system disk offline", errOf(c.SetAttachState(x, &diskv1beta2.SetAttachStateRequest{DiskID: "0"})), codes.FailedPrecondition},
		{"GetAttachState empty ID", errOf(c.GetAttachState(x, &diskv1beta2.GetAttachStateRequest{})), codes.InvalidArgument},
		{"GetAttachState beyond uint32", errOf(c.GetAttachState(x, &diskv1beta2.GetAttachStateRequest{DiskID: tooLarge})), codes.InvalidArgument},
		{"GetAttachState missing disk", errOf(c.GetAttachState(x, &diskv1beta2.GetAttachStateRequest{DiskID: diskID(noDisk)})), codes.NotFound},
		{"DiskStats not a number", errOf(c.DiskStats(x, &diskv1beta2.DiskStatsRequest{DiskID: "0x1"})), codes.InvalidArgument},
		{"PartitionDisk missing disk", errOf(c.PartitionDisk(x, &diskv1beta2.PartitionDiskRequest{DiskID: diskID(noDisk)})), codes.NotFound},
	})
}

func TestDiskV1beta3(t *testing.T) {
	c := diskv1beta3.NewDiskClient(conn(t, "disk/v1beta3"))
	x := ctx(t)

	locs := must[*diskv1beta3.ListDiskLocationsResponse](t, "ListDiskLocations")(c.ListDiskLocations(x, &diskv1beta3.ListDiskLocationsRequest{}))
	if l := locs.DiskLocations[14]; l == nil || l.LUNID != "4" {
		t.Errorf("ListDiskLocations[14] = %v, want 3:0:0:4", l)
	}
	must[*diskv1beta3.RescanResponse](t, "Rescan")(c.Rescan(x, &diskv1beta3.RescanRequest{}))
	ids := must[*diskv1beta3.ListDiskIDsResponse](t, "ListDiskIDs")(c.ListDiskIDs(x, &diskv1beta3.ListDiskIDsRequest{}))
	if d := ids.DiskIDs[14]; d == nil || d.Page83 != "6002248000000000000000000000000e" || d.SerialNumber != "WC-OLD-14" {
		t.Errorf("ListDiskIDs[14] = %v", d)
	}
	if st := must[*diskv1beta3.GetDiskStatsResponse](t, "GetDiskStats")(c.GetDiskStats(x, &diskv1beta3.GetDiskStatsRequest{DiskNumber: 14})); st.TotalBytes != 1<<30 {
		t.Errorf("GetDiskStats(14) = %d", st.TotalBytes)
	}
	_, err := c.GetDiskStats(x, &diskv1beta3.GetDiskStatsRequest{DiskNumber: noDisk})
	wantCode(t, "GetDiskStats missing disk", err, codes.NotFound)
	_, err = c.GetDiskState(x, &diskv1beta3.GetDiskStateRequest{DiskNumber: noDisk})
	wantCode(t, "GetDiskState missing disk", err, codes.NotFound)
	_, err = c.SetDiskState(x, &diskv1beta3.SetDiskStateRequest{DiskNumber: noDisk, IsOnline: true})
	wantCode(t, "SetDiskState missing disk", err, codes.NotFound)
	must[*diskv1beta3.PartitionDiskResponse](t, "PartitionDisk offline, partitioned disk")(c.PartitionDisk(x, &diskv1beta3.PartitionDiskRequest{DiskNumber: offPartDisk}))
	if must[*diskv1beta3.GetDiskStateResponse](t, "GetDiskState 10")(c.GetDiskState(x, &diskv1beta3.GetDiskStateRequest{DiskNumber: offPartDisk})).IsOnline {
		t.Errorf("PartitionDisk brought the offline, partitioned disk %d online", offPartDisk)
	}
}

// TestOlderDiskIDsNameV1Disks: a disk ID of the older versions and the v1
// disk number it spells name the same disk.
func TestOlderDiskIDsNameV1Disks(t *testing.T) {
	v1 := diskv1.NewDiskClient(conn(t, "disk/v1"))
	b2 := diskv1beta2.NewDiskClient(conn(t, "disk/v1beta2"))
	x := ctx(t)
	for _, n := range []uint32{0, 1, offDisk, 11} {
		a := must[*diskv1.GetDiskStateResponse](t, "v1 GetDiskState")(v1.GetDiskState(x, &diskv1.GetDiskStateRequest{DiskNumber: n}))
		b := must[*diskv1beta2.GetAttachStateResponse](t, "v1beta2 GetAttachState")(b2.GetAttachState(x, &diskv1beta2.GetAttachStateRequest{DiskID: diskID(n)}))
		if a.IsOnline != b.IsOnline {
			t.Errorf("disk %d: v1 online %v, v1beta2 online %v", n, a.IsOnline, b.IsOnline)
		}
	}
}
