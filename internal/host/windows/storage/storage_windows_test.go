//go:build windows

package storage

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

// These tests make real Win32 and WMI calls. Wine answers disk, volume
// and Storage Management calls with made-up data (windows-under-wine.md
// §4, §7), so they skip there instead of passing on a stub.

// wineFakesStorage is why: what Wine only pretends to provide.
const wineFakesStorage = "Wine fakes disk and volume IOCTLs and the Storage Management API"

func requireAdmin(t *testing.T) {
	t.Helper()
	if !windows.GetCurrentProcessToken().IsElevated() {
		t.Skip("needs an elevated (administrator) token, as the csi-node-proxy service has")
	}
}

func realBackend(t *testing.T) *Backend {
	t.Helper()
	b, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// systemDrive returns the cleaned root of the Windows volume, C:\ usually.
func systemDrive(t *testing.T) string {
	t.Helper()
	root, err := hostpath.Windows.Clean(os.Getenv("SystemDrive") + `\`)
	if err != nil {
		t.Fatalf("SystemDrive: %v", err)
	}
	return root
}

// TestRealSystemVolume reads the system volume and its disk through every
// read-only call, and checks that the answers agree with each other.
func TestRealSystemVolume(t *testing.T) {
	testutil.RequireRealWindows(t, wineFakesStorage)
	b := realBackend(t)
	v, d := b.Volume(), b.Disk()
	root := systemDrive(t)

	id, err := v.VolumeAt(ctx, root)
	if err != nil {
		t.Fatalf("VolumeAt(%s): %v", root, err)
	}
	if !strings.HasPrefix(id, `\\?\Volume{`) || !strings.HasSuffix(id, `}\`) {
		t.Fatalf("VolumeAt(%s) = %q, not a volume GUID path", root, id)
	}
	sys32 := filepath.Join(root, "Windows", "System32")
	if got, err := v.ClosestVolume(ctx, sys32); err != nil || got != id {
		t.Errorf("ClosestVolume(%s) = %q, %v; want %s", sys32, got, err, id)
	}
	if _, err := v.VolumeAt(ctx, sys32); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("VolumeAt(%s) = %v, want not found (not a mounted folder)", sys32, err)
	}
	if ok, err := v.IsVolumeFormatted(ctx, id); err != nil || !ok {
		t.Errorf("IsVolumeFormatted(system) = %v, %v", ok, err)
	}
	total, used, err := v.VolumeStats(ctx, id)
	if err != nil || total <= 0 || used <= 0 || used > total {
		t.Errorf("VolumeStats(system) = %d, %d, %v", total, used, err)
	}
	n, err := v.DiskNumber(ctx, id)
	if err != nil {
		t.Fatalf("DiskNumber(system): %v", err)
	}
	if on, err := d.IsDiskOnline(ctx, n); err != nil || !on {
		t.Errorf("IsDiskOnline(%d) = %v, %v", n, on, err)
	}
	ids, err := v.ListVolumesOnDisk(ctx, n, 0)
	if err != nil || !slices.ContainsFunc(ids, func(s string) bool { return strings.EqualFold(s, id) }) {
		t.Errorf("ListVolumesOnDisk(%d, 0) = %q, %v; want it to contain %s", n, ids, err, id)
	}
	all, err := d.ListDiskIDs(ctx)
	if err != nil {
		t.Fatalf("ListDiskIDs: %v", err)
	}
	if _, ok := all[n]; !ok {
		t.Errorf("ListDiskIDs lacks disk %d: %+v", n, all)
	}
	t.Logf("system volume %s on disk %d; disk IDs %+v", id, n, all[n])
	locs, err := d.ListDiskLocations(ctx)
	if err != nil {
		t.Fatalf("ListDiskLocations: %v", err)
	}
	t.Logf("disk locations: %+v (NVMe-only hosts may have none)", locs)
	if _, err := d.DiskSize(ctx, 4096); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("DiskSize(4096) = %v, want not found", err)
	}
}

// TestRealAdminReads covers the calls that need an administrator: the
// disk's size (GENERIC_READ on the disk), the provider's partition sizes
// and a volume flush.
func TestRealAdminReads(t *testing.T) {
	testutil.RequireRealWindows(t, wineFakesStorage)
	requireAdmin(t)
	b := realBackend(t)
	v, d := b.Volume(), b.Disk()
	id, err := v.VolumeAt(ctx, systemDrive(t))
	if err != nil {
		t.Fatal(err)
	}
	n, err := v.DiskNumber(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	size, err := d.DiskSize(ctx, n)
	if err != nil || size <= 0 {
		t.Errorf("DiskSize(%d) = %d, %v", n, size, err)
	}
	cur, maximum, err := v.VolumeSizes(ctx, id)
	if err != nil {
		t.Errorf("VolumeSizes(system): %v (GetSupportedSize needs the defragsvc service)", err)
	} else if cur <= 0 || maximum < cur || maximum > size {
		t.Errorf("VolumeSizes(system) = %d, %d on a %d-byte disk", cur, maximum, size)
	}
	if err := v.FlushVolume(ctx, id); err != nil {
		t.Errorf("FlushVolume(system): %v", err)
	}
}
