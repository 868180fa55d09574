//go:build linux

package soak

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

// diskIO is a block device's completed write and flush requests, from
// /sys/block/NAME/stat (fields 5 and 16).
type diskIO struct{ writes, flushes uint64 }

func readDiskIO(t *testing.T, name string) diskIO {
	t.Helper()
	b, err := os.ReadFile("/sys/block/" + name + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if len(f) < 17 {
		t.Skipf("/sys/block/%s/stat has no flush counters (kernel before 5.5): %q", name, b)
	}
	w, err1 := strconv.ParseUint(f[4], 10, 64)
	fl, err2 := strconv.ParseUint(f[15], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/sys/block/%s/stat: %q", name, b)
	}
	return diskIO{w, fl}
}

// TestAuditSync: with --audit-sync (the daemon) or Options.AuditSync
// (library mode) every audit record reaches the disk before the call goes
// on; without, none does. Watched from outside, with no tracing: the
// audit log is on an ext4 filesystem of its own, on a loop disk, mounted
// with a five-minute journal commit interval and no background inode
// table initialisation, so nothing but an fsync writes to that disk for
// the test's duration. After each change call returns, the disk has
// completed flush requests (at least one per record: the intent and the
// outcome) when syncing, and no write at all when not.
func TestAuditSync(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "e2fsprogs", "mkfs.ext4")
	s := linuxnode.New(t)
	l := s.Attach("auditfs.img", 32<<20)
	if out, err := exec.Command("mkfs.ext4", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0", l.Path).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v\n%s", err, out)
	}
	mnt := filepath.Join(s.Dir, "auditfs")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(l.Path, mnt, "ext4", 0, "commit=300,noinit_itable"); err != nil {
		t.Fatalf("mount the audit filesystem: %v", err)
	}
	// The scratch area's cleanup unmounts it.

	const changes = 10
	for _, tc := range []struct {
		name          string
		library, sync bool
	}{
		{"daemon", false, false},
		{"daemon-audit-sync", false, true},
		{"library", true, false},
		{"library-AuditSync", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(mnt, tc.name+".log")
			var mkdir func(i int) error
			if tc.library {
				n, err := inprocess.New(t.Context(), inprocess.Options{Host: inprocess.HostSimulated, AuditLog: path, AuditSync: tc.sync})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = n.Close() })
				mkdir = func(i int) error {
					_, err := n.Filesystem().Mkdir(t.Context(), &filesystem.MkdirRequest{Path: fmt.Sprintf(`%s\sync%d`, kubelet, i)})
					return err
				}
			} else {
				var flags []string
				if tc.sync {
					flags = append(flags, "--audit-sync")
				}
				dm := startDaemon(t, path, flags...)
				fs := filesystemv1.NewFilesystemClient(dm.dial(t, "filesystem-v1"))
				mkdir = func(i int) error {
					ctx, cancel := callCtx(t)
					defer cancel()
					_, err := fs.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: fmt.Sprintf(`%s\sync%d`, kubelet, i)})
					return err
				}
			}
			// A first change creates what later ones only append to.
			if err := mkdir(-1); err != nil {
				t.Fatal(err)
			}
			var total diskIO
			minFlushes := uint64(1 << 62)
			for i := range changes {
				before := readDiskIO(t, l.Name)
				if err := mkdir(i); err != nil {
					t.Fatal(err)
				}
				after := readDiskIO(t, l.Name)
				d := diskIO{after.writes - before.writes, after.flushes - before.flushes}
				total.writes += d.writes
				total.flushes += d.flushes
				minFlushes = min(minFlushes, d.flushes)
				if tc.sync && d.flushes < 2 {
					t.Errorf("change %d: %d flushes and %d writes of the audit disk before the call returned; want a flush per record (intent and outcome)", i, d.flushes, d.writes)
				}
			}
			if !tc.sync && (total.writes != 0 || total.flushes != 0) {
				t.Errorf("without sync, %d changes wrote the audit disk %d times and flushed it %d times; want nothing written before writeback", changes, total.writes, total.flushes)
			}
			t.Logf("%s: %d changes (intent and outcome each): %d writes and %d flushes of the audit disk as the calls returned (fewest flushes in one call: %d)",
				tc.name, changes, total.writes, total.flushes, minFlushes)
			a := readAudit(t, path)
			if got := a.count("Mkdir", "OK"); got != changes+1 {
				t.Errorf("%d Mkdir outcomes audited, want %d", got, changes+1)
			}
		})
	}
}
