//go:build windows

package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

// The lifecycle test below needs a disk it may wipe. It makes one with the
// Virtual Disk API (virtdisk.dll), which x/sys does not wrap, hence the
// declarations for mkwinsyscall. They live in a test file so that the
// backend itself links no virtdisk code. The functions return their Win32
// error code directly (not through GetLastError), which mkwinsyscall
// expresses with an error result not named err.

//go:generate go run golang.org/x/sys/windows/mkwinsyscall -output zvhd_windows_test.go vhd_windows_test.go

//sys	createVirtualDisk(storageType *virtualStorageType, path *uint16, accessMask uint32, sd *windows.SECURITY_DESCRIPTOR, flags uint32, providerFlags uint32, params *createVirtualDiskParameters, overlapped *windows.Overlapped, handle *windows.Handle) (code error) = virtdisk.CreateVirtualDisk
//sys	attachVirtualDisk(disk windows.Handle, sd *windows.SECURITY_DESCRIPTOR, flags uint32, providerFlags uint32, params *attachVirtualDiskParameters, overlapped *windows.Overlapped) (code error) = virtdisk.AttachVirtualDisk
//sys	detachVirtualDisk(disk windows.Handle, flags uint32, providerFlags uint32) (code error) = virtdisk.DetachVirtualDisk
//sys	getVirtualDiskPhysicalPath(disk windows.Handle, sizeInBytes *uint32, path *uint16) (code error) = virtdisk.GetVirtualDiskPhysicalPath
//sys	expandVirtualDisk(disk windows.Handle, flags uint32, params *expandVirtualDiskParameters, overlapped *windows.Overlapped) (code error) = virtdisk.ExpandVirtualDisk

// VIRTUAL_STORAGE_TYPE (virtdisk.h): DeviceId u32 @0, VendorId GUID @4.
type virtualStorageType struct {
	DeviceID uint32
	VendorID windows.GUID
}

// CREATE_VIRTUAL_DISK_PARAMETERS, version 1 (virtdisk.h): Version u32 @0,
// then the version union, 8-aligned because its arms hold 8-byte fields:
// UniqueId GUID @8, MaximumSize u64 @24, BlockSizeInBytes u32 @32,
// SectorSizeInBytes u32 @36, ParentPath PCWSTR @40, SourcePath PCWSTR @48
// (checked against the SDK by cmd/internal/winlayout).
type createVirtualDiskParameters struct {
	Version           uint32
	_                 uint32 // the union starts at 8
	UniqueID          windows.GUID
	MaximumSize       uint64
	BlockSizeInBytes  uint32
	SectorSizeInBytes uint32
	ParentPath        *uint16
	SourcePath        *uint16
}

// ATTACH_VIRTUAL_DISK_PARAMETERS (Learn "ATTACH_VIRTUAL_DISK_PARAMETERS
// structure"): Version u32 @0, then a union whose Version2 arm holds two
// u64s (RestrictedOffset, RestrictedLength), so the union is at 8 and the
// struct is 24 bytes; version 1 uses only Reserved u32 @8. virtdisk.dll
// may read the whole struct whatever the version, so the Go value has its
// full size (checked by cmd/internal/winlayout).
type attachVirtualDiskParameters struct {
	Version  uint32
	_        uint32 // the union starts at 8
	Reserved uint32
	_        uint32
	_        uint64 // the rest of the Version2 arm
}

// EXPAND_VIRTUAL_DISK_PARAMETERS, version 1: Version u32 @0, NewSize u64 @8.
type expandVirtualDiskParameters struct {
	Version uint32
	NewSize uint64
}

const (
	virtualStorageTypeDeviceVHD    = 2
	virtualDiskAccessAll           = 0x003f0000
	createVirtualDiskFlagNone      = 0 // a dynamic VHD
	attachVirtualDiskFlagNoLetter  = 0x2
	expandVirtualDiskVersion1      = 1
	detachVirtualDiskFlagNone      = 0
	createVirtualDiskVersion1      = 1
	attachVirtualDiskVersion1      = 1
	vhdTestSize                    = 1 << 30
	volumeArrivalTimeout           = 60 * time.Second
	virtualStorageVendorMicrosoft1 = 0xec984aec
)

// {EC984AEC-A0F9-47E9-901F-71415A66345B}
var virtualStorageVendorMicrosoft = windows.GUID{
	Data1: virtualStorageVendorMicrosoft1, Data2: 0xa0f9, Data3: 0x47e9,
	Data4: [8]byte{0x90, 0x1f, 0x71, 0x41, 0x5a, 0x66, 0x34, 0x5b},
}

// testVHD is a dynamic VHD under a test directory, attached without a
// drive letter. The attachment is not permanent: closing the handle
// detaches it even if the test crashes.
type testVHD struct {
	t *testing.T
	h windows.Handle
}

// newTestVHD creates and attaches an empty 1 GiB VHD; it is detached when
// the test ends.
func newTestVHD(t *testing.T) *testVHD {
	t.Helper()
	if _, err := os.Stat(filepath.Join(os.Getenv("SystemRoot"), "System32", "virtdisk.dll")); err != nil {
		t.Skipf("virtdisk.dll is missing: %v", err)
	}
	path, err := windows.UTF16PtrFromString(filepath.Join(t.TempDir(), "csi-node-proxy-test.vhd"))
	if err != nil {
		t.Fatal(err)
	}
	st := virtualStorageType{DeviceID: virtualStorageTypeDeviceVHD, VendorID: virtualStorageVendorMicrosoft}
	params := createVirtualDiskParameters{Version: createVirtualDiskVersion1, MaximumSize: vhdTestSize}
	v := &testVHD{t: t}
	if err := createVirtualDisk(&st, path, virtualDiskAccessAll, nil, createVirtualDiskFlagNone, 0, &params, nil, &v.h); err != nil {
		t.Fatalf("CreateVirtualDisk: %v", err)
	}
	t.Cleanup(func() { _ = windows.CloseHandle(v.h) })
	v.attach()
	t.Cleanup(func() { _ = detachVirtualDisk(v.h, detachVirtualDiskFlagNone, 0) })
	return v
}

func (v *testVHD) attach() {
	v.t.Helper()
	ap := attachVirtualDiskParameters{Version: attachVirtualDiskVersion1}
	if err := attachVirtualDisk(v.h, nil, attachVirtualDiskFlagNoLetter, 0, &ap, nil); err != nil {
		v.t.Fatalf("AttachVirtualDisk: %v", err)
	}
}

func (v *testVHD) detach() {
	v.t.Helper()
	if err := detachVirtualDisk(v.h, detachVirtualDiskFlagNone, 0); err != nil {
		v.t.Fatalf("DetachVirtualDisk: %v", err)
	}
}

// expand grows the detached VHD to size bytes.
func (v *testVHD) expand(size uint64) {
	v.t.Helper()
	p := expandVirtualDiskParameters{Version: expandVirtualDiskVersion1, NewSize: size}
	if err := expandVirtualDisk(v.h, 0, &p, nil); err != nil {
		v.t.Fatalf("ExpandVirtualDisk: %v", err)
	}
}

// disk returns the attached VHD's disk number.
func (v *testVHD) disk() uint32 {
	v.t.Helper()
	buf := make([]uint16, windows.MAX_PATH)
	size := uint32(len(buf) * 2)
	if err := getVirtualDiskPhysicalPath(v.h, &size, &buf[0]); err != nil {
		v.t.Fatalf("GetVirtualDiskPhysicalPath: %v", err)
	}
	phys := windows.UTF16ToString(buf)
	n, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(phys), `\\.\physicaldrive`), 10, 32)
	if err != nil {
		v.t.Fatalf("physical path %q: %v", phys, err)
	}
	v.t.Logf("test VHD attached as %s", phys)
	return uint32(n)
}

// stageVHD brings a new test VHD to what NodeStage leaves behind: online,
// partitioned, formatted. It returns the disk number and the volume ID.
func stageVHD(t *testing.T, b *Backend, vhd *testVHD) (uint32, string) {
	t.Helper()
	d, v := b.Disk(), b.Volume()
	n := vhd.disk()
	if err := d.SetDiskOnline(ctx, n, true); err != nil {
		t.Fatalf("SetDiskOnline(%d, true): %v", n, err)
	}
	for i := range 2 { // the second call must be a no-op
		if err := d.PartitionDisk(ctx, n); err != nil {
			t.Fatalf("PartitionDisk #%d: %v", i+1, err)
		}
	}
	id := waitForVolume(t, b, n)
	if ok, err := v.IsVolumeFormatted(ctx, id); err != nil || ok {
		t.Fatalf("IsVolumeFormatted(new) = %v, %v", ok, err)
	}
	if err := v.FormatVolume(ctx, id); err != nil {
		t.Fatalf("FormatVolume: %v", err)
	}
	return n, id
}

// waitForVolume waits for the one volume of disk n to arrive.
func waitForVolume(t *testing.T, b *Backend, n uint32) string {
	t.Helper()
	deadline := time.Now().Add(volumeArrivalTimeout)
	for {
		ids, err := b.Volume().ListVolumesOnDisk(ctx, n, 0)
		if err != nil {
			t.Fatalf("ListVolumesOnDisk: %v", err)
		}
		if len(ids) == 1 {
			return ids[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("ListVolumesOnDisk(%d, 0) = %q after %v, want one volume", n, ids, volumeArrivalTimeout)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestRealVHDLifecycle drives a new disk through what NodeStage and
// NodeUnstage do: online, partition (twice), find the volume, format,
// mount (twice), inspect, flush, unmount, offline, online.
func TestRealVHDLifecycle(t *testing.T) {
	testutil.RequireRealWindows(t, wineFakesStorage)
	requireAdmin(t)
	b := realBackend(t)
	d, v := b.Disk(), b.Volume()
	n, id := stageVHD(t, b, newTestVHD(t))
	if size, err := d.DiskSize(ctx, n); err != nil || size != vhdTestSize {
		t.Errorf("DiskSize = %d, %v; want %d", size, err, vhdTestSize)
	}
	if ok, err := v.IsVolumeFormatted(ctx, id); err != nil || !ok {
		t.Fatalf("IsVolumeFormatted(formatted) = %v, %v", ok, err)
	}
	if got, err := v.DiskNumber(ctx, id); err != nil || got != n {
		t.Errorf("DiskNumber = %d, %v; want %d", got, err, n)
	}

	mnt := filepath.Join(t.TempDir(), "globalmount")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	mnt, err := hostpath.Windows.Clean(mnt)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := v.MountVolume(ctx, id, mnt); err != nil {
			t.Fatalf("MountVolume #%d: %v", i+1, err)
		}
	}
	t.Cleanup(func() { _ = v.UnmountVolume(ctx, id, mnt) })
	if got, err := v.VolumeAt(ctx, mnt); err != nil || !strings.EqualFold(got, id) {
		t.Errorf("VolumeAt(mount) = %q, %v; want %s", got, err, id)
	}
	sub := filepath.Join(mnt, "data")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatalf("writing through the mount: %v", err)
	}
	if got, err := v.ClosestVolume(ctx, sub); err != nil || !strings.EqualFold(got, id) {
		t.Errorf("ClosestVolume(%s) = %q, %v", sub, got, err)
	}
	total, used, err := v.VolumeStats(ctx, id)
	if err != nil || total < vhdTestSize/2 || used <= 0 {
		t.Errorf("VolumeStats = %d, %d, %v", total, used, err)
	}
	if err := v.FlushVolume(ctx, id); err != nil {
		t.Errorf("FlushVolume: %v", err)
	}
	if err := v.UnmountVolume(ctx, id, mnt); err != nil {
		t.Fatalf("UnmountVolume: %v", err)
	}
	if _, err := v.VolumeAt(ctx, mnt); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("VolumeAt after unmount = %v, want not found", err)
	}

	if err := d.SetDiskOnline(ctx, n, false); err != nil {
		t.Fatalf("SetDiskOnline(false): %v", err)
	}
	if on, err := d.IsDiskOnline(ctx, n); err != nil || on {
		t.Errorf("IsDiskOnline after offline = %v, %v", on, err)
	}
	// Re-staging a disk NodeUnstage took offline: gcp-pd, aws-ebs and
	// vsphere call PartitionDisk before SetDiskState(online).
	if err := d.PartitionDisk(ctx, n); err != nil {
		t.Errorf("PartitionDisk(offline, partitioned) = %v, want success", err)
	}
	if on, err := d.IsDiskOnline(ctx, n); err != nil || on {
		t.Errorf("IsDiskOnline after PartitionDisk of a partitioned offline disk = %v, %v; want it left offline", on, err)
	}
	if err := d.SetDiskOnline(ctx, n, true); err != nil {
		t.Fatalf("SetDiskOnline(true): %v", err)
	}
}

// TestRealResizeVHD grows a staged VHD by 1 GiB (detach, expand,
// attach), then does what NodeExpandVolume does: Rescan, ResizeVolume(0)
// through the Service, GetDiskStats; and checks the 100 MiB no-op rule on
// a second ResizeVolume(0).
func TestRealResizeVHD(t *testing.T) {
	testutil.RequireRealWindows(t, wineFakesStorage)
	requireAdmin(t)
	b := realBackend(t)
	vhd := newTestVHD(t)
	_, id := stageVHD(t, b, vhd)
	vhd.detach()
	vhd.expand(2 * vhdTestSize)
	vhd.attach()
	n := vhd.disk()
	if err := b.Disk().SetDiskOnline(ctx, n, true); err != nil {
		t.Fatalf("SetDiskOnline: %v", err)
	}
	if err := b.Disk().Rescan(ctx); err != nil {
		t.Fatalf("Rescan: %v", err)
	}
	if got := waitForVolume(t, b, n); !strings.EqualFold(got, id) {
		t.Fatalf("the volume came back as %s, not %s", got, id)
	}
	if size, err := b.Disk().DiskSize(ctx, n); err != nil || size != 2*vhdTestSize {
		t.Errorf("DiskSize after expanding = %d, %v", size, err)
	}
	root, err := hostpath.Windows.Clean(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	policy, err := hostpath.NewPolicy(hostpath.Windows, []string{root})
	if err != nil {
		t.Fatal(err)
	}
	s := volume.NewService(b.Volume(), policy)
	before, _, err := b.Volume().VolumeStats(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: id}); err != nil {
		t.Fatalf("ResizeVolume(0): %v", err)
	}
	after, _, err := b.Volume().VolumeStats(ctx, id)
	if err != nil || after-before < vhdTestSize/2 {
		t.Errorf("VolumeStats total went from %d to %d (%v); want about 1 GiB more", before, after, err)
	}
	if _, err := s.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: id}); err != nil {
		t.Errorf("a second ResizeVolume(0), with nothing to gain: %v", err)
	}
}

// TestVirtDiskLayouts checks the Go structs against the documented C
// layouts (amd64) before any of them reaches virtdisk.dll.
func TestVirtDiskLayouts(t *testing.T) {
	var c createVirtualDiskParameters
	for name, got := range map[string]uintptr{
		"sizeof(VIRTUAL_STORAGE_TYPE)":               unsafe.Sizeof(virtualStorageType{}),
		"sizeof(CREATE_VIRTUAL_DISK_PARAMETERS)":     unsafe.Sizeof(c),
		"CREATE_VIRTUAL_DISK_PARAMETERS.MaximumSize": unsafe.Offsetof(c.MaximumSize),
		"CREATE_VIRTUAL_DISK_PARAMETERS.SectorSize":  unsafe.Offsetof(c.SectorSizeInBytes),
		"CREATE_VIRTUAL_DISK_PARAMETERS.ParentPath":  unsafe.Offsetof(c.ParentPath),
		"sizeof(ATTACH_VIRTUAL_DISK_PARAMETERS)":     unsafe.Sizeof(attachVirtualDiskParameters{}),
	} {
		want := map[string]uintptr{
			"sizeof(VIRTUAL_STORAGE_TYPE)":               20,
			"sizeof(CREATE_VIRTUAL_DISK_PARAMETERS)":     56,
			"CREATE_VIRTUAL_DISK_PARAMETERS.MaximumSize": 24,
			"CREATE_VIRTUAL_DISK_PARAMETERS.SectorSize":  36,
			"CREATE_VIRTUAL_DISK_PARAMETERS.ParentPath":  40,
			"sizeof(ATTACH_VIRTUAL_DISK_PARAMETERS)":     24, // the Version2 arm (virtdisk.h; make layout-oracle)
			"sizeof(EXPAND_VIRTUAL_DISK_PARAMETERS)":     16,
		}[name]
		if unsafe.Sizeof(uintptr(0)) == 8 && got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
}
