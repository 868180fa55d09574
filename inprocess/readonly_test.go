package inprocess

import (
	"path/filepath"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
)

// TestClearReadOnlyOnOnline: with Options.ClearReadOnlyOnOnline (the
// daemon's --clear-read-only-on-online), SetDiskState(online) of a disk
// that came back read-only clears the attribute, and the call is audited;
// without it the disk stays read-only, as upstream's pipes leave it.
func TestClearReadOnlyOnOnline(t *testing.T) {
	for _, clear := range []bool{false, true} {
		log := filepath.Join(t.TempDir(), "audit.log")
		n := simNode(t, Options{ClearReadOnlyOnOnline: clear, AuditLog: log,
			SimDisks: []string{"size=1GiB,number=9,offline,readonly"}})
		ctx := t.Context()
		if _, err := n.Disk().SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: 9, IsOnline: true}); err != nil {
			t.Fatal(err)
		}
		ro, err := n.Disk().GetDiskReadOnly(ctx, &disk.GetDiskReadOnlyRequest{DiskNumber: 9})
		if err != nil {
			t.Fatal(err)
		}
		if ro.IsReadOnly == clear {
			t.Errorf("ClearReadOnlyOnOnline %v: read-only %v after SetDiskState(online)", clear, ro.IsReadOnly)
		}
		recs := readAudit(t, log)
		if len(recs) != 1 || recs[0].Method != "SetDiskState" || recs[0].Decision != "allow" {
			t.Errorf("audit log %+v; want the one SetDiskState", recs)
		}
	}
}
