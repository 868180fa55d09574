//go:build linux

package soak

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditfault"
)

// TestAuditFaults runs the daemon with its audit log broken three ways:
// on /dev/full from the start, on a tmpfs that fills up, and removed with
// its path made unopenable while it runs. In each, changes are refused
// with Unavailable and not made (checked by reading the simulated host),
// the first one included; reads go on; the daemon logs the failure and
// counts it in its metrics (write failures, refusals, torn records where
// part of a record reached the file, and audit_log_healthy 0 until a
// write succeeds again); the file holds only complete records, every
// change made has its intent and outcome; and once the cause is repaired
// a change goes through with no restart.
func TestAuditFaults(t *testing.T) {
	for _, tc := range auditfault.Faults(nil) {
		t.Run(tc.Name, func(t *testing.T) {
			path, brk, repair := tc.Setup(t)
			dm := startDaemon(t, path)
			fs := filesystemv1.NewFilesystemClient(dm.dial(t, "filesystem-v1"))
			exists := func(p string) bool {
				ctx, cancel := callCtx(t)
				defer cancel()
				r, err := fs.PathExists(ctx, &filesystemv1.PathExistsRequest{Path: p})
				if err != nil {
					t.Fatalf("read with the audit log broken: %v", err)
				}
				return r.Exists
			}
			mkdir := func(p string) error {
				ctx, cancel := callCtx(t)
				defer cancel()
				_, err := fs.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: p})
				return err
			}
			regular := path != "/dev/full"
			if regular {
				if err := mkdir(kubelet + `\before`); err != nil {
					t.Fatalf("Mkdir with a working audit log: %v", err)
				}
				if n, err := dm.metric("csi_node_proxy_audit_log_healthy"); err != nil || n != 1 {
					t.Errorf("csi_node_proxy_audit_log_healthy with a working audit log = %v, %v; want 1", n, err)
				}
			}
			brk()
			// On a full tmpfs the audit file's last page may still hold
			// a few records: those changes are made, and audited.
			made, refusedN := map[string]bool{}, 0
			for i := range 40 {
				p := fmt.Sprintf(`%s\broken%d`, kubelet, i)
				switch err := mkdir(p); status.Code(err) {
				case codes.OK:
					made[p] = true
					if tc.Name != "full-tmpfs" {
						t.Errorf("Mkdir %s with the audit log broken succeeded", p)
					}
				case codes.Unavailable:
					refusedN++
					if exists(p) {
						t.Errorf("a refused Mkdir %s changed the host", p)
					}
				default:
					t.Errorf("Mkdir %s with the audit log broken: %v, want Unavailable", p, err)
				}
			}
			if refusedN == 0 {
				t.Fatal("no change was refused")
			}
			if !strings.Contains(dm.out.String(), "Audit record not written") {
				t.Error("the daemon's log does not say the audit record was not written")
			}
			if n, err := dm.metric("csi_node_proxy_audit_write_failures_total"); err != nil || n == 0 {
				t.Errorf("csi_node_proxy_audit_write_failures_total = %v, %v; want > 0", n, err)
			}
			if n, err := dm.metric(`csi_node_proxy_denied_calls_total{group="filesystem",method="Mkdir",reason="audit_unavailable"`); err != nil || int(n) != refusedN {
				t.Errorf("denied_calls_total{reason=audit_unavailable} = %v, %v; want %d", n, err, refusedN)
			}
			if n, err := dm.metric("csi_node_proxy_audit_log_healthy"); err != nil || n != 0 {
				t.Errorf("csi_node_proxy_audit_log_healthy with the audit log broken = %v, %v; want 0", n, err)
			}
			// A record that fails part-way is torn: only on the full
			// tmpfs, where a write fills the audit file's last page and
			// fails for the next. (Unless the records before filled
			// that page exactly: then every later write fails whole.)
			torn, err := dm.metric("csi_node_proxy_audit_torn_writes_total")
			if err != nil {
				t.Error(err)
			}
			switch fi, statErr := os.Stat(path); {
			case tc.Name != "full-tmpfs" && torn != 0:
				t.Errorf("csi_node_proxy_audit_torn_writes_total = %v; want 0: nothing of a record reaches %s", torn, tc.Name)
			case tc.Name == "full-tmpfs" && torn == 0 && (statErr != nil || fi.Size()%int64(os.Getpagesize()) != 0):
				t.Errorf("csi_node_proxy_audit_torn_writes_total = 0 on a full tmpfs whose audit file ends mid-page (%v, %v)", fi, statErr)
			}
			t.Logf("%s: %d changes refused, %d made; torn writes %v", tc.Name, refusedN, len(made), torn)
			if repair != nil {
				repair()
				if err := mkdir(kubelet + `\after`); err != nil || !exists(kubelet+`\after`) {
					t.Errorf("Mkdir after the repair: %v", err)
				}
				made[kubelet+`\after`] = true
				if n, err := dm.metric("csi_node_proxy_audit_log_healthy"); err != nil || n != 1 {
					t.Errorf("csi_node_proxy_audit_log_healthy after the repair = %v, %v; want 1", n, err)
				}
				if n, err := dm.metric("csi_node_proxy_audit_torn_writes_total"); err != nil || n != torn {
					t.Errorf("csi_node_proxy_audit_torn_writes_total after the repair = %v, %v; want %v, unchanged", n, err, torn)
				}
			}
			dm.stop(t)
			if !regular {
				return
			}
			// On the full tmpfs a change's intent may be written and its
			// outcome not: that change was made, and its intent is its
			// record.
			a := readAuditLost(t, path, tc.Name == "full-tmpfs")
			recorded := a.madePaths()
			for p := range a.begunPaths() {
				recorded[p] = true
			}
			if tc.Name != "removed-unopenable" { // the first record went with the removed file
				made[kubelet+`\before`] = true
			}
			for p := range made {
				if !recorded[p] {
					t.Errorf("Mkdir %s was made but has no record", p)
				}
			}
			for p := range recorded {
				if !made[p] {
					t.Errorf("the audit log records Mkdir %s made, which the client saw refused", p)
				}
			}
		})
	}
}
