//go:build linux

package blockdev

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
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
	if err := copyTree(filepath.Join(fx.sysfs, "detached-vdb"), vdb); err != nil {
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
