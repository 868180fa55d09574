package server

import (
	"io"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"k8s.io/klog/v2"
)

// callLogBatch is how many queued lines the call log's writer writes in
// one batch at the most (LogBatch), so that a steady stream of calls
// still sees its lines written.
const callLogBatch = 256

// callLogLinger is how long the writer lets lines gather after the first
// of a batch arrives, when it writes batches: the lines of calls ending
// meanwhile join the same write, and the writer is woken once per batch
// instead of once per call. A line appears that much later, at most.
const callLogLinger = 2 * time.Millisecond

// LogBatch groups log lines into one write (logbatch.Writer): Hold opens
// a batch, Release writes it. The call log holds one open while it writes
// the lines it found queued together.
type LogBatch interface {
	Hold()
	Release()
}

// callLogQueue is how many successful calls' lines may wait for the call
// log's writer. Past it a call writes its own line, so a line is never
// dropped, only written later than its call ended.
const callLogQueue = 1024

// callLine is the log line of one successful call (callLogger).
type callLine struct {
	level            klog.Level
	endpoint, method string
	caller           string
	code             codes.Code
	duration         time.Duration
}

func (l callLine) write() {
	klog.V(l.level).InfoS("call", "endpoint", l.endpoint, "method", l.method, "caller", l.caller, "code", l.code, "duration", l.duration)
}

// callLog writes the lines of successful calls (-v=2, the shipped
// verbosity) from one goroutine instead of on each call's way back to its
// caller. klog formats a line and writes it with write(2) while holding
// its lock: 12% of the daemon's CPU and three quarters of its lock waiting
// with 16 calls at once in the shipped configuration (docs/benchmarks.md),
// on the path of every answer. Failed calls, panics and payloads (-v=5)
// are still logged by the call itself. Lines keep the order calls ended
// in; klog stamps each with the time it is written, microseconds after
// the call, whose duration the line carries. Close writes what is queued.
//
// A call appends its line to a queue under a mutex and wakes the writer
// only when the queue was empty; the writer takes the whole queue at
// once, instead of receiving line by line on a channel whose lock each
// call's send would share with it.
//
// With a LogBatch (Config.LogBatch, the daemon's klog output on stderr),
// the lines that gathered within callLogLinger of a batch's first are
// written with one write(2).
type callLog struct {
	mu      sync.Mutex
	started bool
	closed  bool
	pending []callLine // queued, oldest first; at most callLogQueue
	spare   []callLine // the writer's last batch, its array reused (writer only)

	wake  chan struct{} // one token: a line was queued into an empty queue
	stop  chan struct{} // closed by close
	done  chan struct{} // closed when the writer has written all and ended
	batch LogBatch      // nil: each line is its own write
	text  *callText     // nil: klog formats and writes every line
}

// newCallLog returns a call log writing through klog, in batches when
// batch is not nil; with text (where klog writes its text format, with
// default header flags) it formats the lines itself (callText).
func newCallLog(batch LogBatch, text io.Writer) *callLog {
	l := &callLog{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), batch: batch}
	if text != nil {
		l.text = newCallText(text)
	}
	return l
}

// writeLine writes one line, formatted by callText where it can.
func (l *callLog) writeLine(line callLine) {
	if l.text != nil && l.text.write(line, time.Now()) {
		return
	}
	line.write()
}

// start runs the writer (Server.Start); until then lines queue.
func (l *callLog) start() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started || l.closed {
		return
	}
	l.started = true
	go l.run()
}

// run is the writer: woken by the first line of a batch, it lets lines
// gather for callLogLinger (with a LogBatch) and writes the queue.
func (l *callLog) run() {
	defer close(l.done)
	for {
		select {
		case <-l.wake:
		case <-l.stop:
			l.drain()
			return
		}
		if l.batch != nil {
			t := time.NewTimer(callLogLinger)
			select {
			case <-t.C:
			case <-l.stop:
				t.Stop()
			}
		}
		l.drain()
	}
}

// drain writes every queued line, in order, in batches of at most
// callLogBatch lines (each one write with a LogBatch), until the queue
// is empty.
func (l *callLog) drain() {
	for {
		l.mu.Lock()
		lines := l.pending
		l.pending = l.spare[:0]
		l.mu.Unlock()
		if len(lines) == 0 {
			l.spare = lines
			return
		}
		for rest := lines; len(rest) > 0; {
			n := min(len(rest), callLogBatch)
			l.writeBatch(rest[:n])
			rest = rest[n:]
		}
		l.spare = lines[:0] // all written: its array takes the next batch
	}
}

// writeBatch writes lines as one batch.
func (l *callLog) writeBatch(lines []callLine) {
	if l.batch != nil {
		l.batch.Hold()
		defer l.batch.Release()
	}
	for i := range lines {
		l.writeLine(lines[i])
		lines[i] = callLine{} // written: keep no strings alive
	}
}

// write queues line, or writes it at once when the queue is full or the
// log closed.
func (l *callLog) write(line callLine) {
	l.mu.Lock()
	if l.closed || len(l.pending) >= callLogQueue {
		l.mu.Unlock()
		l.writeLine(line)
		return
	}
	first := len(l.pending) == 0
	l.pending = append(l.pending, line)
	l.mu.Unlock()
	if first {
		select {
		case l.wake <- struct{}{}:
		default: // the writer is already woken
		}
	}
}

// close writes the queued lines and stops the writer; later lines are
// written by their calls. It may be called more than once.
func (l *callLog) close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	started := l.started
	l.mu.Unlock()
	if !started {
		l.drain() // queued before a start that never came
		return
	}
	close(l.stop)
	<-l.done
}
