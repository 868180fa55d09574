package inprocess

import (
	"errors"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
)

// TestLibraryConfinesObjects: library mode confines disks and volumes as
// the daemon does, asking its own host where volumes are mounted. Under a
// rule confining the caller to what is mounted nowhere or beneath its
// plugin directory, a fresh data disk may be partitioned (a Node that
// could not ask refuses it, fail closed) and the system disk, mounted at
// C:\, may not be taken offline; the host keeps it online.
func TestLibraryConfinesObjects(t *testing.T) {
	n := simNode(t, Options{PolicyData: []byte(`
rules:
- name: driver-a
  callers: [{any: true}]
  allow: [{groups: [disk], methods: ["*"]}]
  pathRoots: ['C:\var\lib\kubelet\plugins\a']
  objects: {onlyMountedBeneathPathRoots: true}
`)})
	ctx := t.Context()
	if _, err := n.Disk().PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: 1}); err != nil {
		t.Errorf("PartitionDisk of a fresh data disk: %v", err)
	}
	_, err := n.Disk().SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: 0, IsOnline: false})
	if !errors.Is(err, errdefs.ErrPermissionDenied) || !strings.Contains(err.Error(), "outside the path roots") {
		t.Errorf("SetDiskState of the system disk: %v, want a denial naming the path roots", err)
	}
	for _, d := range n.Simulated().ListDisks() {
		switch {
		case d.Number == 0 && !d.Online:
			t.Error("the system disk was taken offline")
		case d.Number == 1 && d.PartitionStyle != "GPT":
			t.Errorf("the data disk is %s, not partitioned", d.PartitionStyle)
		}
	}
}
