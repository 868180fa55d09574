package hostdaemon

import (
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/syncbuf"
)

// Process is a daemon started by Start.
type Process struct {
	// Cmd is the started command; Cmd.Process.Pid is the daemon's PID.
	Cmd *exec.Cmd
	// Exited is closed once the daemon has exited and been reaped.
	Exited <-chan struct{}
	// Log is what the daemon has written to its stdout and stderr.
	Log *syncbuf.Buffer
	// name names the daemon in failures.
	name string
}

// Start starts cmd, named name in failures, with its output in Log and in
// a process group of its own: smbd, for one, signals its whole process
// group on shutdown, which would otherwise be the test binary's (and go
// test's, and the shell's). The caller registers the daemon's stop.
func Start(tb testing.TB, name string, cmd *exec.Cmd) *Process {
	tb.Helper()
	p := &Process{Cmd: cmd, Log: &syncbuf.Buffer{}, name: name}
	cmd.Stdout, cmd.Stderr = p.Log, p.Log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.Exited = exited
	return p
}

// WaitListening returns once 127.0.0.1:port accepts TCP connections. It
// fails the test at once if the daemon exits first, and after 5 s.
func (p *Process) WaitListening(tb testing.TB, port int) {
	tb.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			_ = c.Close() // a probe: that it connected is the answer
			return
		}
		select {
		case <-p.Exited:
			tb.Fatalf("%s exited before listening: %s", p.name, p.Log.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s is not listening on %s after 5 s: %s", p.name, addr, p.Log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// FreePort returns a TCP port that was free on 127.0.0.1 a moment ago: a
// port for a daemon to listen on, or one to find nothing listening on.
func FreePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = l.Close() }() // only its port was wanted
	return l.Addr().(*net.TCPAddr).Port
}
