//go:build linux

package inprocess

import (
	"errors"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditfault"
)

// TestLibraryAuditFaultsChangeNothing is the daemon's
// TestAuditFaultsChangeNothing in library mode: with the audit log on
// /dev/full, on a full tmpfs, or removed with its path made unopenable,
// no change reaches the simulated host, every change fails
// errdefs.ErrUnavailable, reads go on, the file holds only complete
// records, and every change made has its intent and outcome.
func TestLibraryAuditFaultsChangeNothing(t *testing.T) {
	for _, tc := range auditfault.Faults(nil) {
		t.Run(tc.Name, func(t *testing.T) {
			path, brk, repair := tc.Setup(t)
			n := simNode(t, Options{AuditLog: path})
			ctx := t.Context()
			exists := func(name string) bool {
				r, err := n.Filesystem().PathExists(ctx, &filesystem.PathExistsRequest{Path: kubelet + `\` + name})
				if err != nil {
					t.Fatalf("read with the audit log broken: %v", err)
				}
				return r.Exists
			}
			mkdir := func(name string) error {
				_, err := n.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: kubelet + `\` + name})
				return err
			}
			regular := path != "/dev/full"
			if regular {
				if err := mkdir("before"); err != nil || !exists("before") {
					t.Fatalf("Mkdir with a working audit log: %v", err)
				}
			}
			brk()
			// On a full tmpfs the audit file's last page may still hold
			// a few records: those changes are made, and audited.
			made := 0
			for i := range 20 {
				name := "x" + string(rune('a'+i))
				err := mkdir(name)
				switch {
				case err == nil:
					made++
					if tc.Name != "full-tmpfs" {
						t.Errorf("Mkdir %s with the audit log broken succeeded", name)
					}
				case !errors.Is(err, errdefs.ErrUnavailable):
					t.Errorf("Mkdir %s with the audit log broken = %v, want Unavailable", name, err)
				case exists(name):
					t.Errorf("a refused Mkdir %s changed the host", name)
				}
			}
			if made == 20 {
				t.Error("every change was made on a full file system")
			}
			if regular && tc.Name != "removed-unopenable" {
				if got := readAudit(t, path); len(got) != 1+made {
					t.Errorf("%d records while broken, want %d (the changes made)", len(got), 1+made)
				}
			}
			if repair == nil {
				return
			}
			repair()
			if err := mkdir("after"); err != nil || !exists("after") {
				t.Fatalf("Mkdir after the repair: %v", err)
			}
			got := readAudit(t, path)
			if last := got[len(got)-1]; last.Method != "Mkdir" || last.Code != "OK" {
				t.Errorf("records after the repair: %+v", got)
			}
		})
	}
}
