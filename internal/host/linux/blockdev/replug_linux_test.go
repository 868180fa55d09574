//go:build linux

package blockdev

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/blockfixture"
)

// TestReplugWithoutDiskseq: on a kernel without diskseq (before 5.15) a
// disk detached and attached again gets the same kernel name and device
// number (sdb, 8:16). Its proxy-made number must change, so a driver
// holding the old number gets NotFound instead of the new disk: the
// number is keyed by the sysfs object too, which the kernel creates anew
// on every attach.
func TestReplugWithoutDiskseq(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	vdb := filepath.Join(fx.sysfs, "block", "vdb")
	if err := os.Remove(filepath.Join(vdb, "diskseq")); err != nil {
		t.Fatal(err)
	}
	b := fx.backend(t, Config{DiskFilter: []string{"vdb"}})
	before, err := b.ListDiskIDs(ctx)
	if err != nil || len(before) != 1 {
		t.Fatalf("ListDiskIDs = %v, %v", before, err)
	}
	var old uint32
	for n := range before {
		old = n
	}
	// Detach and attach again: a new kobject, same name and device
	// number. The old directory is kept aside so its inode is not reused.
	if err := os.Rename(vdb, filepath.Join(fx.sysfs, "detached-vdb")); err != nil {
		t.Fatal(err)
	}
	if err := blockfixture.CopyTree(filepath.Join(fx.sysfs, "detached-vdb"), vdb); err != nil {
		t.Fatal(err)
	}
	after, err := b.ListDiskIDs(ctx)
	if err != nil || len(after) != 1 {
		t.Fatalf("ListDiskIDs after re-attach = %v, %v", after, err)
	}
	if _, ok := after[old]; ok {
		t.Fatalf("the re-attached disk kept number %d", old)
	}
	_, err = b.DiskSize(ctx, old)
	wantErr(t, err, errdefs.ErrNotFound, "does not exist")
}

// TestDiskNumberOfFollowsTheDiskGroup: the iSCSI backend numbers its LUNs'
// disks with DiskNumberOf, so it must give the disk group's number, with
// diskseq and without (a kernel before 5.15), and NotFound for a device the
// backend does not manage.
func TestDiskNumberOfFollowsTheDiskGroup(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	if err := os.Remove(filepath.Join(fx.sysfs, "block", "vdb", "diskseq")); err != nil {
		t.Fatal(err)
	}
	b := fx.backend(t, Config{DiskFilter: []string{"vdb"}})
	ids, err := b.ListDiskIDs(ctx)
	if err != nil || len(ids) != 1 {
		t.Fatalf("ListDiskIDs = %v, %v", ids, err)
	}
	for want := range ids {
		got, err := b.DiskNumberOf("vdb")
		if err != nil || got != want {
			t.Errorf("DiskNumberOf(vdb) = %d, %v; the disk group calls it %d", got, err, want)
		}
	}
	_, err = b.DiskNumberOf("vdz")
	wantErr(t, err, errdefs.ErrNotFound, "is not a disk of this node")
}
