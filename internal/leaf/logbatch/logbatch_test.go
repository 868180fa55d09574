package logbatch

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

// writes records each write it is given.
type writes struct {
	mu   sync.Mutex
	got  []string
	fail error
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fail != nil {
		return 0, w.fail
	}
	w.got = append(w.got, string(p))
	return len(p), nil
}

func (w *writes) calls() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.got...)
}

func TestLinesOutsideABatchAreWrittenAtOnce(t *testing.T) {
	w := &writes{}
	b := New(w)
	for _, l := range []string{"a\n", "b\n"} {
		if n, err := b.Write([]byte(l)); n != len(l) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", l, n, err)
		}
	}
	if got := w.calls(); strings.Join(got, "|") != "a\n|b\n" {
		t.Errorf("writes %q, want one per line", got)
	}
}

func TestHeldLinesAreOneWrite(t *testing.T) {
	w := &writes{}
	b := New(w)
	b.Hold()
	b.Hold() // holds nest
	for _, l := range []string{"a\n", "b\n", "c\n"} {
		b.WriteKlogBuffer([]byte(l))
	}
	b.Release()
	if got := w.calls(); len(got) != 0 {
		t.Fatalf("writes %q before the outer Release, want none", got)
	}
	b.Release()
	if got := w.calls(); len(got) != 1 || got[0] != "a\nb\nc\n" {
		t.Errorf("writes %q, want the three lines in one write, in order", got)
	}
	b.Release() // one too many: harmless
	if _, err := b.Write([]byte("d\n")); err != nil {
		t.Fatal(err)
	}
	if got := w.calls(); len(got) != 2 || got[1] != "d\n" {
		t.Errorf("writes %q, want the line after the batch written at once", got)
	}
}

func TestLongBatchWritesAsItGoes(t *testing.T) {
	w := &writes{}
	b := New(w)
	b.Hold()
	line := strings.Repeat("x", 1023) + "\n"
	for range 2 * maxHeld / len(line) {
		b.WriteKlogBuffer([]byte(line))
	}
	if got := w.calls(); len(got) != 2 {
		t.Errorf("%d writes inside a batch of %d bytes, want 2 (one per %d bytes kept)", len(got), 2*maxHeld, maxHeld)
	}
	b.Release()
}

func TestFailedBatchWriteReportedByFlush(t *testing.T) {
	boom := errors.New("disk full")
	w := &writes{fail: boom}
	b := New(w)
	b.Hold()
	if _, err := b.Write([]byte("a\n")); err != nil {
		t.Fatalf("Write inside a batch = %v, want nil", err)
	}
	b.Release()
	if err := b.Flush(); !errors.Is(err, boom) {
		t.Errorf("Flush = %v, want the batch's write error", err)
	}
	if err := b.Flush(); err != nil {
		t.Errorf("second Flush = %v, want nil (reported once)", err)
	}
}

func TestFlushWritesInsideABatch(t *testing.T) {
	w := &writes{}
	b := New(w)
	b.Hold()
	b.WriteKlogBuffer([]byte("a\n"))
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := w.calls(); len(got) != 1 || got[0] != "a\n" {
		t.Errorf("writes %q after Flush, want the kept line", got)
	}
	b.Release()
	if got := w.calls(); len(got) != 1 {
		t.Errorf("writes %q after Release, want nothing more", got)
	}
}
