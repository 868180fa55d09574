//go:build linux

package identity

import (
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The fixture procfs in testdata/proc holds process 77 of uid 1000 in a
// pod's container, started 5000 clock ticks after boot.
const (
	fixturePID   = 77
	fixtureStart = 5000
)

// fakeKernel answers as a kernel would for a peer that is the fixture's
// process 77: SO_PEERCRED always works, SO_PEERPIDFD answers pidfdErr
// (or a pidfd when nil), and the connection was accepted at accepted
// ticks after boot.
func fakeKernel(t *testing.T, pidfdErr error, exited bool, accepted uint64) peerKernel {
	t.Helper()
	return peerKernel{
		ucred: func(int) (*unix.Ucred, error) {
			return &unix.Ucred{Pid: fixturePID, Uid: 1000, Gid: 1000}, nil
		},
		peerPidfd: func(int) (int, error) {
			if pidfdErr != nil {
				return -1, pidfdErr
			}
			// A descriptor of our own stands for the pidfd, so that
			// closing it with the connection closes nothing else.
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			return unix.Dup(int(r.Fd()))
		},
		pidfdExited: func(int) (bool, error) { return exited, nil },
		bootTicks:   func() (uint64, error) { return accepted, nil },
	}
}

func identifyFixture(t *testing.T, k peerKernel) Caller {
	t.Helper()
	c, p := identifyWith(k, pair(t), Options{ProcRoot: "testdata/proc"}, markWith(k))
	p.close()
	if c.PID != fixturePID || !c.HasUnixIDs || c.UID != 1000 {
		t.Errorf("kernel IDs lost: %+v", c)
	}
	return c
}

// Each answer a kernel gives to SO_PEERPIDFD: only "no such option" means
// a kernel too old to offer it, where /proc is the best there is; the
// others say the process that connected is gone, and then /proc/<pid>
// may describe whatever process took its PID.
func TestIdentifyPeerPidfdAnswers(t *testing.T) {
	for name, tc := range map[string]struct {
		err    error
		exited bool
		full   bool
	}{
		"ENOPROTOOPT (before 6.5)":  {err: unix.ENOPROTOOPT, full: true},
		"EOPNOTSUPP":                {err: unix.EOPNOTSUPP, full: true},
		"EINVAL (6.5-6.15, reaped)": {err: unix.EINVAL},
		"ESRCH (reaped)":            {err: unix.ESRCH},
		"ENODATA (reaped)":          {err: unix.ENODATA},
		"pidfd, alive":              {full: true},
		"pidfd, exited":             {exited: true},
	} {
		t.Run(name, func(t *testing.T) {
			c := identifyFixture(t, fakeKernel(t, tc.err, tc.exited, fixtureStart+100))
			if tc.full {
				if c.Incomplete != "" || c.ContainerID != cid || c.PodUID != pod || len(c.Groups) != 2 {
					t.Errorf("old kernel or live peer: %+v, want the fixture's container and groups", c)
				}
				return
			}
			if c.Incomplete == "" || c.ContainerID != "" || c.PodUID != "" || c.Groups != nil || !c.StartTime.IsZero() {
				t.Errorf("peer gone: %+v, want only the kernel's IDs and a reason", c)
			}
			if tc.err != nil && !strings.Contains(c.Incomplete, "has exited") {
				t.Errorf("reason %q does not say the process exited", c.Incomplete)
			}
		})
	}
}

// On every kernel, a process that started after the connection was
// accepted is not the one that connected: its PID was reused.
func TestIdentifyRefusesProcessYoungerThanConnection(t *testing.T) {
	for name, pidfdErr := range map[string]error{"old kernel": unix.ENOPROTOOPT, "pidfd": nil} {
		t.Run(name, func(t *testing.T) {
			c := identifyFixture(t, fakeKernel(t, pidfdErr, false, fixtureStart-1))
			if c.ContainerID != "" || c.PodUID != "" || c.Groups != nil || !strings.Contains(c.Incomplete, "started after the connection") {
				t.Errorf("process younger than the connection: %+v", c)
			}
			// Started in the very tick of the accept: the tick is
			// all procfs says, and it may have connected.
			c = identifyFixture(t, fakeKernel(t, pidfdErr, false, fixtureStart))
			if c.Incomplete != "" || c.ContainerID != cid {
				t.Errorf("process started in the accept's tick: %+v", c)
			}
		})
	}
}

// The clock the start time is compared with is the one procfs counts in.
func TestBootTicksMatchesProcfs(t *testing.T) {
	now, err := bootTicks()
	if err != nil {
		t.Fatal(err)
	}
	p, err := ReadProcess("/proc", os.Getpid(), uint32(os.Geteuid()), "")
	if err != nil && p.StartTime == 0 {
		t.Fatal(err)
	}
	if p.StartTime > now {
		t.Errorf("this process started at tick %d, after now (tick %d)", p.StartTime, now)
	}
	if now-p.StartTime > 3600*clockTicks {
		t.Errorf("this process started %d ticks ago, more than an hour", now-p.StartTime)
	}
	if errors.Is(err, ErrPIDReused) {
		t.Error(err)
	}
}

// The accept time is read when the handshake begins, before it waits for
// an identification slot: a flood that keeps the slots busy must not
// widen the window in which a process started after the accept passes.
func TestHandshakeMarksAcceptBeforeWaitingForSlot(t *testing.T) {
	c := NewCredentials(Options{MaxIdentifying: 1})
	release := make(chan struct{})
	marks := make(chan acceptMark, 2)
	c.identify = func(_ net.Conn, _ Options, m acceptMark) (Caller, *process) {
		marks <- m
		<-release
		return Caller{}, nil
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	done := make(chan error, 2)
	go func() { _, _, err := c.ServerHandshake(a); done <- err }()
	<-marks // the first holds the only slot
	go func() { _, _, err := c.ServerHandshake(b); done <- err }()
	time.Sleep(200 * time.Millisecond) // the second waits meanwhile
	waited, err := bootTicks()
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	second := <-marks
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if second.err != nil || second.ticks == 0 || second.ticks+10 > waited {
		t.Errorf("second handshake marked at tick %d (%v), want before it waited (tick %d was 200 ms in)", second.ticks, second.err, waited)
	}
}

// markedConn is a connection whose listener marked its accept.
type markedConn struct {
	net.Conn
	mark AcceptMark
}

func (c markedConn) AcceptMark() AcceptMark { return c.mark }
func (c markedConn) NetConn() net.Conn      { return c.Conn }

// A connection that waited before its handshake (the daemon paces each
// user's identifications) is identified against the accept its listener
// marked, however long it waited: the handshake uses the mark a layer of
// the connection exposes, found under further wrappers too (issue 23).
func TestHandshakeUsesListenersAcceptMark(t *testing.T) {
	c := NewCredentials(Options{})
	marks := make(chan acceptMark, 1)
	c.identify = func(_ net.Conn, _ Options, m acceptMark) (Caller, *process) {
		marks <- m
		return Caller{}, nil
	}
	early := MarkAccepted()
	time.Sleep(50 * time.Millisecond) // a tick is 10 ms
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	wrapped := &identifiedConn{Conn: markedConn{Conn: a, mark: early}} // a wrapper above the marked layer
	if _, _, err := c.ServerHandshake(wrapped); err != nil {
		t.Fatal(err)
	}
	if got := <-marks; got != early.m {
		t.Errorf("handshake marked tick %d, want the listener's mark, tick %d", got.ticks, early.m.ticks)
	}
	if _, _, err := c.ServerHandshake(b); err != nil {
		t.Fatal(err)
	}
	if got := <-marks; got.ticks <= early.m.ticks {
		t.Errorf("unmarked connection: tick %d, want the handshake's own mark, after %d", got.ticks, early.m.ticks)
	}
}
