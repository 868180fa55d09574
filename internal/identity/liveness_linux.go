//go:build linux

package identity

import (
	"errors"

	"golang.org/x/sys/unix"
)

// osProcess is a pidfd.
type osProcess struct{ fd int }

// exited polls the pidfd: it becomes readable when its process exits.
// Polling needs no permission over the process, unlike
// pidfd_send_signal(pidfd, 0), which fails with EPERM for a process of
// another user unless the daemon holds CAP_KILL (the systemd unit does
// not).
func (p osProcess) exited() (bool, error) { return pidfdExited(p.fd) }

func (p osProcess) close() { _ = unix.Close(p.fd) } // our own descriptor; nothing to report

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
