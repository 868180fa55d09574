//go:build linux

package audit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditfault"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
)

// checkWhole fails unless every line of the file is a complete JSON
// record and the file ends with a newline; it returns the lines.
func checkWhole(t *testing.T, path string) []auditlog.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if torn := auditlog.Torn(b); len(torn) > 0 {
		t.Fatalf("the file ends in a torn record: %q", torn)
	}
	return auditlog.Parse(t, b)
}

// bigRecord is a record of about 2 KB, so that a full 4 KiB page of tmpfs
// holds only part of one.
func bigRecord() audit.Record {
	r := record("NewSmbGlobalMapping")
	r.Message = strings.Repeat("m", 2000)
	return r
}

// TestFullDiskCutsBack fills a small tmpfs with audit records: the write
// that fails part-way is cut back to the last complete record, the next
// records (once space is freed) are whole lines, and the tear is counted.
func TestFullDiskCutsBack(t *testing.T) {
	dir := auditfault.SmallTmpfs(t, "64k")
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, 16<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "audit.log")
	l, err := audit.Open(path, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	written := 0
	for l.Log(bigRecord()) == nil {
		written++
		if written > 100 {
			t.Fatal("a 64 KiB tmpfs never filled")
		}
	}
	if got := len(checkWhole(t, path)); got != written {
		t.Errorf("%d records in the file, %d written", got, written)
	}
	if l.TornWrites() == 0 {
		t.Error("the part-way write was not counted")
	}
	if err := l.Log(bigRecord()); err == nil { // still full
		t.Fatal("a write to a full disk succeeded")
	}
	checkWhole(t, path)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := l.Log(record("RemoveSmbGlobalMapping")); err != nil {
		t.Fatalf("write after space was freed: %v", err)
	}
	if got := checkWhole(t, path); len(got) != written+1 || got[written].Method != "RemoveSmbGlobalMapping" {
		t.Errorf("%d records after the recovery, want %d ending with RemoveSmbGlobalMapping", len(got), written+1)
	}
}

// TestDevFull: every write to /dev/full fails (ENOSPC) and is counted; the
// Logger turns unhealthy.
func TestDevFull(t *testing.T) {
	l, err := audit.Open("/dev/full", audit.Options{Sync: true})
	if err != nil {
		t.Skipf("no /dev/full here: %v", err)
	}
	defer l.Close()
	r := record("NewSmbGlobalMapping")
	if err := l.Intent(&r); err == nil || l.Healthy() {
		t.Fatalf("intent on /dev/full: %v, healthy %v", err, l.Healthy())
	}
	if err := l.Log(r); err == nil || l.Failures() != 2 || l.Written() != 0 {
		t.Fatalf("record on /dev/full: %v, failures %d written %d", err, l.Failures(), l.Written())
	}
}

// TestRemovedFile: records written after the audit file was removed would
// go to a file nobody can read any more. The Logger creates the file again
// at its path; when it cannot (here a directory took the path), the record
// fails rather than vanish.
func TestRemovedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := audit.Open(path, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Log(record("NewSmbGlobalMapping")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := l.Log(record("RemoveSmbGlobalMapping")); err != nil {
		t.Fatalf("record after the file was removed: %v", err)
	}
	if got := checkWhole(t, path); len(got) != 1 || got[0].Method != "RemoveSmbGlobalMapping" {
		t.Fatalf("the record after the removal is not in a new file at the path: %+v", got)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil { // the path cannot be opened for writing now
		t.Fatal(err)
	}
	r := record("NewSmbGlobalMapping")
	if err := l.Intent(&r); err == nil || l.Healthy() {
		t.Fatalf("intent with the file removed and its path unopenable: %v, healthy %v", err, l.Healthy())
	}
}
