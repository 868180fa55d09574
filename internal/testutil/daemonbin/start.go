package daemonbin

import (
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/syncbuf"
)

// Options says how Start runs the daemon.
type Options struct {
	// Args are the daemon's arguments, without the program name.
	Args []string
	// Command, if not nil, builds the command that runs bin with Args,
	// for a test that runs the daemon as a deployment does: wrapped in
	// setpriv, or in namespaces of its own (SysProcAttr). Start sets its
	// environment and output.
	Command func(bin string, args []string) *exec.Cmd
	// Env is added to this process's environment.
	Env []string
	// CleanEnv makes Env the daemon's whole environment, for a test that
	// controls exactly what the daemon sees (its PATH, its locale).
	CleanEnv bool
	// Ready tells whether the daemon is ready; Start calls it every
	// PollInterval until it returns nil, the daemon exits or ReadyTimeout
	// passes. Nil means ready as soon as the process started.
	Ready func() error
	// ReadyTimeout bounds the wait for Ready (default 15 s).
	ReadyTimeout time.Duration
	// PollInterval is the time between Ready calls (default 20 ms).
	PollInterval time.Duration
	// Output, if not nil, is where the daemon's output goes (and
	// Process.Output), so Ready can read it: a daemon is often ready when
	// it has logged something.
	Output *syncbuf.Buffer
	// StderrOnly sends only the daemon's stderr to Output and discards
	// its stdout, for a test that parses the log lines.
	StderrOnly bool
	// AtEnd says how the end of the test ends a daemon still running;
	// the default is Checked.
	AtEnd End
	// LogFile, if not "", also gets the daemon's output, for a test that
	// reads the log as a file.
	LogFile string
	// LogFileOnly gives the daemon LogFile as its stdout and stderr, and
	// Output gets nothing: no pipe into the test process, whose copying
	// of every log line would take CPU from the test's own work (a
	// benchmark's client). On a node the log goes to journald or the
	// container runtime, never to the driver calling the daemon.
	LogFileOnly bool
	// StopTimeout is how long the daemon may take to exit after SIGTERM
	// at the end of the test before it is killed (default 15 s).
	StopTimeout time.Duration
}

// End is how the end of a test ends a daemon still running.
type End int

const (
	// Checked sends SIGTERM, as the kubelet and systemd stop the daemon,
	// and fails the test unless it exits 0 within StopTimeout.
	Checked End = iota
	// Unchecked sends SIGTERM and kills the daemon after StopTimeout,
	// without checking its exit: for a test that checks what it needs
	// while the daemon runs.
	Unchecked
	// Kill sends SIGKILL without checking the exit: for a test that
	// checks the exit itself (Stop) when it matters and leaves the
	// daemon in states that need not end cleanly otherwise.
	Kill
	// Leave does nothing: the caller ends the process itself (Stop,
	// WaitExit), for a harness that kills and restarts one daemon across
	// several processes and checks each end its own way.
	Leave
)

// Process is a daemon Start started.
type Process struct {
	Cmd *exec.Cmd
	// Output is its stdout and stderr, interleaved.
	Output *syncbuf.Buffer
	done   chan error // the exit, sent once and put back by whoever reads it
	// stopped is set by Stop: the test ended the daemon on purpose.
	stopped bool
}

// Start starts bin (normally Binary's or BinaryRace's) with opts and
// returns once opts.Ready says it is ready. If the process exits first,
// the test fails at once with its exit status and output, rather than
// waiting out ReadyTimeout or go test's own timeout. When the test ends,
// failed or not, the daemon gets SIGTERM and must exit 0 within
// StopTimeout (else it is killed and the test fails); its output is
// logged if the test failed.
func Start(tb testing.TB, bin string, opts Options) *Process {
	tb.Helper()
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 15 * time.Second
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 20 * time.Millisecond
	}
	if opts.StopTimeout == 0 {
		opts.StopTimeout = 15 * time.Second
	}
	if opts.Output == nil {
		opts.Output = &syncbuf.Buffer{}
	}
	if opts.Command == nil {
		opts.Command = func(bin string, args []string) *exec.Cmd { return exec.Command(bin, args...) }
	}
	p := &Process{Cmd: opts.Command(bin, opts.Args), Output: opts.Output, done: make(chan error, 1)}
	p.Cmd.Env = append(os.Environ(), opts.Env...)
	if opts.CleanEnv {
		p.Cmd.Env = append([]string(nil), opts.Env...)
	}
	if Race {
		// A race-enabled binary sleeps 1 s at exit by default.
		p.Cmd.Env = append(p.Cmd.Env, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
	var out io.Writer = p.Output
	if opts.LogFile != "" {
		f, err := os.Create(opts.LogFile)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = f.Close() }) // runs after the daemon is ended
		out = io.MultiWriter(p.Output, f)
		if opts.LogFileOnly {
			out = f // an *os.File: the daemon writes to it itself
		}
	}
	p.Cmd.Stdout, p.Cmd.Stderr = out, out
	if opts.StderrOnly {
		p.Cmd.Stdout = nil
	}
	if err := p.Cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", bin, err)
	}
	go func() { p.done <- p.Cmd.Wait() }()
	tb.Cleanup(func() { p.end(tb, opts.AtEnd, opts.StopTimeout) })

	if opts.Ready == nil {
		return p
	}
	deadline := time.Now().Add(opts.ReadyTimeout)
	for {
		err := opts.Ready()
		if err == nil {
			return p
		}
		if exited, werr := p.Exited(); exited {
			tb.Fatalf("csi-node-proxy %s exited before it was ready: %v\n%s", strings.Join(opts.Args, " "), werr, p.Output)
		}
		if time.Now().After(deadline) {
			tb.Fatalf("csi-node-proxy not ready after %v: %v\n%s", opts.ReadyTimeout, err, p.Output)
		}
		time.Sleep(opts.PollInterval)
	}
}

// WaitExit waits up to timeout for the process to exit and tells, as
// Exited does, whether it has and with what.
func (p *Process) WaitExit(timeout time.Duration) (bool, error) {
	select {
	case err := <-p.done:
		p.done <- err
		return true, err
	case <-time.After(timeout):
		return false, nil
	}
}

// Exited tells whether the process has exited, and with what.
func (p *Process) Exited() (bool, error) {
	select {
	case err := <-p.done:
		p.done <- err
		return true, err
	default:
		return false, nil
	}
}

// stop ends the daemon at the end of the test: SIGTERM and a clean exit,
// unless the test already stopped it (Stop) or it exited on its own,
// which fails the test unless it exited 0.
func (p *Process) stop(tb testing.TB, timeout time.Duration) {
	tb.Helper()
	if exited, err := p.Exited(); exited {
		if err != nil && !p.stopped {
			tb.Errorf("the daemon exited during the test: %v", err)
		}
	} else {
		p.Stop(tb, timeout)
	}
	if tb.Failed() {
		tb.Logf("daemon output:\n%s", p.Output)
	}
}

// end ends the daemon at the end of the test as at says.
func (p *Process) end(tb testing.TB, at End, timeout time.Duration) {
	tb.Helper()
	switch at {
	case Checked:
		p.stop(tb, timeout)
		return
	case Leave:
		return
	}
	if exited, _ := p.Exited(); !exited {
		sig := os.Signal(syscall.SIGTERM)
		if at == Kill {
			sig = os.Kill
		}
		_ = p.Cmd.Process.Signal(sig)
		select {
		case err := <-p.done:
			p.done <- err
		case <-time.After(timeout):
			_ = p.Cmd.Process.Kill()
			err := <-p.done
			p.done <- err
		}
	}
	if tb.Failed() {
		tb.Logf("daemon output:\n%s", p.Output)
	}
}

// Stop sends the daemon SIGTERM, as the kubelet and systemd stop it, and
// waits up to timeout for it to exit (then kills it). It fails the test
// unless the daemon exited 0 in time, or if a race-enabled daemon
// reported a data race, and returns how long the daemon took to exit. A
// test that stops the daemon itself calls it; Start's cleanup then has
// nothing left to do.
func (p *Process) Stop(tb testing.TB, timeout time.Duration) time.Duration {
	tb.Helper()
	p.stopped = true
	start := time.Now()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		tb.Errorf("SIGTERM: %v", err)
	}
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			tb.Errorf("daemon exit after SIGTERM: %v", err)
		}
	case <-time.After(timeout):
		_ = p.Cmd.Process.Kill()
		err := <-p.done
		p.done <- err
		tb.Errorf("daemon still running %v after SIGTERM; killed", timeout)
	}
	took := time.Since(start)
	if strings.Contains(p.Output.String(), "WARNING: DATA RACE") {
		tb.Error("the daemon reported a data race")
	}
	return took
}

// SocketsAccept is a Ready function: ready when every Unix socket in paths
// accepts a connection.
func SocketsAccept(paths ...string) func() error {
	return func() error {
		for _, p := range paths {
			c, err := net.DialTimeout("unix", p, 100*time.Millisecond)
			if err != nil {
				return err
			}
			_ = c.Close()
		}
		return nil
	}
}
