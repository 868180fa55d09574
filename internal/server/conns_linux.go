package server

import (
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// peerUID returns the Unix user of the process that connected c, from the
// kernel (SO_PEERCRED), for the per-user connection bound: cheap, and
// known before any handshake.
func peerUID(c net.Conn) (string, bool) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return "", false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return "", false
	}
	var uid string
	var known bool
	if err := raw.Control(func(fd uintptr) { uid, known = fdPeerUID(int(fd)) }); err != nil {
		return "", false
	}
	return uid, known
}

// fdPeerUID is peerUID of a connected socket's descriptor.
func fdPeerUID(fd int) (string, bool) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return "", false
	}
	return strconv.FormatUint(uint64(cred.Uid), 10), true
}

// rawSocket is a listening socket a bounded Unix listener took over
// (rawListener). Accept takes connections from fd with accept4, waiting
// in the kernel on a thread of its own, and closes the ones over the
// bounds as bare descriptors, so a caller opening connections as fast as
// it can costs the daemon two system calls each, not a poller
// registration, a finalizer, an address lookup or a wake-up of the
// runtime's threads (acceptRaw).
type rawSocket struct {
	fd int // -1: none
	// mu guards the end of fd: Close shuts the socket down, which ends an
	// accept4 that waits, and the last of Close and the Accepts running
	// closes it (closeRaw, leaveRaw).
	mu        sync.Mutex
	shut      atomic.Bool // Close has shut fd down
	accepting int         // Accepts using fd
	closed    bool        // fd is closed
	// acceptTID is the thread acceptRaw runs on, locked to the goroutine
	// that accepts and at the lowest priority (lowerAcceptPriority).
	acceptTID atomic.Int32
}

// rawListener takes the listening socket over from l when l can hand it
// over (the transport's Unix listener: DetachSocket) and returns its
// descriptor, blocking, for acceptRaw; -1 for any other listener, or when
// the hand-over fails (l then accepts through net's Accept alone). The
// descriptor must be closed with the listener (closeRaw): while it is
// open the socket still listens.
func rawListener(l net.Listener) int {
	d, ok := l.(interface{ DetachSocket() (int, error) })
	if !ok {
		return -1
	}
	fd, err := d.DetachSocket()
	if err != nil {
		klog.V(2).InfoS("Accepting through the runtime's poller: the listening socket could not be handed over", "address", l.Addr(), "err", err)
		return -1
	}
	return fd
}

// acceptRaw is Accept for a Unix listener with bounds. It waits for the
// next connection in accept4 itself, on its own thread at the lowest
// priority (lowerAcceptPriority), reads the connection's user
// (SO_PEERCRED) and, when the bounds refuse it, closes the bare
// descriptor: a refused connection is never registered with the
// runtime's poller nor given a finalizer or addresses, and only an
// admitted one becomes a net.Conn (FileConn).
//
// Issue 23: it used to wait in net's Accept, which took the next
// connection through net's path, and then on the socket through the
// runtime's poller, which woke one of the runtime's threads for every
// connection queued. Under a storm both were the daemon's work at the
// priority of serving calls.
func (l *trackingListener) acceptRaw() (net.Conn, error) {
	l.lowerAcceptPriority()
	if !l.enterRaw() {
		return nil, l.acceptClosed()
	}
	defer l.leaveRaw()
	for {
		// Blocking: the listening socket is (DetachSocket), and so is the
		// accepted one, so that os.NewFile below does not register it
		// with the poller; FileConn's duplicate is made non-blocking (the
		// flag is the open file's, shared).
		nfd, _, aerr := unix.Accept4(l.raw.fd, unix.SOCK_CLOEXEC)
		if l.raw.shut.Load() {
			// Close shut the socket down: accept4 failed (EINVAL) or took
			// a connection that was queued; it is not served.
			if aerr == nil {
				_ = unix.Close(nfd) // the client sees the connection end
			}
			return nil, l.acceptClosed()
		}
		switch aerr {
		case nil:
		case unix.ECONNABORTED, unix.EINTR:
			continue // the connection went away in the queue, as net's Accept skips it
		default:
			// As net's Accept: EMFILE and ENFILE are temporary, and
			// gRPC's Serve backs off and accepts again; anything else
			// (ENOBUFS, ENOMEM) ends Serve.
			return nil, &net.OpError{Op: "accept", Net: "unix", Addr: l.Addr(), Err: os.NewSyscallError("accept4", aerr)}
		}
		key := ""
		if uid, ok := fdPeerUID(nfd); ok {
			key = uidKey(uid)
		}
		if !l.admit(key) {
			_ = unix.Close(nfd) // refused; the client sees the connection end
			continue
		}
		f := os.NewFile(uintptr(nfd), "")
		c, err := net.FileConn(f)
		_ = f.Close() // FileConn holds a duplicate
		if err != nil {
			// Out of descriptors for the duplicate (the accepted one was
			// the last): this connection is lost, its client sees it
			// end. Said to gRPC's Serve as a temporary accept error, so
			// that it backs off instead of accepting the next one into
			// the descriptor just freed and losing it the same way.
			l.limits.conns.release(key)
			return nil, &net.OpError{Op: "accept", Net: "unix", Addr: l.Addr(), Err: droppedConn{err}}
		}
		return l.track(c, key)
	}
}

// acceptClosed is Accept's error once the listener is closed: gRPC's
// Serve takes net.ErrClosed as its end.
func (l *trackingListener) acceptClosed() error {
	return &net.OpError{Op: "accept", Net: "unix", Addr: l.Addr(), Err: net.ErrClosed}
}

// enterRaw counts an Accept that uses raw.fd, unless Close shut it down.
func (l *trackingListener) enterRaw() bool {
	l.raw.mu.Lock()
	defer l.raw.mu.Unlock()
	if l.raw.shut.Load() {
		return false
	}
	l.raw.accepting++
	return true
}

// leaveRaw ends an Accept's use of raw.fd, closing it when Close has shut
// it down and no other Accept uses it.
func (l *trackingListener) leaveRaw() {
	l.raw.mu.Lock()
	defer l.raw.mu.Unlock()
	l.raw.accepting--
	if l.raw.shut.Load() && l.raw.accepting == 0 && !l.raw.closed {
		l.raw.closed = true
		_ = unix.Close(l.raw.fd) // shut down already; nothing to report
	}
}

// closeRaw shuts raw.fd down, which refuses new connections and ends an
// accept4 that waits (EINVAL), and closes it unless an Accept still
// uses it (leaveRaw closes it then): closed under a running accept4, its
// number could be reused by the time that loops. A second call does
// nothing.
func (l *trackingListener) closeRaw() {
	l.raw.mu.Lock()
	defer l.raw.mu.Unlock()
	if l.raw.shut.Swap(true) {
		return
	}
	_ = unix.Shutdown(l.raw.fd, unix.SHUT_RDWR) // fails only on a descriptor that is not a socket
	if l.raw.accepting == 0 {
		l.raw.closed = true
		_ = unix.Close(l.raw.fd) // shut down already; nothing to report
	}
}

// droppedConn is why an accepted connection could not be taken over
// (FileConn failed: in practice EMFILE or ENFILE). It is temporary
// whatever the cause, so that gRPC's Serve backs off and goes on serving
// the others rather than ending on one connection.
type droppedConn struct{ err error }

// Error says the connection was dropped, and why.
func (d droppedConn) Error() string { return "connection dropped: " + d.err.Error() }

// Unwrap returns FileConn's error.
func (d droppedConn) Unwrap() error { return d.err }

// Temporary is true: see droppedConn (net.OpError asks it).
func (d droppedConn) Temporary() bool { return true }

// acceptNice is the nice value of the threads that accept connections.
const acceptNice = 19

// lowerAcceptPriority locks the goroutine that accepts for l (gRPC's
// Serve loop) to its thread and gives that thread the lowest priority
// (nice 19; on Linux the nice value is a thread's own, setpriority(2)).
// Issue 23: a caller opening connections as fast as it can makes the
// daemon accept and refuse each one, work done for a caller it will not
// serve; at the priority of the threads serving calls it took their CPU,
// and the others' calls waited (their p99 4.4-6.3x of the same calls
// with the storm stopped, seven runs; 2.2-3.4x with this). At the lowest
// priority the refusals get only the CPU nothing else wants; the queue
// of the listening socket fills and the storm's connect calls wait in
// the kernel instead. Established connections are served on other
// threads at their priority; a new connection may wait longer in the
// queue behind a storm's, which is the storm's cost falling on the
// accepting, not the serving.
//
// Once per goroutine: a later call from the same goroutine is on the
// same thread (locked), which it recognises by the thread's ID. The
// goroutine stays locked for its life, so the thread ends with it
// (Serve's goroutine ends when the endpoint stops; were it the main
// thread, the runtime parks that for good instead) and never runs other
// goroutines at this priority. If the priority cannot be set (a seccomp
// profile refusing setpriority), accepting goes on at the usual one.
func (l *trackingListener) lowerAcceptPriority() {
	tid := unix.Gettid()
	if int(l.raw.acceptTID.Load()) == tid {
		return
	}
	runtime.LockOSThread()
	if err := unix.Setpriority(unix.PRIO_PROCESS, tid, acceptNice); err != nil {
		klog.V(2).InfoS("Could not lower the accepting thread's priority; it accepts at the usual one", "err", err)
	}
	l.raw.acceptTID.Store(int32(tid))
}
