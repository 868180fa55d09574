package identity

import (
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// ErrCallerExited refuses a call on a connection whose connecting process
// has exited: the connection was handed on (fd passing, fork and exit) to
// a process the daemon never identified, so the identity it carries no
// longer describes who calls.
var ErrCallerExited = fmt.Errorf("the process that opened this connection has exited, so the connection no longer identifies its caller; reconnect: %w", errdefs.ErrPermissionDenied)

// ErrLivenessUnknown reports a connection whose connecting process cannot
// be watched: the daemon has no handle on it (an unidentified caller, a
// Linux kernel older than 6.5 without SO_PEERPIDFD, an OS without
// identification).
var ErrLivenessUnknown = fmt.Errorf("the connecting process cannot be watched: %w", errdefs.ErrUnavailable)

// process is a handle on the process that opened a connection, taken when
// it connected: a pidfd on Linux, a process handle on Windows. Either
// refers to that very process whatever becomes of its PID. It lives as
// long as the connection and is closed with it.
//
// Where the OS lets the runtime wait for the exit (Linux: a pidfd in the
// network poller), a call reads what the watcher saw (known) and makes no
// system call. Otherwise every call asks the kernel (exited) while holding
// mu for reading: concurrent calls ask at once, and close waits for them,
// so no call polls a handle number closed and perhaps reused meanwhile.
// With a plain mutex the 16 calls of one busy connection queued behind
// each other's poll: a fifth of the daemon's lock waiting
// (docs/benchmarks.md).
type process struct {
	mu     sync.RWMutex
	closed bool
	h      osProcess
}

// exited tells whether the process has exited.
func (p *process) exited() (bool, error) {
	if p == nil {
		return false, ErrLivenessUnknown
	}
	if exited, ok := p.h.known(); ok {
		return exited, nil
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return false, fmt.Errorf("the connection is closed: %w", ErrLivenessUnknown)
	}
	return p.h.exited()
}

// close releases the handle; later calls to exited report it unknown.
func (p *process) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		p.h.close()
	}
}

// Exited tells whether the process that opened the connection has
// exited since. The error wraps ErrLivenessUnknown when the daemon holds
// no handle on it.
func (a AuthInfo) Exited() (bool, error) { return a.process.exited() }

// CheckAlive returns an error wrapping ErrCallerExited when the process
// that opened the connection has exited. A process the daemon cannot
// watch passes: the identity such a connection carries was never tied to
// a live process, and the policy decides on what it says
// (Caller.Incomplete). grpccreds.CheckAlive asks it of a call's
// connection.
func (a AuthInfo) CheckAlive() error {
	exited, err := a.Exited()
	switch {
	case errors.Is(err, ErrLivenessUnknown):
		return nil
	case err != nil:
		// A handle that cannot be polled is a handle gone wrong: fail
		// closed, the caller reconnects.
		return fmt.Errorf("cannot tell whether the process that opened this connection (pid %d) still runs: %w: %w", a.Caller.PID, err, errdefs.ErrUnavailable)
	case exited:
		return fmt.Errorf("pid %d: %w", a.Caller.PID, ErrCallerExited)
	}
	return nil
}

// identifiedConn is a connection with the handle on its connecting
// process, which it closes with itself.
type identifiedConn struct {
	net.Conn
	process *process
}

// Close closes the connection and the process handle.
func (c *identifiedConn) Close() error {
	c.process.close()
	return c.Conn.Close()
}

// NetConn returns the connection underneath, for unwrap.
func (c *identifiedConn) NetConn() net.Conn { return c.Conn }
