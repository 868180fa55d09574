// Package logbatch writes log lines that are produced together with one
// write(2) instead of one each.
//
// klog writes every line to stderr with a system call of its own while
// holding its lock. With 16 drivers calling the shipped configuration
// (-v=2, a line for every call) those writes were 8% of the daemon's CPU
// (docs/benchmarks.md). The daemon's call log writes the lines of calls
// that ended at about the same time in one go (Hold, then the lines, then
// Release); a Writer keeps them until Release and writes them at once.
// Outside a hold, a line is written at once, as klog would: nothing waits
// on a timer, so a line is never later than the batch it is part of, and
// a crash loses at most the lines of a batch being made.
package logbatch

import (
	"io"
	"sync"
)

// maxHeld is how many bytes a hold keeps before it writes them anyway, so
// a long batch neither grows memory nor delays its first lines much.
const maxHeld = 64 << 10

// Writer passes lines on to an io.Writer, one write per batch while a
// batch is held open. It is safe for concurrent use.
type Writer struct {
	mu    sync.Mutex
	w     io.Writer
	holds int
	buf   []byte
	err   error // the last write's error, reported by Flush
}

// New returns a Writer writing to w.
func New(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p, or keeps a copy of it until the open batch is released.
// It never fails while a batch is open; a failure of the write that
// follows is reported by Flush.
func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.holds == 0 {
		return b.w.Write(p)
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) >= maxHeld {
		_ = b.flushLocked() // kept in b.err for Flush
	}
	return len(p), nil
}

// WriteKlogBuffer writes one line klog formatted: klog.WriteKlogBuffer's
// callback. klog calls it under its own lock, as it calls its own writes.
func (b *Writer) WriteKlogBuffer(p []byte) { _, _ = b.Write(p) }

// Hold opens a batch: lines written until the matching Release are kept
// and written together. Holds nest.
func (b *Writer) Hold() {
	b.mu.Lock()
	b.holds++
	b.mu.Unlock()
}

// Release closes the batch Hold opened; the last Release writes what the
// batch kept.
func (b *Writer) Release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.holds > 0 {
		b.holds--
	}
	if b.holds == 0 {
		_ = b.flushLocked() // kept in b.err for Flush
	}
}

// Flush writes what is kept, even inside a batch, and reports the first
// write error since the last Flush.
func (b *Writer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	err := b.flushLocked()
	if err == nil {
		err = b.err
	}
	b.err = nil
	return err
}

// flushLocked writes the kept bytes. A failed write drops them (a log
// line is never worth blocking on) and remembers the error.
func (b *Writer) flushLocked() error {
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.w.Write(b.buf)
	b.buf = b.buf[:0]
	if err != nil && b.err == nil {
		b.err = err
	}
	return err
}
