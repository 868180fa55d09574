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

// peerKernel is what identify asks the kernel about a connection and its
// peer. Tests replace it (withKernel) to simulate each answer a kernel
// may give, which a test cannot otherwise provoke on the kernel it runs on.
type peerKernel struct {
	// ucred reads SO_PEERCRED.
	ucred func(fd int) (*unix.Ucred, error)
	// peerPidfd reads SO_PEERPIDFD: a pidfd of the peer, which the
	// caller then owns.
	peerPidfd func(fd int) (int, error)
	// pidfdExited polls a pidfd.
	pidfdExited func(fd int) (bool, error)
	// bootTicks reads CLOCK_BOOTTIME in clock ticks, the clock and unit
	// of /proc/<pid>/stat's start time.
	bootTicks func() (uint64, error)
}

// kernel is the running kernel.
var kernel = peerKernel{
	ucred: func(fd int) (*unix.Ucred, error) {
		return unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	},
	peerPidfd: func(fd int) (int, error) {
		return unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PEERPIDFD)
	},
	pidfdExited: pidfdExited,
	bootTicks:   bootTicks,
}

// bootTicks returns the time since boot (CLOCK_BOOTTIME, which counts
// suspend as the process start time does) in clock ticks.
func bootTicks() (uint64, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0, fmt.Errorf("clock_gettime(CLOCK_BOOTTIME): %w", err)
	}
	return uint64(ts.Nano()) / uint64(time.Second/clockTicks), nil
}

// oldKernel tells whether an SO_PEERPIDFD error means a kernel without
// the option (before 6.5), the only case where identifying by PID alone
// is the best the kernel offers. Every other error is an answer about the
// peer: kernels 6.5 to 6.15 answer EINVAL, later ones ESRCH or ENODATA,
// once the process that connected was reaped, and then its PID may
// already be another process's.
func oldKernel(err error) bool {
	return errors.Is(err, unix.ENOPROTOOPT) || errors.Is(err, unix.EOPNOTSUPP)
}

// identify reads the peer credentials of a Unix socket connection and then
// the peer's process in /proc. The pidfd of the peer (SO_PEERPIDFD, Linux
// 6.5+) is returned for the connection to keep; nil without one.
//
// A process that started after the connection was accepted cannot be the
// one that connected: its /proc directory is not read as the caller's,
// on every kernel. accepted is the boot clock read when the handshake
// began (markAccepted), after the accept, so it is a bound the connecting
// process always meets.
func identify(conn net.Conn, o Options, accepted acceptMark) (Caller, *process) {
	return identifyWith(kernel, conn, o, accepted)
}

// acceptMark is the boot clock read when the handshake began, before it
// waited for an identification slot: the connection was accepted before,
// so a process started later is not its peer.
type acceptMark struct {
	ticks uint64
	err   error
}

func markAccepted() acceptMark { return markWith(kernel) }

func markWith(k peerKernel) acceptMark {
	t, err := k.bootTicks()
	return acceptMark{ticks: t, err: err}
}

func identifyWith(k peerKernel, conn net.Conn, o Options, mark acceptMark) (Caller, *process) {
	accepted, tickErr := mark.ticks, mark.err
	sc, ok := unwrap(conn).(syscall.Conn)
	if !ok {
		return Caller{Incomplete: fmt.Sprintf("a %T is not a Unix socket", unwrap(conn))}, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return Caller{Incomplete: "no socket handle: " + err.Error()}, nil
	}
	var cred *unix.Ucred
	var credErr, pidfdErr error
	pidfd := -1
	err = rc.Control(func(fd uintptr) {
		cred, credErr = k.ucred(int(fd))
		if credErr == nil {
			// A pidfd of the peer (Linux 6.5+) refers to the very
			// process that connected, whatever happens to its PID.
			pidfd, pidfdErr = k.peerPidfd(int(fd))
			if pidfdErr != nil {
				pidfd = -1
			}
		}
	})
	if err == nil {
		err = credErr
	}
	if err != nil {
		if pidfd >= 0 {
			_ = unix.Close(pidfd) // our own descriptor; nothing to report
		}
		return Caller{Incomplete: "no peer credentials: " + err.Error()}, nil
	}
	var proc *process
	if pidfd >= 0 {
		proc = newProcess(pidfd)
	}
	c := Caller{PID: int(cred.Pid), HasUnixIDs: true, UID: cred.Uid, GID: cred.Gid}
	if c.PID <= 0 {
		c.PID = 0
		c.Incomplete = "the caller's process is outside the daemon's PID namespace (run the daemon with the host PID namespace: hostPID: true)"
		return c, proc
	}
	if pidfdErr != nil && !oldKernel(pidfdErr) {
		// The kernel says the process that connected is gone: its PID
		// may name another process now, so /proc is not read at all.
		c.Incomplete = "the process that connected has exited (SO_PEERPIDFD: " + pidfdErr.Error() + "); its PID may belong to another process now"
		return c, proc
	}
	if tickErr != nil {
		c.Incomplete = "cannot tell when the connection was accepted: " + tickErr.Error()
		return c, proc
	}
	p, err := ReadProcess(o.procRoot(), c.PID, c.UID, o.CgroupRoot)
	if p.StartTime > accepted {
		// Whatever else was read, it was another process's.
		err = fmt.Errorf("process %d started after the connection was accepted: %w", c.PID, ErrPIDReused)
	}
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
		exited, perr := k.pidfdExited(pidfd)
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
