package server

import (
	"errors"
	"net"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"

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

// acceptOne waits until a connection is queued and takes it: admitted,
// it is returned tracked; refused by the bounds, its descriptor is
// closed and refused is true. errStormQuiet when rawFile's read deadline
// (set only by stormAcceptor) passed first.
func (l *trackingListener) acceptOne() (c net.Conn, refused bool, err error) {
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
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, false, errStormQuiet
			}
			// The file was closed: the listener is.
			return nil, false, l.acceptErr(net.ErrClosed)
		}
		switch aerr {
		case nil:
		case unix.ECONNABORTED, unix.EINTR:
			continue // the connection went away in the queue, as net's Accept skips it
		default:
			// As net's Accept: EMFILE and ENFILE are temporary, and
			// gRPC's Serve backs off and accepts again; anything else
			// (ENOBUFS, ENOMEM) ends Serve.
			return nil, false, l.acceptErr(os.NewSyscallError("accept4", aerr))
		}
		key := ""
		if uid, ok := fdPeerUID(nfd); ok {
			key = uidKey(uid)
		}
		if !l.admit(key) {
			_ = unix.Close(nfd) // refused; the client sees the connection end
			return nil, true, nil
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
			return nil, false, l.acceptErr(droppedConn{err})
		}
		c, err = l.track(c, key)
		return c, false, err
	}
}

// errStormQuiet is acceptOne's answer when stormQuiet passed with no
// connection queued.
var errStormQuiet = errors.New("no connection within the storm's quiet time")

// stormNice is the nice value of the storm acceptor's thread.
const stormNice = 19

// stormAcceptor accepts for l while a storm is on: on a thread of its own
// at the lowest priority (nice 19; on Linux the nice value is a thread's
// own, setpriority(2)), handing what it admits to Accept through out,
// until stormQuiet passes without a refusal.
//
// Issue 23: a caller opening connections as fast as it can makes the
// daemon accept and refuse each one, work done for a caller it will not
// serve; at the priority of the threads serving calls it took their CPU,
// and the others' calls waited (their p99 4.4-6.3x of the same calls
// with the storm stopped, seven runs; 2.2-3.4x with the accepting thread
// at nice 19). At the lowest priority the refusals get only the CPU
// nothing else wants; the queue of the listening socket fills and the
// storm's connect calls wait in the kernel instead. Established
// connections are served on other threads at their priority. Only while
// a storm is refused: an accepting thread at nice 19 all the time made a
// busy node slow every caller's new connections (a soak test dialing a
// connection per call got none of 800 through in 20 ms each with the
// two cores busy, against 27-49 at the usual priority).
//
// The goroutine stays locked to its thread, so the thread ends with it
// and never runs another goroutine at that priority (raising a thread's
// priority again would need CAP_SYS_NICE). If the priority cannot be
// set (a seccomp profile refusing setpriority), it accepts at the usual
// one.
func (l *trackingListener) stormAcceptor(out chan<- acceptResult) {
	runtime.LockOSThread() // never unlocked: see above
	if err := unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), stormNice); err != nil {
		klog.V(2).InfoS("Could not lower the storm acceptor's priority; it accepts at the usual one", "err", err)
	}
	lastRefusal := time.Now()
	for {
		// An error here is a closed file, which acceptOne reports.
		_ = l.rawFile.SetReadDeadline(lastRefusal.Add(l.stormQuiet))
		c, refused, err := l.acceptOne()
		switch {
		case refused:
			lastRefusal = time.Now()
		case errors.Is(err, errStormQuiet):
			_ = l.rawFile.SetReadDeadline(time.Time{}) // for Accept's own waits
			l.hand(out, acceptResult{over: true})
			return
		case err != nil:
			// The listener closed, or an accept error for Serve to judge
			// (it may back off and call Accept again, which then accepts
			// at the usual priority).
			_ = l.rawFile.SetReadDeadline(time.Time{})
			l.hand(out, acceptResult{err: err, over: true})
			return
		default:
			if !l.hand(out, acceptResult{conn: c}) {
				// Closed, and no Accept came for it: Close would have
				// closed it as idle anyway.
				_ = c.Close()
				return
			}
		}
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
