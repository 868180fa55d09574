//go:build linux

package blockdev

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/loopdisk"
)

// TestDiskReadOnlyOnLoopDisks drives the read-only attribute (SetDiskReadOnly,
// GetDiskReadOnly and the ClearReadOnlyOnOnline opt-in) on real loop disks:
// the kernel's flag is what BLKROGET reads back, an online read-only disk
// stays online, and a device read-only by itself (LO_FLAGS_READ_ONLY) is
// refused rather than reported cleared.
func TestDiskReadOnlyOnLoopDisks(t *testing.T) {
	testutil.RequireRoot(t)
	ctx := context.Background()
	h := newHarness(t)
	l := h.attach("csi-ro.img", 64<<20)
	_, _, b := realServices(t, h, "ext4", l.name)
	ds := disk.NewService(b.Disk())
	n := findLoop(t, ds, l)

	kernelRO := func() bool {
		t.Helper()
		v, err := unix.IoctlGetInt(int(l.dev.Fd()), unix.BLKROGET)
		if err != nil {
			t.Fatalf("BLKROGET: %v", err)
		}
		return v != 0
	}
	get := func() bool {
		t.Helper()
		r, err := ds.GetDiskReadOnly(ctx, &disk.GetDiskReadOnlyRequest{DiskNumber: n})
		if err != nil {
			t.Fatalf("GetDiskReadOnly: %v", err)
		}
		return r.IsReadOnly
	}
	set := func(ro bool) error {
		_, err := ds.SetDiskReadOnly(ctx, &disk.SetDiskReadOnlyRequest{DiskNumber: n, IsReadOnly: ro})
		return err
	}
	online := func() bool {
		t.Helper()
		r, err := ds.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: n})
		if err != nil {
			t.Fatalf("GetDiskState: %v", err)
		}
		return r.IsOnline
	}

	if get() || kernelRO() {
		t.Fatal("a new loop disk is read-only")
	}
	for range 2 { // the second time changes nothing
		if err := set(true); err != nil {
			t.Fatalf("SetDiskReadOnly(true): %v", err)
		}
		if !get() || !kernelRO() || !online() {
			t.Fatalf("after SetDiskReadOnly(true): attribute %v, BLKROGET %v, online %v; want read-only and online", get(), kernelRO(), online())
		}
	}
	if err := set(false); err != nil || get() || kernelRO() || !online() {
		t.Fatalf("SetDiskReadOnly(false) = %v: attribute %v, BLKROGET %v, online %v", err, get(), kernelRO(), online())
	}

	// Offline is the kernel flag on a loop disk: the attribute cannot
	// change then, and reads false.
	if _, err := ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: false}); err != nil {
		t.Fatal(err)
	}
	if get() {
		t.Error("an offline loop disk reports the read-only attribute")
	}
	if err := set(true); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("SetDiskReadOnly(true) on an offline loop disk = %v; want FailedPrecondition", err)
	}

	// The opt-in: online and read-only, SetDiskState(online) clears it.
	clearing := disk.NewServiceWith(b.Disk(), disk.ServiceOptions{ClearReadOnlyOnOnline: true})
	if _, err := ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: true}); err != nil {
		t.Fatal(err)
	}
	if err := set(true); err != nil {
		t.Fatal(err)
	}
	if _, err := ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: true}); err != nil || !get() {
		t.Fatalf("SetDiskState(online) without the opt-in = %v, read-only %v; want it left read-only", err, get())
	}
	if _, err := clearing.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: true}); err != nil || get() || kernelRO() {
		t.Fatalf("SetDiskState(online) with ClearReadOnlyOnOnline = %v: read-only %v, BLKROGET %v; want cleared", err, get(), kernelRO())
	}
}

// TestDiskReadOnlyByTheDevice: a loop device attached read-only
// (LO_FLAGS_READ_ONLY, a read-only attachment) is read-only and online,
// and clearing the attribute fails with FailedPrecondition instead of
// reporting a success the kernel did not grant.
func TestDiskReadOnlyByTheDevice(t *testing.T) {
	testutil.RequireRoot(t)
	ctx := context.Background()
	h := newHarness(t)
	file := filepath.Join(h.files, "csi-ro-device.img")
	backing, err := loopdisk.Create(file, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	name, dev, err := loopdisk.Configure(backing, file, unix.LO_FLAGS_READ_ONLY|unix.LO_FLAGS_AUTOCLEAR)
	if err != nil {
		t.Fatal(err)
	}
	l := &loopDisk{name: name, path: "/dev/" + name, file: file, backing: backing, dev: dev}
	h.loops = append(h.loops, l)
	_, _, b := realServices(t, h, "ext4", l.name)
	ds := disk.NewService(b.Disk())
	n := findLoop(t, ds, l)
	if ro, _ := blocktopo.ReadAttr("/sys/block/"+name, "ro"); ro != "1" {
		t.Fatalf("sysfs ro of a read-only loop device = %q", ro)
	}
	// As SetDiskOnline finds it read-only by itself, it counts as online.
	if _, err := ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: true}); err != nil {
		t.Fatal(err)
	}
	r, err := ds.GetDiskReadOnly(ctx, &disk.GetDiskReadOnlyRequest{DiskNumber: n})
	if err != nil || !r.IsReadOnly {
		t.Fatalf("GetDiskReadOnly = %+v, %v; want read-only", r, err)
	}
	_, err = ds.SetDiskReadOnly(ctx, &disk.SetDiskReadOnlyRequest{DiskNumber: n, IsReadOnly: false})
	if !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("SetDiskReadOnly(false) on a read-only device = %v; want FailedPrecondition", err)
	}
	t.Log(err)
}
