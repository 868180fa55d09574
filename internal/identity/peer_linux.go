//go:build linux

package identity

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

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
	var exe string
	if err == nil {
		// Before the liveness check below, which vouches for it too. It
		// needs ptrace read access to another user's process, which the
		// unit does not grant: then it stays unknown.
		exe, _ = os.Readlink(filepath.Join(o.procRoot(), strconv.Itoa(c.PID), "exe"))
	}
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
	c.Executable = exe
	c.StartTime = startTime(o.procRoot(), p.StartTime)
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

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's start time: 100
// on every Linux architecture (sysconf(_SC_CLK_TCK)).
const clockTicks = 100

// startTime converts a process start time in clock ticks after boot to
// wall time, with the boot time (btime) of <procRoot>/stat; zero when that
// cannot be read.
func startTime(procRoot string, ticks uint64) time.Time {
	b, err := os.ReadFile(filepath.Join(procRoot, "stat"))
	if err != nil {
		return time.Time{}
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			boot, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}
			}
			return time.Unix(boot, 0).Add(time.Duration(ticks) * time.Second / clockTicks)
		}
	}
	return time.Time{}
}
