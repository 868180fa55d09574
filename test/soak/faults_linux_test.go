//go:build linux

package soak

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
)

// smallTmpfs mounts a tmpfs of the given size on a temporary directory,
// unmounted when the test ends. Mounting needs root.
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs to fill needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillUp writes to a new file in dir until the file system is full, and
// returns the file's path.
func fillUp(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 512)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			return path
		}
	}
}

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
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) (path string, brk, repair func())
	}{
		{"dev-full", func(*testing.T) (string, func(), func()) { return "/dev/full", func() {}, nil }},
		{"full-tmpfs", func(t *testing.T) (string, func(), func()) {
			dir := smallTmpfs(t, "64k")
			var filler string
			return filepath.Join(dir, "audit.log"), func() { filler = fillUp(t, dir) }, func() {
				if err := os.Remove(filler); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"removed-unopenable", func(t *testing.T) (string, func(), func()) {
			path := filepath.Join(t.TempDir(), "audit.log")
			return path, func() {
					if err := os.Remove(path); err != nil {
						t.Fatal(err)
					}
					if err := os.Mkdir(path, 0o700); err != nil {
						t.Fatal(err)
					}
				}, func() {
					if err := os.Remove(path); err != nil {
						t.Fatal(err)
					}
				}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, brk, repair := tc.setup(t)
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
					if tc.name != "full-tmpfs" {
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
			case tc.name != "full-tmpfs" && torn != 0:
				t.Errorf("csi_node_proxy_audit_torn_writes_total = %v; want 0: nothing of a record reaches %s", torn, tc.name)
			case tc.name == "full-tmpfs" && torn == 0 && (statErr != nil || fi.Size()%int64(os.Getpagesize()) != 0):
				t.Errorf("csi_node_proxy_audit_torn_writes_total = 0 on a full tmpfs whose audit file ends mid-page (%v, %v)", fi, statErr)
			}
			t.Logf("%s: %d changes refused, %d made; torn writes %v", tc.name, refusedN, len(made), torn)
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
			a := readAuditLost(t, path, tc.name == "full-tmpfs")
			recorded := a.madePaths()
			for p := range a.begunPaths() {
				recorded[p] = true
			}
			if tc.name != "removed-unopenable" { // the first record went with the removed file
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
