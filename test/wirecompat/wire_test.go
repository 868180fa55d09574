package wirecompat

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	diskv1 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1"
	iscsiv1alpha2 "github.com/kubernetes-csi/csi-proxy/client/api/iscsi/v1alpha2"
	systemv1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/system/v1alpha1"
	volumev1 "github.com/kubernetes-csi/csi-proxy/client/api/volume/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// These tests drive the shared daemon (see daemon_test.go; testdata/sim.json)
// with upstream csi-proxy v1.3.0's generated clients only. The simulated
// host they expect:
//
//	disk 0  system disk, 128 GiB, location 0:0:0:0, EFI + MSR + C:
//	disk 1  RAW, 1 GiB, 1:0:0:0, page83 …01, serial SIM-DATA-0001 (volume v1 flow)
//	disk 2  RAW, 2 GiB, 1:0:0:1, page83 …02, serial SIM-DATA-0002 (volume v2alpha1 flow)
//	disk 9  RAW, 1 GiB, offline, 2:0:0:5, serial WC-OFFLINE-9 (stays so)
//	disk 10 partitioned (one RAW data volume), 1 GiB, offline, 2:0:0:6,
//	        serial WC-OFFLINE-PART-10 (PartitionDisk leaves it so)
//	disk 15 RAW, 1 GiB, offline, 2:0:0:7, serial WC-OFFLINE-RAW-15
//	        (TestDiskV1 partitions it, which brings it online)
//	disks 11-14  RAW, 1 GiB, 3:0:0:1-4, page83 …0b-…0e, serial WC-OLD-<n>
//	        (the flows of the older versions, older_*_test.go)
//	\\fileserver\share, user CONTOSO\csi, directory pvc-1
//	portal 10.0.0.10:3260: iqn.2003-01.org.example:chap (CHAP + mutual, 1 LUN)
//	                      iqn.2003-01.org.example:open (no auth, 1 LUN)
//	default services; MSiSCSI (manual, stopped) is on the allow-list
const (
	kubelet = `C:\var\lib\kubelet`
	outside = `C:\var\lib\kubelet-x\a` // a prefix of kubelet, but not inside it
	noDisk  = 99
	offDisk = 9
	// offPartDisk is offline with a data partition; offRawDisk is offline
	// and RAW until TestDiskV1 partitions it.
	offPartDisk = 10
	offRawDisk  = 15
	biosSN      = "WC-BIOS-0001"
	share       = `\\fileserver\share`
	smbUser     = `CONTOSO\csi`
	smbPass     = "Secr3t!pw"
	portalIP    = "10.0.0.10"
	chapIQN     = "iqn.2003-01.org.example:chap"
	openIQN     = "iqn.2003-01.org.example:open"
	chapUser    = "initiator"
	chapPass    = "0123456789ab"
	mutual      = "ba9876543210"
	// unknownVolume is well-formed but names no volume.
	unknownVolume = `\\?\Volume{00000000-0000-4000-8000-000000000000}\`
)

var volumeIDPattern = regexp.MustCompile(`^\\\\\?\\Volume\{[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\}\\$`)

// failureCases counts the failure paths asserted.
var failureCases atomic.Int64

// wantCode asserts err's gRPC status code. A want of codes.OK means success.
func wantCode(t *testing.T, what string, err error, want codes.Code) {
	t.Helper()
	if want != codes.OK {
		failureCases.Add(1)
	}
	got := status.Code(err)
	if got == codes.Unknown && err != nil {
		t.Errorf("%s: code Unknown (%v); upstream-style untyped errors must not reach the wire", what, err)
		return
	}
	if got != want {
		t.Errorf("%s: got %v (%v), want %v", what, got, err, want)
	}
}

// codeCase is one call and the gRPC code it must fail with. The call is
// made where the case is written (errOf keeps only its error), so a table
// of cases runs its calls in order, then checks them.
type codeCase struct {
	what string
	err  error
	want codes.Code
}

// wantCodes asserts every case's code with wantCode.
func wantCodes(t *testing.T, cases []codeCase) {
	t.Helper()
	for _, c := range cases {
		wantCode(t, c.what, c.err, c.want)
	}
}

// errOf is a call's error without its response.
func errOf[T any](_ T, err error) error { return err }

// must fails the test on an error and returns the response.
func must[T any](t *testing.T, what string) func(T, error) T {
	return func(resp T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v (code %v)", what, err, status.Code(err))
		}
		return resp
	}
}

func portal() *iscsiv1alpha2.TargetPortal {
	return &iscsiv1alpha2.TargetPortal{TargetAddress: portalIP, TargetPort: 3260}
}

// ---------------------------------------------------------------- disk v1

func TestDiskV1(t *testing.T) {
	c := diskv1.NewDiskClient(conn(t, "disk/v1"))
	x := ctx(t)

	locs := must[*diskv1.ListDiskLocationsResponse](t, "ListDiskLocations")(c.ListDiskLocations(x, &diskv1.ListDiskLocationsRequest{}))
	// adapter:bus:target:lun, with Bus "" as upstream reports it for SCSI
	// disks (its MSFT_Disk.Location parse drops the "Port N" part).
	wantLocs := map[uint32]string{0: "0::0:0", 1: "1::0:0", 2: "1::0:1", offDisk: "2::0:5", 11: "3::0:1", 14: "3::0:4"}
	for n, want := range wantLocs {
		l := locs.DiskLocations[n]
		if l == nil {
			t.Errorf("ListDiskLocations: no disk %d in %v", n, locs.DiskLocations)
			continue
		}
		if got := strings.Join([]string{l.Adapter, l.Bus, l.Target, l.LUNID}, ":"); got != want {
			t.Errorf("ListDiskLocations[%d] = %s, want %s", n, got, want)
		}
	}

	ids := must[*diskv1.ListDiskIDsResponse](t, "ListDiskIDs")(c.ListDiskIDs(x, &diskv1.ListDiskIDsRequest{}))
	wantIDs := map[uint32][2]string{
		0:           {"60022480000000000000000000000000", "SIM-SYSTEM-0000"},
		1:           {"60022480000000000000000000000001", "SIM-DATA-0001"},
		2:           {"60022480000000000000000000000002", "SIM-DATA-0002"},
		offDisk:     {"6002248000000000000000000000000a", "WC-OFFLINE-9"},
		offPartDisk: {"60022480000000000000000000000010", "WC-OFFLINE-PART-10"},
		offRawDisk:  {"60022480000000000000000000000015", "WC-OFFLINE-RAW-15"},
		11:          {"6002248000000000000000000000000b", "WC-OLD-11"},
		12:          {"6002248000000000000000000000000c", "WC-OLD-12"},
		13:          {"6002248000000000000000000000000d", "WC-OLD-13"},
		14:          {"6002248000000000000000000000000e", "WC-OLD-14"},
	}
	if len(ids.DiskIDs) != len(wantIDs) {
		t.Errorf("ListDiskIDs: %d disks, want %d: %v", len(ids.DiskIDs), len(wantIDs), ids.DiskIDs)
	}
	for n, want := range wantIDs {
		got := ids.DiskIDs[n]
		if got == nil || got.Page83 != want[0] || got.SerialNumber != want[1] {
			t.Errorf("ListDiskIDs[%d] = %v, want page83 %s serial %s", n, got, want[0], want[1])
		}
	}

	for n, size := range map[uint32]int64{0: 128 << 30, 1: 1 << 30, 2: 2 << 30, offDisk: 1 << 30} {
		st := must[*diskv1.GetDiskStatsResponse](t, "GetDiskStats")(c.GetDiskStats(x, &diskv1.GetDiskStatsRequest{DiskNumber: n}))
		if st.TotalBytes != size {
			t.Errorf("GetDiskStats(%d) = %d, want %d", n, st.TotalBytes, size)
		}
	}

	must[*diskv1.RescanResponse](t, "Rescan")(c.Rescan(x, &diskv1.RescanRequest{}))

	st := must[*diskv1.GetDiskStateResponse](t, "GetDiskState 0")(c.GetDiskState(x, &diskv1.GetDiskStateRequest{DiskNumber: 0}))
	if !st.IsOnline {
		t.Error("GetDiskState(0): system disk offline")
	}
	st = must[*diskv1.GetDiskStateResponse](t, "GetDiskState 9")(c.GetDiskState(x, &diskv1.GetDiskStateRequest{DiskNumber: offDisk}))
	if st.IsOnline {
		t.Errorf("GetDiskState(%d): configured offline, reported online", offDisk)
	}
	// Already online: a no-op that succeeds.
	must[*diskv1.SetDiskStateResponse](t, "SetDiskState 0 online")(c.SetDiskState(x, &diskv1.SetDiskStateRequest{DiskNumber: 0, IsOnline: true}))

	// Failure paths.
	_, err := c.GetDiskStats(x, &diskv1.GetDiskStatsRequest{DiskNumber: noDisk})
	wantCode(t, "GetDiskStats missing disk", err, codes.NotFound)
	_, err = c.GetDiskState(x, &diskv1.GetDiskStateRequest{DiskNumber: noDisk})
	wantCode(t, "GetDiskState missing disk", err, codes.NotFound)
	_, err = c.SetDiskState(x, &diskv1.SetDiskStateRequest{DiskNumber: noDisk, IsOnline: true})
	wantCode(t, "SetDiskState missing disk", err, codes.NotFound)
	_, err = c.PartitionDisk(x, &diskv1.PartitionDiskRequest{DiskNumber: noDisk})
	wantCode(t, "PartitionDisk missing disk", err, codes.NotFound)
	// gcp-pd, aws-ebs and vsphere call PartitionDisk before
	// SetDiskState(online), and NodeUnstage takes the disk offline.
	// Upstream reads the layout (readable offline): a disk with a data
	// partition needs nothing and stays offline.
	must[*diskv1.PartitionDiskResponse](t, "PartitionDisk offline, partitioned disk")(c.PartitionDisk(x, &diskv1.PartitionDiskRequest{DiskNumber: offPartDisk}))
	if must[*diskv1.GetDiskStateResponse](t, "GetDiskState 10")(c.GetDiskState(x, &diskv1.GetDiskStateRequest{DiskNumber: offPartDisk})).IsOnline {
		t.Errorf("PartitionDisk brought the offline, partitioned disk %d online", offPartDisk)
	}
	// A RAW offline disk is brought online to be initialised, and gets its
	// data partition.
	must[*diskv1.PartitionDiskResponse](t, "PartitionDisk offline, RAW disk")(c.PartitionDisk(x, &diskv1.PartitionDiskRequest{DiskNumber: offRawDisk}))
	if !must[*diskv1.GetDiskStateResponse](t, "GetDiskState 15")(c.GetDiskState(x, &diskv1.GetDiskStateRequest{DiskNumber: offRawDisk})).IsOnline {
		t.Errorf("disk %d is offline after PartitionDisk of the offline RAW disk", offRawDisk)
	}
	vc := volumev1.NewVolumeClient(conn(t, "volume/v1"))
	if v := must[*volumev1.ListVolumesOnDiskResponse](t, "ListVolumesOnDisk 15")(vc.ListVolumesOnDisk(x, &volumev1.ListVolumesOnDiskRequest{DiskNumber: offRawDisk})); len(v.VolumeIds) != 1 {
		t.Errorf("disk %d has volumes %q after PartitionDisk, want one", offRawDisk, v.VolumeIds)
	}
	_, err = c.SetDiskState(x, &diskv1.SetDiskStateRequest{DiskNumber: 0, IsOnline: false})
	wantCode(t, "SetDiskState system disk offline", err, codes.FailedPrecondition)
}

// ---------------------------------------------------------------- system v1alpha1

func TestSystemV1alpha1(t *testing.T) {
	sc := systemv1alpha1.NewSystemClient(conn(t, "system/v1alpha1"))
	x := ctx(t)

	if sn := must[*systemv1alpha1.GetBIOSSerialNumberResponse](t, "GetBIOSSerialNumber")(sc.GetBIOSSerialNumber(x, &systemv1alpha1.GetBIOSSerialNumberRequest{})); sn.SerialNumber != biosSN {
		t.Errorf("GetBIOSSerialNumber = %q, want %q", sn.SerialNumber, biosSN)
	}
	get := func(name string) *systemv1alpha1.GetServiceResponse {
		t.Helper()
		return must[*systemv1alpha1.GetServiceResponse](t, "GetService "+name)(sc.GetService(x, &systemv1alpha1.GetServiceRequest{Name: name}))
	}
	// The wire enums: MANUAL = 3, AUTOMATIC = 2, DISABLED = 4; STOPPED = 1,
	// RUNNING = 4.
	for name, want := range map[string]*systemv1alpha1.GetServiceResponse{
		allowedService:   {DisplayName: "Microsoft iSCSI Initiator Service", StartType: systemv1alpha1.StartType_MANUAL, Status: systemv1alpha1.ServiceStatus_STOPPED},
		"LanmanServer":   {DisplayName: "Server", StartType: systemv1alpha1.StartType_AUTOMATIC, Status: systemv1alpha1.ServiceStatus_RUNNING},
		"remoteregistry": {DisplayName: "Remote Registry", StartType: systemv1alpha1.StartType_DISABLED, Status: systemv1alpha1.ServiceStatus_STOPPED},
	} {
		got := get(name)
		if got.DisplayName != want.DisplayName || got.StartType != want.StartType || got.Status != want.Status {
			t.Errorf("GetService(%s) = {%q %v %v}, want {%q %v %v}", name, got.DisplayName, got.StartType, got.Status, want.DisplayName, want.StartType, want.Status)
		}
	}

	must[*systemv1alpha1.StartServiceResponse](t, "StartService")(sc.StartService(x, &systemv1alpha1.StartServiceRequest{Name: allowedService}))
	if s := get(allowedService); s.Status != systemv1alpha1.ServiceStatus_RUNNING {
		t.Errorf("after StartService: status %v", s.Status)
	}
	must[*systemv1alpha1.StartServiceResponse](t, "StartService again")(sc.StartService(x, &systemv1alpha1.StartServiceRequest{Name: allowedService}))
	// The allow-list compares without case, as Windows service names do.
	must[*systemv1alpha1.StopServiceResponse](t, "StopService")(sc.StopService(x, &systemv1alpha1.StopServiceRequest{Name: strings.ToLower(allowedService)}))
	if s := get(allowedService); s.Status != systemv1alpha1.ServiceStatus_STOPPED {
		t.Errorf("after StopService: status %v", s.Status)
	}
	must[*systemv1alpha1.StopServiceResponse](t, "StopService again")(sc.StopService(x, &systemv1alpha1.StopServiceRequest{Name: allowedService, Force: true}))

	wantCodes(t, []codeCase{
		{"StartService not allow-listed", errOf(sc.StartService(x, &systemv1alpha1.StartServiceRequest{Name: "Netlogon"})), codes.PermissionDenied},
		{"StopService not allow-listed", errOf(sc.StopService(x, &systemv1alpha1.StopServiceRequest{Name: "LanmanServer", Force: true})), codes.PermissionDenied},
		{"StartService unknown and not allow-listed", errOf(sc.StartService(x, &systemv1alpha1.StartServiceRequest{Name: "nosuchservice"})), codes.PermissionDenied},
		{"StartService empty name", errOf(sc.StartService(x, &systemv1alpha1.StartServiceRequest{})), codes.InvalidArgument},
		{"GetService unknown", errOf(sc.GetService(x, &systemv1alpha1.GetServiceRequest{Name: "nosuchservice"})), codes.NotFound},
		{"GetService empty name", errOf(sc.GetService(x, &systemv1alpha1.GetServiceRequest{})), codes.InvalidArgument},
		{"GetService name with a backslash", errOf(sc.GetService(x, &systemv1alpha1.GetServiceRequest{Name: `a\b`})), codes.InvalidArgument},
	})
	// Not allow-listed means not touched.
	if s := get("LanmanServer"); s.Status != systemv1alpha1.ServiceStatus_RUNNING {
		t.Errorf("LanmanServer status %v after a refused StopService", s.Status)
	}
}

// ---------------------------------------------------------------- routing

// TestUnservedMethods checks that a socket answers only its own service:
// a method of another group-version, or one its version does not have (an
// older or newer name of an RPC), is Unimplemented, as grpc-go answers on
// upstream's pipes.
func TestUnservedMethods(t *testing.T) {
	x := ctx(t)
	for _, c := range []struct {
		socket, method string
	}{
		{"filesystem/v1", "/v1.Disk/ListDiskIDs"},
		{"disk/v1", "/v1.Filesystem/PathExists"},
		{"disk/v1", "/v1beta1.Disk/DiskStats"},
		{"volume/v1", "/v1.Volume/GetClosestVolumeIDFromTargetPath"},
		{"volume/v1", "/v2alpha1.Volume/ListVolumesOnDisk"},
		{"volume/v2alpha1", "/v1.Volume/ListVolumesOnDisk"},
		{"filesystem/v1", "/v1.Filesystem/RmdirContents"},
		{"filesystem/v2alpha1", "/v1alpha1.Filesystem/LinkPath"},
		{"smb/v1", "/v1alpha2.Iscsi/ListTargetPortals"},
		{"iscsi/v1alpha2", "/v1alpha1.Iscsi/ListTargetPortals"},
		{"system/v1alpha1", "/v1.Smb/RemoveSmbGlobalMapping"},
		{"disk/v1alpha1", "/v1alpha1.Disk/ListDiskIDs"},
		{"disk/v1beta1", "/v1beta1.Disk/SetAttachState"},
		{"disk/v1beta2", "/v1beta2.Disk/GetDiskStats"},
		{"disk/v1beta3", "/v1beta3.Disk/DiskStats"},
		{"disk/v1beta1", "/v1alpha1.Disk/GetDiskNumberByName"},
		{"volume/v1alpha1", "/v1alpha1.Volume/VolumeStats"},
		{"volume/v1beta1", "/v1beta1.Volume/WriteVolumeCache"},
		{"volume/v1beta2", "/v1beta2.Volume/UnmountVolume"},
		{"volume/v1beta3", "/v1beta3.Volume/DismountVolume"},
		{"filesystem/v1beta1", "/v1beta1.Filesystem/CreateSymlink"},
		{"filesystem/v1beta2", "/v1beta2.Filesystem/LinkPath"},
		{"filesystem/v1beta2", "/v1beta2.Filesystem/RmdirContents"},
		{"smb/v1beta1", "/v1.Smb/NewSmbGlobalMapping"},
		{"iscsi/v1alpha1", "/v1alpha1.Iscsi/SetMutualChapSecret"},
	} {
		// Any message will do: the server rejects the method before it
		// decodes the request.
		err := conn(t, c.socket).Invoke(x, c.method, &diskv1.ListDiskIDsRequest{}, &diskv1.ListDiskIDsResponse{})
		wantCode(t, c.method+" on the "+c.socket+" socket", err, codes.Unimplemented)
	}
}

// TestAPISelection starts a second daemon serving disk v1 only.
func TestAPISelection(t *testing.T) {
	buildDaemon(t)
	only := []groupVersion{{group: "disk", version: "v1"}}
	d, err := startDaemon(only, "--apis=disk-v1")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if want := "csi-proxy-disk-v1.sock"; len(names) != 1 || names[0] != want {
		t.Errorf("--apis=disk-v1: socket dir holds %v, want [%s]", names, want)
	}
	cc, err := dialSocket(filepath.Join(d.dir, "csi-proxy-disk-v1.sock"))
	if err != nil {
		t.Fatal(err)
	}
	// It is a separate simulated host with the default configuration.
	ids, err := diskv1.NewDiskClient(cc).ListDiskIDs(ctx(t), &diskv1.ListDiskIDsRequest{})
	cc.Close()
	if err != nil {
		t.Errorf("ListDiskIDs on the disk-only daemon: %v", err)
	} else if len(ids.DiskIDs) == 0 {
		t.Error("ListDiskIDs on the disk-only daemon: no disks")
	}
	if err := d.stop(); err != nil {
		t.Error(err)
	}
}
