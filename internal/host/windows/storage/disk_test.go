package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

var ctx = context.Background()

// Device interface paths as CM_Get_Device_Interface_List returns them.
const (
	ifHyperV0 = `\\?\scsi#disk&ven_msft&prod_virtual_disk#000000#{53f56307-b6bf-11d0-94f2-00a0c91efb8b}`
	ifHyperV1 = `\\?\scsi#disk&ven_msft&prod_virtual_disk#000001#{53f56307-b6bf-11d0-94f2-00a0c91efb8b}`
	ifNVMe    = `\\?\scsi#disk&ven_nvme&prod_amazon_elastic_b#4&1a2b3c4d&0&000000#{53f56307-b6bf-11d0-94f2-00a0c91efb8b}`
	ifGone    = `\\?\usbstor#disk&ven_generic#0001#{53f56307-b6bf-11d0-94f2-00a0c91efb8b}`
)

const (
	drive3 = `\\.\PhysicalDrive3`
	drive9 = `\\.\PhysicalDrive9`
)

func TestListDiskLocations(t *testing.T) {
	f := newFake(t)
	f.diskList = []string{ifHyperV0, ifHyperV1, ifNVMe, ifGone}
	f.on(ifHyperV0, ioctlStorageGetDeviceNumber, fixed(deviceNumberBuf(fileDeviceDisk, 0, 0))).
		on(ifHyperV0, ioctlSCSIGetAddress, fixed(scsiAddressBuf(0, 0, 0, 0)))
	f.on(ifHyperV1, ioctlStorageGetDeviceNumber, fixed(deviceNumberBuf(fileDeviceDisk, 2, 0))).
		on(ifHyperV1, ioctlSCSIGetAddress, fixed(scsiAddressBuf(1, 0, 3, 12)))
	// None of these answers the bus-type query (StorageDeviceProperty).
	// The Hyper-V disks take the SCSI path; ifNVMe's path names the vendor
	// "NVMe", so it is an NVMe disk all the same: its SCSI address is not
	// asked (it would read LUN 0) and MSFT_Disk.Location, which the fake
	// does not have for it, decides: omitted, as upstream omits disks
	// without a Location.
	f.on(ifNVMe, ioctlStorageGetDeviceNumber, fixed(deviceNumberBuf(fileDeviceDisk, 1, 0))).
		on(ifNVMe, ioctlSCSIGetAddress, fixed(scsiAddressBuf(0, 0, 0, 0)))
	// ifGone has no device: it disappeared after enumeration.

	got, err := f.backend().Disk().ListDiskLocations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint32]disk.DiskLocation{
		0: {Adapter: "0", Bus: "", Target: "0", LUNID: "0"},
		2: {Adapter: "1", Bus: "", Target: "3", LUNID: "12"},
	}
	if !maps.Equal(got, want) {
		t.Errorf("ListDiskLocations = %+v, want %+v", got, want)
	}
	f.expect(
		"diskInterfaces",
		"open "+ifHyperV0+" query",
		"ioctl "+ifHyperV0+" IOCTL_STORAGE_GET_DEVICE_NUMBER out=12",
		"ioctl "+ifHyperV0+" IOCTL_STORAGE_QUERY_PROPERTY(0) out=4096",
		"ioctl "+ifHyperV0+" IOCTL_SCSI_GET_ADDRESS out=8",
		"close "+ifHyperV0,
		"open "+ifHyperV1+" query",
		"ioctl "+ifHyperV1+" IOCTL_STORAGE_GET_DEVICE_NUMBER out=12",
		"ioctl "+ifHyperV1+" IOCTL_STORAGE_QUERY_PROPERTY(0) out=4096",
		"ioctl "+ifHyperV1+" IOCTL_SCSI_GET_ADDRESS out=8",
		"close "+ifHyperV1,
		"open "+ifNVMe+" query",
		"ioctl "+ifNVMe+" IOCTL_STORAGE_GET_DEVICE_NUMBER out=12",
		"ioctl "+ifNVMe+" IOCTL_STORAGE_QUERY_PROPERTY(0) out=4096",
		"close "+ifNVMe,
		"open "+ifGone+" query",
		"wmi query SELECT Number, Location FROM MSFT_Disk",
	)
}

// Location strings as MSFT_Disk reports them (fact sheet §1.2; comments
// in kubernetes-csi/csi-proxy pkg/os/disk/api.go and
// kubernetes-sigs/azuredisk-csi-driver pkg/os/disk/disk.go).
const (
	locationNVMe = "Integrated : Bus 2 : Device 0 : Function 0 : Adapter 0"
	locationSCSI = "PCI Slot 3 : Adapter 0 : Port 0 : Target 1 : LUN 0"
)

// TestListDiskLocationsNVMe: on NVMe disks IOCTL_SCSI_GET_ADDRESS reads
// LUN 0 (azuredisk's own pkg/os/disk says so for "Virtual_Disk NVME
// Premium"), where upstream's parse of MSFT_Disk.Location gives Adapter
// "0", Bus X and empty Target and LUNID. azuredisk's FindDiskByLun("0")
// must not pick an NVMe disk (or the OS disk) by mistake, so NVMe disks
// (STORAGE_DEVICE_DESCRIPTOR.BusType 17) are answered from Location with
// upstream's rule, and SCSI disks keep the IOCTL.
func TestListDiskLocationsNVMe(t *testing.T) {
	f := newFake(t)
	f.diskList = []string{ifHyperV1, ifNVMe}
	f.on(ifHyperV1, ioctlStorageGetDeviceNumber, fixed(deviceNumberBuf(fileDeviceDisk, 2, 0))).
		on(ifHyperV1, ioctlSCSIGetAddress, fixed(scsiAddressBuf(1, 0, 3, 12))).
		on(ifHyperV1, ioctlStorageQueryProperty, truncating(deviceDescriptorBuf(busTypeSCSI, "Msft    ", "Virtual Disk    ", "1.0 ", "")))
	f.on(ifNVMe, ioctlStorageGetDeviceNumber, fixed(deviceNumberBuf(fileDeviceDisk, 1, 0))).
		on(ifNVMe, ioctlSCSIGetAddress, fixed(scsiAddressBuf(0, 0, 0, 0))).
		on(ifNVMe, ioctlStorageQueryProperty, truncating(deviceDescriptorBuf(busTypeNVMe, "", "Amazon Elastic Block Store", "1.0", "vol0123456789abcdef0")))
	f.wmiQuery = func(q string) ([]wmi.Props, error) {
		return []wmi.Props{
			{"Number": int64(1), "Location": locationNVMe},
			{"Number": int64(2), "Location": locationSCSI},
		}, nil
	}
	got, err := f.backend().Disk().ListDiskLocations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint32]disk.DiskLocation{
		1: {Adapter: "0", Bus: "2", Target: "", LUNID: ""},
		2: {Adapter: "1", Bus: "", Target: "3", LUNID: "12"},
	}
	if !maps.Equal(got, want) {
		t.Errorf("ListDiskLocations = %+v, want %+v", got, want)
	}
	for n, l := range got {
		if l.LUNID == "0" {
			t.Errorf("disk %d answers LUN 0: FindDiskByLun(\"0\") would pick it", n)
		}
	}
	if f.called("ioctl " + ifNVMe + " IOCTL_SCSI_GET_ADDRESS") {
		t.Errorf("the NVMe disk's SCSI address was used: %v", f.calls)
	}
	if n := f.count("wmi query SELECT Number, Location FROM MSFT_Disk"); n != 1 {
		t.Errorf("%d Location queries, want 1: %v", n, f.calls)
	}

	// Without NVMe disks no WMI is needed.
	f = newFake(t)
	f.diskList = []string{ifHyperV1}
	f.on(ifHyperV1, ioctlStorageGetDeviceNumber, fixed(deviceNumberBuf(fileDeviceDisk, 2, 0))).
		on(ifHyperV1, ioctlSCSIGetAddress, fixed(scsiAddressBuf(1, 0, 3, 12))).
		on(ifHyperV1, ioctlStorageQueryProperty, truncating(deviceDescriptorBuf(busTypeSCSI, "", "", "", "")))
	if _, err := f.backend().Disk().ListDiskLocations(ctx); err != nil || f.called("wmi") {
		t.Errorf("SCSI only: %v, calls %v", err, f.calls)
	}
}

// Constructed Azure NVMe device interface paths, in the layout of
// azuredisk-csi-driver's own examples (@ d983d613
// pkg/os/disk/disk_nvme_test.go: "…#disk&ven_nvme&prod_msft_nvme_accele#
// 6&ca10229&0&000001#{…}"), not captured from a node: namespaces 2 and 3,
// and namespace 1 with a SCSI bus type, which Windows' SCSI translation
// may report (unconfirmed), so only the path says NVMe.
const (
	ifAzureNVMe1 = `\\?\scsi#disk&ven_nvme&prod_msft_nvme_accele#6&ca10229&0&000001#{53f56307-b6bf-11d0-94f2-00a0c91efb8b}`
	ifAzureNVMe2 = `\\?\scsi#disk&ven_nvme&prod_msft_nvme_accele#6&ca10229&0&000002#{53f56307-b6bf-11d0-94f2-00a0c91efb8b}`
	ifAzureNVMe3 = `\\?\scsi#disk&ven_nvme&prod_msft_nvme_accele#6&ca10229&0&000003#{53f56307-b6bf-11d0-94f2-00a0c91efb8b}`
)

// TestListDiskLocationsAzureNVMe: Azure's NVMe disks keep upstream's wire
// location (Adapter "0", Bus X, no LUN, from MSFT_Disk.Location) and get,
// in the model only, the namespace ID and product their device path
// carries, which the mounter needs for Azure's LUN rule. A disk whose
// path says NVMe is treated as NVMe even when its bus type reads SCSI.
func TestListDiskLocationsAzureNVMe(t *testing.T) {
	f := newFake(t)
	f.diskList = []string{ifAzureNVMe1, ifAzureNVMe2, ifAzureNVMe3, ifHyperV1}
	for i, p := range []string{ifAzureNVMe1, ifAzureNVMe2, ifAzureNVMe3} {
		bus := uint32(busTypeNVMe)
		if p == ifAzureNVMe1 {
			bus = busTypeSCSI
		}
		f.on(p, ioctlStorageGetDeviceNumber, fixed(deviceNumberBuf(fileDeviceDisk, uint32(i), 0))).
			on(p, ioctlSCSIGetAddress, fixed(scsiAddressBuf(0, 0, 0, 0))).
			on(p, ioctlStorageQueryProperty, truncating(deviceDescriptorBuf(bus, "NVMe    ", "MSFT NVMe Accelerator v1.0", "1.0", "")))
	}
	f.on(ifHyperV1, ioctlStorageGetDeviceNumber, fixed(deviceNumberBuf(fileDeviceDisk, 4, 0))).
		on(ifHyperV1, ioctlSCSIGetAddress, fixed(scsiAddressBuf(1, 0, 0, 1))).
		on(ifHyperV1, ioctlStorageQueryProperty, truncating(deviceDescriptorBuf(busTypeSCSI, "Msft    ", "Virtual Disk    ", "1.0 ", "")))
	f.wmiQuery = func(string) ([]wmi.Props, error) {
		return []wmi.Props{
			{"Number": int64(0), "Location": "Integrated : Bus 1 : Device 0 : Function 0 : Adapter 0"},
			{"Number": int64(1), "Location": "Integrated : Bus 1 : Device 0 : Function 0 : Adapter 0"},
			{"Number": int64(2), "Location": "Integrated : Bus 1 : Device 0 : Function 0 : Adapter 0"},
			{"Number": int64(4), "Location": locationSCSI},
		}, nil
	}
	got, err := f.backend().Disk().ListDiskLocations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const prod = "msft_nvme_accele"
	want := map[uint32]disk.DiskLocation{
		0: {Adapter: "0", Bus: "1", NVMeNamespaceID: 1, Product: prod},
		1: {Adapter: "0", Bus: "1", NVMeNamespaceID: 2, Product: prod},
		2: {Adapter: "0", Bus: "1", NVMeNamespaceID: 3, Product: prod},
		4: {Adapter: "1", Target: "0", LUNID: "1"},
	}
	if !maps.Equal(got, want) {
		t.Errorf("ListDiskLocations = %+v, want %+v", got, want)
	}
}

// TestParseNVMeInstance: the namespace ID and product in both forms of
// an NVMe disk's ID (device interface path, PnP device ID), and the
// paths that carry none.
func TestParseNVMeInstance(t *testing.T) {
	for _, tc := range []struct {
		path    string
		nsid    uint32
		product string
		ok      bool
	}{
		{ifAzureNVMe2, 2, "msft_nvme_accele", true},
		{`\\?\scsi#disk&ven_nvme&prod_msft_nvme_accele#6&ca10229&0&000010#{53f56307-b6bf-11d0-94f2-00a0c91efb8b}`, 10, "msft_nvme_accele", true},
		{`SCSI\DISK&VEN_NVME&PROD_MSFT_NVME_ACCELE\6&CA10229&0&000003`, 3, "msft_nvme_accele", true},
		{ifNVMe, 0, "", false},    // instance ends in 000000: no namespace
		{ifHyperV1, 0, "", false}, // not NVMe
		{`\\?\scsi#disk&ven_nvme&prod_x#6&ca10229&1&000002#{53f56307-b6bf-11d0-94f2-00a0c91efb8b}`, 0, "", false}, // no "0" field before it
		{`\\?\scsi#disk&ven_nvme&prod_x#6&ca10229&0&00000a#{53f56307-b6bf-11d0-94f2-00a0c91efb8b}`, 0, "", false}, // not decimal
		{`\\?\scsi#disk&ven_nvme&prod_x`, 0, "", false},
		{"", 0, "", false},
	} {
		nsid, product, ok := parseNVMeInstance(tc.path)
		if nsid != tc.nsid || product != tc.product || ok != tc.ok {
			t.Errorf("parseNVMeInstance(%q) = %d, %q, %v; want %d, %q, %v", tc.path, nsid, product, ok, tc.nsid, tc.product, tc.ok)
		}
	}
}

// TestParseLocation checks upstream's rule on the Location forms seen:
// split on ":", at least five parts, only two-word parts count (Adapter,
// Target, LUN, Bus; Port, Device, Function and "PCI Slot 3" ignored).
func TestParseLocation(t *testing.T) {
	for _, c := range []struct {
		in   string
		want disk.DiskLocation
		ok   bool
	}{
		{locationSCSI, disk.DiskLocation{Adapter: "0", Target: "1", LUNID: "0"}, true},
		{"Integrated : Adapter 1 : Port 0 : Target 0 : LUN 63", disk.DiskLocation{Adapter: "1", Target: "0", LUNID: "63"}, true},
		{locationNVMe, disk.DiskLocation{Adapter: "0", Bus: "2"}, true},
		{"Integrated : Bus 0 : Device 65535 : Function 65535 : Adapter 3", disk.DiskLocation{Adapter: "3", Bus: "0"}, true},
		{"", disk.DiskLocation{}, false},
		{"PCIROOT(0)#PCI(1C00)#PCI(0000)#SCSI(P00T01L01)", disk.DiskLocation{}, false},
		{"Adapter 0 : Target 1 : LUN 0", disk.DiskLocation{}, false}, // fewer than five parts
		{"a : b : c : d : e", disk.DiskLocation{}, false},            // no two-word part
	} {
		got, ok := parseLocation(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("parseLocation(%q) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestListDiskLocationsFailures(t *testing.T) {
	f := newFake(t)
	f.diskList = []string{ifHyperV0}
	f.on(ifHyperV0, ioctlStorageGetDeviceNumber, fixed(deviceNumberBuf(fileDeviceDisk, 0, 0))).
		on(ifHyperV0, ioctlSCSIGetAddress, fails(errAccessDenied))
	if _, err := f.backend().Disk().ListDiskLocations(ctx); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("access denied: %v", err)
	}

	f = newFake(t)
	f.diskList = []string{ifHyperV0}
	f.device(ifHyperV0).openErr = syscall.Errno(errAccessDenied)
	if _, err := f.backend().Disk().ListDiskLocations(ctx); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("open denied: %v", err)
	}

	f = newFake(t)
	got, err := f.backend().Disk().ListDiskLocations(ctx)
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("no disks: %v, %v; want an empty map", got, err)
	}
}

func TestListDiskIDs(t *testing.T) {
	f := newFake(t)
	f.diskList = []string{ifHyperV0, ifNVMe}
	f.on(ifHyperV0, ioctlStorageGetDeviceNumber, fixed(deviceNumberBuf(fileDeviceDisk, 0, 0)))
	f.device(ifHyperV0).ioctls[ioctlStorageQueryProperty] = func(in []byte, outLen int) ([]byte, error) {
		switch le.Uint32(in) {
		case storageDeviceIDProperty:
			return truncating(deviceIDDescriptorBuf(naaVSphere, t10GCE))(in, outLen)
		case storageDeviceProperty:
			return truncating(deviceDescriptorBuf(1, "VMware  ", "Virtual disk    ", "2.0 ", "6000c29abcdef0123456789abcdef012"))(in, outLen)
		}
		return nil, syscall.Errno(errInvalidParameter)
	}
	// The NVMe disk has no identification page: its Page83 is empty
	// rather than failing the call.
	f.on(ifNVMe, ioctlStorageGetDeviceNumber, fixed(deviceNumberBuf(fileDeviceDisk, 1, 0)))
	f.device(ifNVMe).ioctls[ioctlStorageQueryProperty] = func(in []byte, outLen int) ([]byte, error) {
		if le.Uint32(in) == storageDeviceIDProperty {
			return nil, syscall.Errno(errNotSupported)
		}
		return truncating(deviceDescriptorBuf(17, "", "Amazon Elastic Block Store", "1.0", "vol0123456789abcdef0"))(in, outLen)
	}

	got, err := f.backend().Disk().ListDiskIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != (disk.DiskIDs{Page83: "6000c29abcdef0123456789abcdef012", SerialNumber: "6000c29abcdef0123456789abcdef012"}) {
		t.Errorf("disk 0 = %+v", got[0])
	}
	if got[1] != (disk.DiskIDs{Page83: "", SerialNumber: "vol0123456789abcdef0"}) {
		t.Errorf("disk 1 = %+v", got[1])
	}
	if n := f.count("IOCTL_STORAGE_QUERY_PROPERTY(2) out=4096"); n != 2 {
		t.Errorf("%d StorageDeviceIdProperty queries with 4 KiB, want 2", n)
	}
}

// TestListDiskIDsLargeDescriptor checks the size protocol: a descriptor
// bigger than 4 KiB is fetched again with the size its header reports.
func TestListDiskIDsLargeDescriptor(t *testing.T) {
	f := newFake(t)
	f.diskList = []string{ifHyperV0}
	ids := []storageID{}
	for range 300 { // 300 × 20 bytes of port-associated identifiers first
		ids = append(ids, portRelative)
	}
	ids = append(ids, naaVSphere)
	big := deviceIDDescriptorBuf(ids...)
	f.on(ifHyperV0, ioctlStorageGetDeviceNumber, fixed(deviceNumberBuf(fileDeviceDisk, 4, 0)))
	f.device(ifHyperV0).ioctls[ioctlStorageQueryProperty] = func(in []byte, outLen int) ([]byte, error) {
		if le.Uint32(in) == storageDeviceIDProperty {
			return truncating(big)(in, outLen)
		}
		return truncating(deviceDescriptorBuf(1, "", "", "", ""))(in, outLen)
	}
	got, err := f.backend().Disk().ListDiskIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got[4].Page83 != "6000c29abcdef0123456789abcdef012" {
		t.Errorf("Page83 = %q", got[4].Page83)
	}
	if !f.called("IOCTL_STORAGE_QUERY_PROPERTY(2) out=" + strconv.Itoa(len(big))) {
		t.Errorf("no retry with the descriptor's size %d: %v", len(big), f.calls)
	}
}

// TestListDiskIDsMalformedDescriptor: one disk whose device-ID
// descriptor is malformed (an identifier claiming more bytes than the
// descriptor holds) gets an empty page83 and a warning; the other disks
// are still listed (issue 11 item 8).
func TestListDiskIDsMalformedDescriptor(t *testing.T) {
	f := newFake(t)
	f.diskList = []string{ifHyperV0, ifHyperV1}
	bad := deviceIDDescriptorBuf(naaVSphere)
	bad = bad[:len(bad)-8] // the identifier runs past the end
	put32(bad, 4, uint32(len(bad)))
	f.on(ifHyperV0, ioctlStorageGetDeviceNumber, fixed(deviceNumberBuf(fileDeviceDisk, 0, 0)))
	f.device(ifHyperV0).ioctls[ioctlStorageQueryProperty] = func(in []byte, outLen int) ([]byte, error) {
		if le.Uint32(in) == storageDeviceIDProperty {
			return truncating(bad)(in, outLen)
		}
		return truncating(deviceDescriptorBuf(1, "", "", "", "serial-0"))(in, outLen)
	}
	f.on(ifHyperV1, ioctlStorageGetDeviceNumber, fixed(deviceNumberBuf(fileDeviceDisk, 1, 0)))
	f.device(ifHyperV1).ioctls[ioctlStorageQueryProperty] = func(in []byte, outLen int) ([]byte, error) {
		if le.Uint32(in) == storageDeviceIDProperty {
			return truncating(deviceIDDescriptorBuf(t10GCE))(in, outLen)
		}
		return truncating([]byte{1, 2, 3})(in, outLen) // a malformed device descriptor too
	}
	var warnings []string
	b, err := newBackend(f, Config{Warnf: func(format string, args ...any) {
		warnings = append(warnings, fmt.Sprintf(format, args...))
	}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Disk().ListDiskIDs(ctx)
	if err != nil {
		t.Fatalf("ListDiskIDs = %v, want the other disks listed", err)
	}
	if got[0] != (disk.DiskIDs{Page83: "", SerialNumber: "serial-0"}) {
		t.Errorf("disk 0 = %+v, want an empty page83 and its serial", got[0])
	}
	if got[1].Page83 == "" || got[1].SerialNumber != "" {
		t.Errorf("disk 1 = %+v, want its page83 and an empty serial", got[1])
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "disk 0") || !strings.Contains(warnings[1], "disk 1") {
		t.Errorf("warnings = %q, want one naming each disk", warnings)
	}
}

func TestListDiskIDsFailure(t *testing.T) {
	f := newFake(t)
	f.diskList = []string{ifHyperV0}
	f.on(ifHyperV0, ioctlStorageGetDeviceNumber, fixed(deviceNumberBuf(fileDeviceDisk, 0, 0))).
		on(ifHyperV0, ioctlStorageQueryProperty, fails(errNotReady))
	if _, err := f.backend().Disk().ListDiskIDs(ctx); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("ListDiskIDs = %v, want unavailable", err)
	}
}

func TestDiskSize(t *testing.T) {
	f := newFake(t)
	f.on(drive3, ioctlDiskGetLengthInfo, fixed(lengthInfoBuf(10<<30)))
	size, err := f.backend().Disk().DiskSize(ctx, 3)
	if err != nil || size != 10<<30 {
		t.Errorf("DiskSize = %d, %v", size, err)
	}
	f.expect("open "+drive3+" read", "ioctl "+drive3+" IOCTL_DISK_GET_LENGTH_INFO out=8", "close "+drive3)
}

func TestMissingDisk(t *testing.T) {
	f := newFake(t)
	d := f.backend().Disk()
	for name, call := range map[string]func() error{
		"DiskSize":      func() error { _, err := d.DiskSize(ctx, 9); return err },
		"IsDiskOnline":  func() error { _, err := d.IsDiskOnline(ctx, 9); return err },
		"SetDiskOnline": func() error { return d.SetDiskOnline(ctx, 9, true) },
		"PartitionDisk": func() error { return d.PartitionDisk(ctx, 9) },
	} {
		err := call()
		if !errors.Is(err, errdefs.ErrNotFound) || !strings.Contains(err.Error(), "disk 9 does not exist") {
			t.Errorf("%s on a missing disk: %v", name, err)
		}
	}
	if f.called("wmi") {
		t.Errorf("WMI was called for a missing disk: %v", f.calls)
	}
}

func TestDiskOnlineState(t *testing.T) {
	f := newFake(t)
	f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(0)))
	if on, err := f.backend().Disk().IsDiskOnline(ctx, 3); err != nil || !on {
		t.Errorf("IsDiskOnline = %v, %v", on, err)
	}
	f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(diskAttributeOffline)))
	if on, err := f.backend().Disk().IsDiskOnline(ctx, 3); err != nil || on {
		t.Errorf("IsDiskOnline(offline) = %v, %v", on, err)
	}
}

func TestSetDiskOnline(t *testing.T) {
	t.Run("already in that state: no WMI", func(t *testing.T) {
		f := newFake(t)
		f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(0)))
		if err := f.backend().Disk().SetDiskOnline(ctx, 3, true); err != nil {
			t.Fatal(err)
		}
		f.expect("open "+drive3+" query", "ioctl "+drive3+" IOCTL_DISK_GET_DISK_ATTRIBUTES out=16", "close "+drive3)
	})
	t.Run("offline to online through MSFT_Disk.Online", func(t *testing.T) {
		f := newFake(t)
		f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(diskAttributeOffline)))
		if err := f.backend().Disk().SetDiskOnline(ctx, 3, true); err != nil {
			t.Fatal(err)
		}
		f.expect("open "+drive3+" query", "ioctl "+drive3+" IOCTL_DISK_GET_DISK_ATTRIBUTES out=16", "close "+drive3,
			"wmi call SELECT * FROM MSFT_Disk WHERE Number = 3 .Online()")
	})
	t.Run("online to offline", func(t *testing.T) {
		f := newFake(t)
		f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(0)))
		if err := f.backend().Disk().SetDiskOnline(ctx, 3, false); err != nil {
			t.Fatal(err)
		}
		if !f.called("MSFT_Disk WHERE Number = 3 .Offline()") {
			t.Errorf("calls = %v", f.calls)
		}
	})
	t.Run("a disk the provider has not seen yet: refresh the cache, retry", func(t *testing.T) {
		f := newFake(t)
		f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(diskAttributeOffline)))
		tries := 0
		f.wmiCall = func(q, method string, _ []wmi.Param) (wmi.Props, error) {
			if tries++; tries == 1 {
				return nil, errdefs.Errorf(errdefs.ErrNotFound, "no MSFT_Disk instance matches %s", q)
			}
			return wmi.Props{"ReturnValue": int64(0)}, nil
		}
		if err := f.backend().Disk().SetDiskOnline(ctx, 3, true); err != nil {
			t.Fatal(err)
		}
		f.expect("open "+drive3+" query", "ioctl "+drive3+" IOCTL_DISK_GET_DISK_ATTRIBUTES out=16", "close "+drive3,
			"wmi call SELECT * FROM MSFT_Disk WHERE Number = 3 .Online()",
			"wmi static MSFT_StorageSetting.UpdateHostStorageCache",
			"wmi call SELECT * FROM MSFT_Disk WHERE Number = 3 .Online()")
	})
	t.Run("the system disk cannot go offline", func(t *testing.T) {
		f := newFake(t)
		f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(0)))
		f.wmiCall = func(_, method string, _ []wmi.Param) (wmi.Props, error) {
			return wmi.Props{"ReturnValue": int64(41009)}, &wmi.MethodError{Class: "MSFT_Disk", Method: method, Code: 41009}
		}
		err := f.backend().Disk().SetDiskOnline(ctx, 3, false)
		if !errors.Is(err, errdefs.ErrFailedPrecondition) {
			t.Errorf("SetDiskOnline = %v, want failed precondition", err)
		}
	})
}

func TestRescan(t *testing.T) {
	f := newFake(t)
	if err := f.backend().Disk().Rescan(ctx); err != nil {
		t.Fatal(err)
	}
	f.expect("wmi static MSFT_StorageSetting.UpdateHostStorageCache")

	f = newFake(t)
	f.wmiStatic = func(string, string) (wmi.Props, error) {
		return nil, &wmi.COMError{Op: "ConnectServer", HRESULT: 0x80020009, SCode: 0x8004100E}
	}
	if err := f.backend().Disk().Rescan(ctx); !errors.Is(err, errdefs.ErrUnimplemented) {
		t.Errorf("Rescan without the storage namespace = %v, want unimplemented", err)
	}
}
