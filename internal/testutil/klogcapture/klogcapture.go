// Package klogcapture points klog, which is global, at a buffer a test
// reads: the daemon and its packages log through klog, and the tests that
// check what they log (a call's line, a warning at start, the address a
// server listens on) all need the same set-up and the same undoing of it.
package klogcapture

import (
	"flag"
	"fmt"
	"io"
	"testing"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/syncbuf"
)

// Buffer is what klog wrote: a syncbuf.Buffer (klog writes while the test
// reads) whose String flushes klog first, so a line logged just before is
// there to read.
type Buffer struct {
	syncbuf.Buffer
}

// String returns what klog has written, after flushing it.
func (b *Buffer) String() string {
	klog.Flush()
	return b.Buffer.String()
}

// Redirect sends klog's output only to out, at verbosity v, each line
// once (klog otherwise writes a line once per severity at or below it),
// and never to stderr: for a TestMain, which has no test to undo it at
// the end.
func Redirect(out io.Writer, v int) error {
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	for _, kv := range [][2]string{
		{"logtostderr", "false"}, {"alsologtostderr", "false"}, {"one_output", "true"},
		{"stderrthreshold", "FATAL"}, {"v", fmt.Sprint(v)},
	} {
		if err := fs.Set(kv[0], kv[1]); err != nil {
			return fmt.Errorf("klog flag -%s: %w", kv[0], err)
		}
	}
	klog.SetOutput(out)
	return nil
}

// Capture sends klog's output, at verbosity v, to the returned Buffer
// until t ends, and then puts klog back as a process starts with it
// (stderr, verbosity 0). klog is global: tests that capture must not run
// in parallel.
func Capture(t testing.TB, v int) *Buffer {
	t.Helper()
	buf := &Buffer{}
	if err := Redirect(buf, v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		klog.Flush()
		var fs flag.FlagSet
		klog.InitFlags(&fs)
		for _, kv := range [][2]string{{"v", "0"}, {"logtostderr", "true"}, {"one_output", "false"}, {"stderrthreshold", "ERROR"}} {
			if err := fs.Set(kv[0], kv[1]); err != nil {
				t.Errorf("restore klog flag -%s: %v", kv[0], err)
			}
		}
	})
	return buf
}
