package blockdev

import (
	"context"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/blockfixture"
)

// TestHungDiskAffectsOnlyItself (issue 17 item 7): a disk whose reads do
// not return (a passive ALUA path, a failed transport) used to stall every
// RPC, because every scan read every disk's table under one backend lock.
// On a fake kernel whose reads of vdb block, with a call about vdb stuck in
// that read: calls about other disks complete; calls that must look at
// every disk (a volume lookup by ID) wait at most DiskReadTimeout once and
// then no longer wait for vdb; a call about vdb's table reports it
// unreadable; sysfs-only answers about vdb keep working.
func TestHungDiskAffectsOnlyItself(t *testing.T) {
	fx := newFixture(t)
	release := make(chan struct{})
	fx.k.hang = map[string]chan struct{}{"vdb": release}
	const readTimeout = 2 * time.Second
	const quick = time.Second // well below readTimeout: no wait for vdb at all
	b := fx.backend(t, Config{DiskReadTimeout: readTimeout})
	ctx := context.Background()

	stuck := make(chan error, 1)
	go func() { stuck <- b.PartitionDisk(ctx, blockfixture.VDB) }()
	t.Cleanup(func() {
		close(release) // let the reads of vdb fail, so nothing outlives the test
		if err := <-stuck; err == nil {
			t.Error("PartitionDisk of the disk that does not answer succeeded")
		}
	})
	time.Sleep(50 * time.Millisecond) // let it get stuck in vdb's read first

	within := func(what string, limit time.Duration, f func() error) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			return err
		case <-time.After(limit):
			t.Fatalf("%s did not return within %s while vdb does not answer", what, limit)
			return nil
		}
	}

	if err := within("PartitionDisk(loop3)", quick, func() error { return b.PartitionDisk(ctx, blockfixture.Loop3) }); err != nil {
		t.Fatal(err)
	}
	var ids []string
	if err := within("ListVolumesOnDisk(loop3)", quick, func() (err error) { ids, err = b.ListVolumesOnDisk(ctx, blockfixture.Loop3, 0); return err }); err != nil || len(ids) != 1 {
		t.Fatalf("ListVolumesOnDisk(loop3) = %v, %v", ids, err)
	}
	if err := within("DiskSize(sda)", quick, func() error { _, err := b.DiskSize(ctx, blockfixture.SDA); return err }); err != nil {
		t.Fatal(err)
	}
	if err := within("IsDiskOnline(vdb)", quick, func() error { _, err := b.IsDiskOnline(ctx, blockfixture.VDB); return err }); err != nil {
		t.Fatal(err)
	}
	// A lookup by volume ID reads every disk: it waits for vdb at most
	// DiskReadTimeout, the first time only.
	for i, limit := range []time.Duration{readTimeout + quick, quick} {
		var formatted bool
		err := within("IsVolumeFormatted", limit, func() (err error) { formatted, err = b.IsVolumeFormatted(ctx, ids[0]); return err })
		if err != nil || formatted {
			t.Fatalf("IsVolumeFormatted #%d = %v, %v", i+1, formatted, err)
		}
	}
	// A volume on none of the disks that answered may be on vdb: not
	// NotFound, which a driver would take as final.
	err := within("IsVolumeFormatted(unknown)", quick, func() error {
		_, err := b.IsVolumeFormatted(ctx, "0fc63daf-8483-4772-8e79-3d69d8477de4")
		return err
	})
	wantErr(t, err, errdefs.ErrUnavailable, "vdb")
	err = within("ListDiskIDs", quick, func() error {
		all, err := b.ListDiskIDs(ctx)
		if err == nil && all[blockfixture.VDB].SerialNumber == "" {
			t.Errorf("vdb's IDs (from sysfs) are missing: %+v", all[blockfixture.VDB])
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = within("ListVolumesOnDisk(vdb)", quick, func() error { _, err := b.ListVolumesOnDisk(ctx, blockfixture.VDB, 0); return err })
	wantErr(t, err, errdefs.ErrUnavailable, "did not answer")
}
