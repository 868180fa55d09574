package audit_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
)

// partWriter accepts up to room more bytes, then fails the write part-way
// (short count and ENOSPC-like error), as a filling disk does.
type partWriter struct {
	mu   sync.Mutex
	room int // bytes still accepted; <0: unlimited
	b    bytes.Buffer
}

func (w *partWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.room < 0 || len(p) <= w.room {
		if w.room >= 0 {
			w.room -= len(p)
		}
		return w.b.Write(p)
	}
	n := w.room
	w.b.Write(p[:n])
	w.room = 0
	return n, errors.New("no space left on device")
}

// TestTornWriteStartsNewLine: a writer that cannot be cut back keeps the
// fragment of a write that failed part-way, but the next record starts on
// a line of its own, so it stays readable, and the tear is counted.
func TestTornWriteStartsNewLine(t *testing.T) {
	w := &partWriter{room: -1}
	l := audit.New(w, audit.Options{})
	if err := l.Log(record("NewSmbGlobalMapping")); err != nil {
		t.Fatal(err)
	}
	w.room = 40 // the next record fails after 40 bytes
	if err := l.Log(record("RemoveSmbGlobalMapping")); err == nil {
		t.Fatal("a write that failed part-way reported success")
	}
	w.room = -1
	if err := l.Log(record("NewSmbGlobalMapping")); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(w.b.String(), "\n"), "\n")
	if len(got) != 3 {
		t.Fatalf("%d lines, want 3 (record, fragment, record): %q", len(got), w.b.String())
	}
	auditlog.Parse(t, []byte(got[0]+"\n"))
	auditlog.Parse(t, []byte(got[2]+"\n"))
	if len(got[1]) != 40 {
		t.Errorf("fragment %q, want the 40 bytes written", got[1])
	}
	if l.TornWrites() != 1 || l.Failures() != 1 || l.Written() != 2 {
		t.Errorf("torn %d failures %d written %d, want 1 1 2", l.TornWrites(), l.Failures(), l.Written())
	}
}

// TestIntentAndOutcome: a change's intent and outcome records share an
// ID; the intent has no outcome fields, so it never reads as a success.
func TestIntentAndOutcome(t *testing.T) {
	path := t.TempDir() + "/audit.log"
	l, err := audit.Open(path, audit.Options{Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	r := record("NewSmbGlobalMapping")
	if err := l.Intent(&r); err != nil || r.ID == "" {
		t.Fatalf("Intent: %v, id %q", err, r.ID)
	}
	if err := l.Log(r); err != nil {
		t.Fatal(err)
	}
	if err := l.Log(record("GetService")); err != nil {
		t.Fatal(err)
	}
	l.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	for _, s := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("line %q: %v", s, err)
		}
		recs = append(recs, m)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	in, done, other := recs[0], recs[1], recs[2]
	if in["phase"] != "intent" || done["phase"] != "done" || other["phase"] != "done" {
		t.Errorf("phases %v %v %v", in["phase"], done["phase"], other["phase"])
	}
	if in["id"] != r.ID || done["id"] != r.ID || other["id"] == r.ID || other["id"] == "" {
		t.Errorf("ids %v %v %v, want the first two %s and the third another", in["id"], done["id"], other["id"], r.ID)
	}
	for _, k := range []string{"code", "duration_ms", "message"} {
		if _, ok := in[k]; ok {
			t.Errorf("intent has %s", k)
		}
	}
	if done["code"] != "OK" || done["duration_ms"] != 1.5 || in["method"] != "NewSmbGlobalMapping" {
		t.Errorf("done record %v, intent %v", done, in)
	}
}
