package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reserveLog opens an audit log keeping a 1 MiB reserve (no rate limit)
// on a file system whose free space is *free, 1 GiB to begin with.
func reserveLog(t *testing.T) (l *Logger, path string, free *int64) {
	free = new(int64)
	*free = 1 << 30
	old := freeSpace
	freeSpace = func(*os.File) (int64, bool) { return *free, true }
	t.Cleanup(func() { freeSpace = old })
	path = filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path, Options{Reserve: 1 << 20, DenialBurst: -1})
	if err != nil {
		t.Fatal(err)
	}
	return l, path, free
}

// The records reserveLog's tests write: a denial, and a read.
var (
	lowDenial = Record{Method: "Mkdir", Decision: Deny, Reason: "no rule allows it"}
	lowRead   = Record{Method: "PathExists", Decision: Allow}
)

// TestReserveKeptForChanges: below the reserve, denials and reads are
// counted instead of written, and the records of a change still are; so
// a flood of denials cannot use up the space a change's intent needs.
func TestReserveKeptForChanges(t *testing.T) {
	l, path, free := reserveLog(t)
	defer l.Close()
	denial, read := lowDenial, lowRead
	if err := l.Log(denial); err != nil {
		t.Fatal(err)
	}

	*free = 1<<20 - 1 // below the reserve
	for _, r := range []Record{denial, read} {
		if err := l.Log(r); err != nil {
			t.Fatal(err)
		}
	}
	change := Record{Method: "Mkdir", Decision: Allow}
	if err := l.Intent(&change); err != nil {
		t.Fatal(err)
	}
	if err := l.Log(change); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"decision":"deny"`) ||
		!strings.Contains(lines[1], `"phase":"intent"`) || !strings.Contains(lines[2], `"phase":"done","time"`) {
		t.Errorf("records written:\n%s\nwant the first denial, then the change's intent and outcome only", b)
	}
	if got := l.Suppressed(); got != 2 {
		t.Errorf("Suppressed() = %d, want 2 (a denial and a read below the reserve)", got)
	}
}

// TestLowSpaceSummary: the records left out below the reserve are said
// by a summary record (kind low-space, their count) once space is back,
// written before the next denial or read, and at Close when space never
// came back; a reader of the file alone learns that records are missing.
func TestLowSpaceSummary(t *testing.T) {
	l, path, free := reserveLog(t)
	denial, read := lowDenial, lowRead
	*free = 1<<20 - 1 // below the reserve
	for _, r := range []Record{denial, read, denial} {
		if err := l.Log(r); err != nil {
			t.Fatal(err)
		}
	}
	*free = 1 << 30 // space is back
	if err := l.Log(denial); err != nil {
		t.Fatal(err)
	}
	*free = 1<<20 - 1 // and gone again: two more left out, said at Close
	for _, r := range []Record{read, read} {
		if err := l.Log(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{
		`"phase":"summary"`, `"decision":"suppressed"`, `"suppressed_kind":"low-space"`, `"suppressed":3`,
	}
	if len(lines) != 3 {
		t.Fatalf("records written:\n%s\nwant a low-space summary, the denial, a low-space summary", b)
	}
	for i, idx := range []int{0, 2} {
		n := []string{`"suppressed":3`, `"suppressed":2`}[i]
		for _, w := range append(want[:3:3], n) {
			if !strings.Contains(lines[idx], w) {
				t.Errorf("record %d = %s, want it to hold %s", idx+1, lines[idx], w)
			}
		}
	}
	if !strings.Contains(lines[1], `"decision":"deny"`) {
		t.Errorf("record 2 = %s, want the denial written once space was back", lines[1])
	}
	if got := l.Suppressed(); got != 5 {
		t.Errorf("Suppressed() = %d, want 5", got)
	}
}
