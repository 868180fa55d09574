//go:build linux

package identity

import (
	"errors"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// osProcess is a pidfd, watched by Go's network poller where it can be.
//
// A pidfd becomes readable when its process exits. Polling it on every
// call cost a system call per call (7% of the daemon's CPU with 16
// drivers calling the shipped configuration, docs/benchmarks.md); instead
// one goroutine per connection waits for that readiness in the runtime's
// poller (epoll) and marks the process gone, and a call reads the mark.
// The mark follows the exit by the time the runtime takes to deliver a
// poller event (microseconds on an idle daemon, up to the scheduler's
// poll interval, about 10 ms, on a saturated one): a call that arrives on
// a handed-on connection within that time still runs as the caller that
// connected. That is no weaker than what a live caller can do anyway by
// relaying calls for another process; what the check rules out is a
// connection that outlives its process for good (docs/security.md).
// Where the poller cannot take the pidfd, every call polls it, as before.
type osProcess struct {
	fd    int
	file  *os.File     // owns fd when the poller watches it; nil otherwise
	state atomic.Int32 // watchOff, watchAlive or watchExited
}

// The states of a watched pidfd.
const (
	// watchOff: no watcher (not started, not pollable, or stopped by
	// close): exited polls.
	watchOff int32 = iota
	// watchAlive: the watcher waits in the poller; the process runs.
	watchAlive
	// watchExited: the watcher saw the pidfd readable: the process
	// has exited.
	watchExited
)

// newProcess takes ownership of pidfd and starts watching it.
func newProcess(pidfd int) *process {
	p := &process{h: osProcess{fd: pidfd}}
	p.h.watch()
	return p
}

// watch hands the pidfd to the runtime's poller and starts the goroutine
// that waits for the exit. It leaves the state watchOff when the poller
// cannot take it.
func (p *osProcess) watch() {
	if err := unix.SetNonblock(p.fd, true); err != nil {
		return
	}
	f := os.NewFile(uintptr(p.fd), "pidfd")
	// A descriptor the poller did not take has no deadlines: that is the
	// one way os.File says whether waiting on it would block a thread.
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		p.file = f // still owns the descriptor; exited polls it
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		p.file = f
		return
	}
	p.file = f
	p.state.Store(watchAlive)
	go func() {
		err := rc.Read(func(fd uintptr) bool {
			exited, perr := pidfdExited(int(fd))
			if perr != nil {
				p.state.Store(watchOff) // let the calls poll and report it
				return true
			}
			if exited {
				p.state.Store(watchExited)
			}
			return exited
		})
		if err != nil { // closed with the connection, or the poller failed
			p.state.CompareAndSwap(watchAlive, watchOff)
		}
	}()
}

// known reports what the watcher knows without a system call: ok is false
// when no watcher runs and exited must poll.
func (p *osProcess) known() (exited, ok bool) {
	switch p.state.Load() {
	case watchAlive:
		return false, true
	case watchExited:
		return true, true
	}
	return false, false
}

// exited polls the pidfd. Polling needs no permission over the process,
// unlike pidfd_send_signal(pidfd, 0), which fails with EPERM for a
// process of another user unless the daemon holds CAP_KILL (the systemd
// unit does not).
func (p *osProcess) exited() (bool, error) {
	if p.file != nil {
		rc, err := p.file.SyscallConn()
		if err != nil {
			return false, err
		}
		var exited bool
		var perr error
		if err := rc.Control(func(fd uintptr) { exited, perr = pidfdExited(int(fd)) }); err != nil {
			return false, err
		}
		return exited, perr
	}
	return pidfdExited(p.fd)
}

// close releases the pidfd; a watcher waiting on it returns.
func (p *osProcess) close() {
	p.state.Store(watchOff)
	if p.file != nil {
		_ = p.file.Close() // our own descriptor; nothing to report
		return
	}
	_ = unix.Close(p.fd) // our own descriptor; nothing to report
}

// pidfdExited tells whether the process a pidfd refers to has exited.
func pidfdExited(fd int) (bool, error) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return false, err
		}
		return n > 0 && fds[0].Revents&(unix.POLLIN|unix.POLLHUP) != 0, nil
	}
}
