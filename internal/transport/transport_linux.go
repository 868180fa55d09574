package transport

import "golang.org/x/sys/unix"

// DetachSocket hands the listening socket over to the caller, for an
// accept loop below the runtime's poller (internal/server's bounded
// accept): it returns a descriptor of the socket of the caller's own,
// blocking and close-on-exec, and closes the listener's descriptor, which
// takes the socket out of the runtime's poller. The socket keeps
// listening at its path until the caller closes the descriptor (and
// shutdown(2) on it ends an accept(2) that waits); the listener's Close
// then only removes the socket file, and its Accept fails.
//
// Why (issue 23): the poller watches a listening socket edge-triggered,
// so each connection queued woke one of the runtime's threads (as many
// epoll waits as connections accepted, 38,386 to 42,803 in 4 s of a
// connection storm, and 67,781 context switches) to find nothing it
// could do: the goroutine that accepts was not waiting. Blocked in
// accept(2) itself, only the accepting thread wakes.
func (l *unixListener) DetachSocket() (int, error) {
	raw, err := l.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd, derr := -1, error(nil)
	if err := raw.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, derr
	}
	// Unlinking on close is off (listen), so the socket file stays.
	l.detached.Store(true)
	if err := l.UnixListener.Close(); err != nil {
		_ = unix.Close(fd) // never handed over
		l.detached.Store(false)
		return -1, err
	}
	// O_NONBLOCK belongs to the open file, which only fd holds now.
	if err := unix.SetNonblock(fd, false); err != nil {
		_ = unix.Close(fd) // never handed over; the socket stops listening
		return -1, err
	}
	return fd, nil
}
