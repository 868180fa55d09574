package server

import (
	"net"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
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

// rawListener returns, for a Unix listener (or one that embeds it, as
// the transport's does), a duplicate of its listening socket as a file
// the runtime's poller watches, and that file's RawConn, for acceptRaw:
// its Read waits until a connection is queued without taking one, which
// net's own RawConn of a listener cannot do (its Read is EINVAL). nil for
// any other listener, or when the descriptor cannot be duplicated (the
// listener then accepts through net's Accept alone). The file must be
// closed with the listener: while it is open the socket still listens.
func rawListener(l net.Listener) (*os.File, syscall.RawConn) {
	sc, ok := l.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok || l.Addr().Network() != "unix" {
		return nil, nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, nil
	}
	dup, derr := -1, error(nil)
	if err := raw.Control(func(fd uintptr) { dup, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil || derr != nil {
		return nil, nil
	}
	// The duplicate shares the open file and so its O_NONBLOCK, which
	// makes os.NewFile register it with the poller. A blocking one (not
	// net's) could not be waited on: acceptRaw would take the poller's
	// refusal for the listener's end, so net's Accept serves it instead.
	if fl, err := unix.FcntlInt(uintptr(dup), unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK == 0 {
		_ = unix.Close(dup) // never used
		return nil, nil
	}
	f := os.NewFile(uintptr(dup), "listener")
	fraw, err := f.SyscallConn()
	if err != nil {
		_ = f.Close() // never used; closing a descriptor of our own cannot fail in a way that matters
		return nil, nil
	}
	return f, fraw
}

// acceptRaw is Accept for a Unix listener with bounds. It takes each
// queued connection with accept4, reads its user (SO_PEERCRED) and, when
// the bounds refuse it, closes the bare descriptor: a refused connection
// is never registered with the runtime's poller nor given a finalizer or
// addresses, and only an admitted one becomes a net.Conn (FileConn). With
// nothing queued it waits for the socket to be readable (rawListener).
// Issue 23: it used to wait in net's Accept, which took the next
// connection through net's path; under a storm of connections arriving
// one at a time, that was nearly every one of them.
func (l *trackingListener) acceptRaw() (net.Conn, error) {
	for {
		var nfd int
		var aerr error
		if err := l.raw.Read(func(fd uintptr) bool {
			// Blocking, so that os.NewFile below does not register the
			// descriptor with the poller; FileConn's duplicate is made
			// non-blocking (the flag is the open file's, shared).
			nfd, _, aerr = unix.Accept4(int(fd), unix.SOCK_CLOEXEC)
			return aerr != unix.EAGAIN
		}); err != nil {
			// The file was closed: the listener is.
			return nil, &net.OpError{Op: "accept", Net: "unix", Addr: l.Addr(), Err: net.ErrClosed}
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
