//go:build linux

package identity

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// identify reads the peer credentials of a Unix socket connection and then
// the peer's process in /proc. The pidfd of the peer (SO_PEERPIDFD, Linux
// 6.5+) is returned for the connection to keep; nil without one.
func identify(conn net.Conn, o Options) (Caller, *process) {
	sc, ok := unwrap(conn).(syscall.Conn)
	if !ok {
		return Caller{Incomplete: fmt.Sprintf("a %T is not a Unix socket", unwrap(conn))}, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return Caller{Incomplete: "no socket handle: " + err.Error()}, nil
	}
	var cred *unix.Ucred
	var credErr error
	pidfd := -1
	err = rc.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if credErr == nil {
			// A pidfd of the peer (Linux 6.5+) refers to the very
			// process that connected, whatever happens to its PID.
			if n, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PEERPIDFD); err == nil {
				pidfd = n
			}
		}
	})
	if err == nil {
		err = credErr
	}
	if err != nil {
		return Caller{Incomplete: "no peer credentials: " + err.Error()}, nil
	}
	var proc *process
	if pidfd >= 0 {
		proc = &process{h: osProcess{fd: pidfd}}
	}
	c := Caller{PID: int(cred.Pid), HasUnixIDs: true, UID: cred.Uid, GID: cred.Gid}
	if c.PID <= 0 {
		c.PID = 0
		c.Incomplete = "the caller's process is outside the daemon's PID namespace (run the daemon with the host PID namespace: hostPID: true)"
		return c, proc
	}
	p, err := ReadProcess(o.procRoot(), c.PID, c.UID)
	if err == nil && proc != nil {
		// Alive now means it was alive throughout: its PID was never
		// free for another process, so /proc described it. The pidfd is
		// polled, which needs no permission; pidfd_send_signal(pidfd,
		// 0) fails with EPERM for another user's process without
		// CAP_KILL, which the systemd unit does not grant, and that
		// EPERM was once taken for an exit.
		exited, perr := pidfdExited(pidfd)
		switch {
		case perr != nil:
			// Without knowing it lived throughout, /proc may have
			// described another process: keep only the kernel's IDs.
			c.Incomplete = "cannot tell whether the process that connected still runs: " + perr.Error()
			return c, proc
		case exited:
			err = fmt.Errorf("the process that connected exited while it was being identified: %w", ErrPIDReused)
		}
	}
	switch {
	case errors.Is(err, ErrPIDReused):
		c.Incomplete = err.Error()
		return c, proc
	case err != nil && p.StartTime == 0:
		c.Incomplete = "cannot read the caller's process: " + err.Error()
		return c, proc
	}
	c.Groups = p.Groups
	c.ContainerID, c.PodUID, c.Runtime = p.Container.ID, p.Container.PodUID, p.Container.Runtime
	if err != nil {
		c.Incomplete = "cannot tell the caller's container: " + err.Error()
	}
	return c, proc
}

func (o Options) procRoot() string {
	if o.ProcRoot == "" {
		return "/proc"
	}
	return o.ProcRoot
}
