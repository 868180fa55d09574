package server

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"k8s.io/klog/v2/textlogger"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/klogcapture"
)

func testLine(i int) callLine {
	return callLine{level: 2, endpoint: "ep", method: fmt.Sprintf("/m%d", i), caller: "uid 0", code: codes.OK}
}

// TestCallLogKeepsEveryLineInOrder: lines queued, written past a full
// queue (by the call itself), and written after close all reach the log,
// queued ones in order; close writes what is queued before it returns.
func TestCallLogKeepsEveryLineInOrder(t *testing.T) {
	logs := klogcapture.Capture(t, 2)
	l := newCallLog(nil, nil)
	// Not started: the queue fills, then calls write their own lines.
	for i := range callLogQueue + 3 {
		l.write(testLine(i))
	}
	if got := strings.Count(logs.String(), `"call"`); got != 3 {
		t.Fatalf("%d lines written by calls past a full queue of %d, want 3", got, callLogQueue)
	}
	l.start()
	l.write(testLine(callLogQueue + 3))
	l.close()
	out := logs.String()
	if got := strings.Count(out, `"call"`); got != callLogQueue+4 {
		t.Fatalf("%d lines after close, want %d", got, callLogQueue+4)
	}
	// The queue keeps its order; a line written past a full queue comes
	// before the queued ones.
	if a, b := strings.Index(out, `method="/m0"`), strings.Index(out, fmt.Sprintf(`method="/m%d"`, callLogQueue-1)); a < 0 || b < a {
		t.Fatalf("the queued lines are out of order (first at %d, last at %d)", a, b)
	}
	l.write(testLine(-1)) // after close: written at once
	if !strings.Contains(logs.String(), `method="/m-1"`) {
		t.Fatal("a line written after close is missing")
	}
	l.close() // twice is fine
}

// TestCallLogClosedWithoutStart: a log closed before its writer started
// writes what was queued.
func TestCallLogClosedWithoutStart(t *testing.T) {
	logs := klogcapture.Capture(t, 2)
	l := newCallLog(nil, nil)
	l.write(testLine(1))
	l.close()
	if !strings.Contains(logs.String(), `method="/m1"`) {
		t.Fatalf("the queued line is missing:\n%s", logs.String())
	}
}

// countingBatch records the batches the call log opens and how many lines
// each holds (counted in the captured log at Hold and at Release).
type countingBatch struct {
	logs  *klogcapture.Buffer
	at    int
	sizes []int
}

func (b *countingBatch) Hold() { b.at = strings.Count(b.logs.String(), `"call"`) }
func (b *countingBatch) Release() {
	b.sizes = append(b.sizes, strings.Count(b.logs.String(), `"call"`)-b.at)
}

// TestCallLogBatchesQueuedLines: with a LogBatch, the lines the writer
// finds queued are written in batches of at most callLogBatch, each
// inside one Hold/Release, in order.
func TestCallLogBatchesQueuedLines(t *testing.T) {
	logs := klogcapture.Capture(t, 2)
	b := &countingBatch{logs: logs}
	l := newCallLog(b, nil)
	const n = callLogBatch + 36
	for i := range n {
		l.write(testLine(i))
	}
	l.start()
	l.close()
	if fmt.Sprint(b.sizes) != fmt.Sprint([]int{callLogBatch, n - callLogBatch}) {
		t.Errorf("batches of %v lines, want [%d %d]", b.sizes, callLogBatch, n-callLogBatch)
	}
	out := logs.String()
	last := -1
	for i := range n {
		at := strings.Index(out, fmt.Sprintf(`method="/m%d"`, i))
		if at < last {
			t.Fatalf("line %d missing or out of order", i)
		}
		last = at
	}
}

// TestCallTextIsKlogsLine: the call log's own formatting of a line is the
// line klog writes for it (klog's text logger, as the daemon sets it up on
// stderr), byte for byte but for the header's time and file:line; a value
// with a line break is left to klog.
func TestCallTextIsKlogsLine(t *testing.T) {
	var klogOut bytes.Buffer
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(&klogOut), textlogger.Verbosity(2)))
	line := callLine{level: 2, endpoint: "csi-proxy-filesystem-v1", method: "/v1.Filesystem/PathExists",
		caller: `pid 42 uid 0 gid 0 container "c1" pod default/a-b "quoted\"and\\slash"`, code: codes.PermissionDenied,
		duration: 163619 * time.Nanosecond}
	logger.V(2).Info("call", "endpoint", line.endpoint, "method", line.method, "caller", line.caller, "code", line.code, "duration", line.duration)

	var ours bytes.Buffer
	now := time.Date(2026, 12, 2, 9, 4, 3, 409768123, time.Local)
	if !newCallText(&ours).write(line, now) {
		t.Fatal("a one-line call left to klog")
	}
	// Lmmdd hh:mm:ss.uuuuuu, the PID in 7 columns, file:line, "] ".
	header := regexp.MustCompile(`^I\d{4} \d\d:\d\d:\d\d\.\d{6} [ \d]{7} [a-z_]+\.go:\d+\] `)
	want, got := klogOut.String(), ours.String()
	if !header.MatchString(want) || !header.MatchString(got) {
		t.Fatalf("headers:\nklog: %q\nours: %q", want, got)
	}
	if !strings.HasPrefix(got, fmt.Sprintf("I1202 09:04:03.409768 %7d calltext.go:", os.Getpid())) {
		t.Errorf("our header %q, want the time given, microseconds, and the PID right-aligned", got)
	}
	if header.ReplaceAllString(got, "") != header.ReplaceAllString(want, "") {
		t.Errorf("line after the header:\nklog: %q\nours: %q", header.ReplaceAllString(want, ""), header.ReplaceAllString(got, ""))
	}

	// The date and time up to the second are kept for a second's lines:
	// a line of the next second has its own.
	var later bytes.Buffer
	text := newCallText(&later)
	for _, at := range []time.Time{now, now.Add(200 * time.Millisecond), now.Add(time.Second)} {
		text.write(line, at)
	}
	stamps := regexp.MustCompile(`(?m)^I1202 (\d\d:\d\d:\d\d\.\d{6}) `).FindAllStringSubmatch(later.String(), -1)
	if len(stamps) != 3 || stamps[0][1] != "09:04:03.409768" || stamps[1][1] != "09:04:03.609768" || stamps[2][1] != "09:04:04.409768" {
		t.Errorf("times of three lines, the last a second later: %q", stamps)
	}

	multi := line
	multi.caller = "two\nlines"
	if newCallText(&ours).write(multi, now) {
		t.Error("a value with a line break formatted by the call log, want it left to klog's block format")
	}
}
