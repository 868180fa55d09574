//go:build linux

package blockdev

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/loopdisk"
)

// TestClonedDisk: a snapshot restore or PVC clone is a byte copy of a disk,
// partition GUIDs included. With the original staged and the clone
// attached, the live volume keeps working (stats, path lookups, unmount:
// the device mounted there decides), and bringing the clone online gives
// it new disk and partition GUIDs, as Windows gives a disk whose signature
// collides a new one, so it stages under its own volume ID.
func TestClonedDisk(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "e2fsprogs", "mkfs.ext4")
	ctx := context.Background()
	h := newHarness(t)
	const size = 64 << 20
	a := h.attach("csi-original.img", size)
	c := h.attach("csi-clone.img", size)
	ds, vs, _ := realServices(t, h, "ext4", a.name, c.name)
	na, nc := findLoop(t, ds, a), findLoop(t, ds, c)
	id := partitionOne(t, ds, vs, na)
	if _, err := vs.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: id}); err != nil {
		t.Fatal(err)
	}
	staging := filepath.Join(h.root, "original")
	if _, err := vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: staging}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(staging, "data"), []byte("original"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := vs.WriteVolumeCache(ctx, &volume.WriteVolumeCacheRequest{VolumeID: id}); err != nil {
		t.Fatal(err)
	}
	// The clone: a byte copy of the original disk, as a snapshot restore.
	loopdisk.Copy(t, a.path, c.path)
	idsBefore, err := ds.ListDiskIDs(ctx, &disk.ListDiskIDsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if idsBefore.DiskIDs[na].Page83 != idsBefore.DiskIDs[nc].Page83 {
		t.Fatalf("the copy is not a clone: page83 %s vs %s", idsBefore.DiskIDs[na].Page83, idsBefore.DiskIDs[nc].Page83)
	}
	cv, err := vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: nc})
	if err != nil || len(cv.VolumeIDs) != 1 || cv.VolumeIDs[0] != id {
		t.Fatalf("clone's volumes = %+v, %v; want the original's %s", cv, err, id)
	}

	// The live volume: stats, path lookups and its disk number.
	if st, err := vs.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id}); err != nil || st.TotalBytes <= 0 {
		t.Fatalf("GetVolumeStats of the live volume with a clone attached = %+v, %v", st, err)
	}
	if at, err := vs.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: staging}); err != nil || at.VolumeID != id {
		t.Fatalf("GetVolumeIDFromTargetPath = %+v, %v", at, err)
	}
	if dn, err := vs.GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: id}); err != nil || dn.DiskNumber != na {
		t.Fatalf("GetDiskNumberFromVolumeID = %+v, %v; want the mounted original %d", dn, err, na)
	}

	// The clone is brought online (already online: the call still
	// resolves the collision) and gets its own identities.
	if _, err := ds.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: nc, IsOnline: true}); err != nil {
		t.Fatal(err)
	}
	cv, err = vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: nc})
	if err != nil || len(cv.VolumeIDs) != 1 || cv.VolumeIDs[0] == id {
		t.Fatalf("clone's volumes after SetDiskState(online) = %+v, %v; want a new ID", cv, err)
	}
	cid := cv.VolumeIDs[0]
	idsAfter, err := ds.ListDiskIDs(ctx, &disk.ListDiskIDsRequest{})
	if err != nil || idsAfter.DiskIDs[nc].Page83 == idsAfter.DiskIDs[na].Page83 || idsAfter.DiskIDs[na].Page83 != idsBefore.DiskIDs[na].Page83 {
		t.Fatalf("after SetDiskState(online) page83: original %s (was %s), clone %s; %v", idsAfter.DiskIDs[na].Page83, idsBefore.DiskIDs[na].Page83, idsAfter.DiskIDs[nc].Page83, err)
	}
	if w := blkid(t, "PART_ENTRY_UUID", c.path+"p1"); w != "" && w != cid {
		t.Fatalf("blkid says the clone's partition blocktopo.GUID is %s, its volume ID is %s", w, cid)
	}
	// The original stays as it was.
	if ov, err := vs.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: na}); err != nil || ov.VolumeIDs[0] != id {
		t.Fatalf("original's volumes = %+v, %v", ov, err)
	}
	// Both stage side by side; the clone holds the original's data.
	cloneStaging := filepath.Join(h.root, "clone")
	if _, err := vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: cid, TargetPath: cloneStaging}); err != nil {
		t.Fatalf("MountVolume(clone): %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(cloneStaging, "data")); err != nil || string(b) != "original" {
		t.Fatalf("clone data = %q, %v", b, err)
	}
	for _, u := range []struct{ id, target string }{{id, staging}, {cid, cloneStaging}} {
		if _, err := vs.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: u.id, TargetPath: u.target}); err != nil {
			t.Fatalf("UnmountVolume(%s): %v", u.target, err)
		}
	}
}
