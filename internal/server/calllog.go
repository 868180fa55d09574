package server

import (
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"k8s.io/klog/v2"
)

// callLogQueue is how many successful calls' lines may wait for the call
// log's writer. Past it a call writes its own line, so a line is never
// dropped, only written later than its call ended.
const callLogQueue = 1024

// callLine is the log line of one successful call (logCalls).
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
type callLog struct {
	mu      sync.RWMutex
	started bool
	closed  bool
	lines   chan callLine
	done    chan struct{}
}

func newCallLog() *callLog {
	return &callLog{lines: make(chan callLine, callLogQueue), done: make(chan struct{})}
}

// start runs the writer (Server.Start); until then lines queue.
func (l *callLog) start() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started || l.closed {
		return
	}
	l.started = true
	go func() {
		defer close(l.done)
		for line := range l.lines {
			line.write()
		}
	}()
}

// write queues line, or writes it at once when the queue is full or the
// log closed.
func (l *callLog) write(line callLine) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if !l.closed {
		select {
		case l.lines <- line:
			return
		default:
		}
	}
	line.write()
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
	close(l.lines)
	started := l.started
	l.mu.Unlock()
	if !started {
		for line := range l.lines { // queued before a start that never came
			line.write()
		}
		return
	}
	<-l.done
}
