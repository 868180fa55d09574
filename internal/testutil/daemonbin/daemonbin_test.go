package daemonbin

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/syncbuf"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeDaemonEnv); mode != "" {
		fakeDaemon(mode)
		return
	}
	os.Exit(Main(m))
}

// fakeDaemonEnv makes this test binary a stand-in daemon (fakeDaemon), so
// the options of Start are tested without building the real one.
const fakeDaemonEnv = "DAEMONBIN_FAKE_DAEMON"

// fakeDaemon prints FOO and HOME to stdout and "ready" to stderr, then
// waits for SIGTERM: mode "clean" exits 0 on it, "fail" exits 1, and
// "stubborn" ignores it (only SIGKILL ends it). Mode "refuse" exits 3 at
// once, saying why on stderr, as the daemon refuses a bad command line.
func fakeDaemon(mode string) {
	if mode == "refuse" {
		fmt.Fprintln(os.Stderr, "csi-node-proxy: refused: a bad flag")
		os.Exit(3)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	fmt.Printf("stdout FOO=%s HOME=%s\n", os.Getenv("FOO"), os.Getenv("HOME"))
	fmt.Fprintln(os.Stderr, "ready")
	for range sig {
		switch mode {
		case "clean":
			os.Exit(0)
		case "fail":
			os.Exit(1)
		}
	}
}

// startFake starts fakeDaemon in mode with opts, ready once it said so.
func startFake(tb testing.TB, mode string, opts Options) *Process {
	if opts.Output == nil {
		opts.Output = &syncbuf.Buffer{}
	}
	out := opts.Output
	opts.Env = append(opts.Env, fakeDaemonEnv+"="+mode)
	opts.Ready = func() error {
		if !strings.Contains(out.String(), "ready") {
			return errors.New("not ready")
		}
		return nil
	}
	return Start(tb, os.Args[0], opts)
}

// TestEnvOutputAndLogFile: CleanEnv gives the daemon only Env, StderrOnly
// leaves its stdout out of Output, LogFile gets what Output gets (and,
// with LogFileOnly, everything while Output gets nothing), and
// Stop ends a daemon that exits 0 on SIGTERM without failing the test.
func TestEnvOutputAndLogFile(t *testing.T) {
	t.Setenv("FOO", "inherited")
	log := filepath.Join(t.TempDir(), "daemon.log")
	p := startFake(t, "clean", Options{Env: []string{"FOO=given"}, CleanEnv: true, LogFile: log})
	p.Stop(t, 10*time.Second)
	if exited, err := p.Exited(); !exited || err != nil {
		t.Fatalf("after Stop: exited %v, %v", exited, err)
	}
	out := p.Output.String()
	if !strings.Contains(out, "FOO=given HOME=\n") {
		t.Errorf("the daemon saw more or other than Env: %q", out)
	}
	if data, err := os.ReadFile(log); err != nil || string(data) != out {
		t.Errorf("log file %q, %v; want the output %q", data, err, out)
	}

	q := startFake(t, "clean", Options{Env: []string{"FOO=added"}, StderrOnly: true})
	q.Stop(t, 10*time.Second)
	if out := q.Output.String(); out != "ready\n" {
		t.Errorf("StderrOnly output %q; want only stderr's", out)
	}

	only := filepath.Join(t.TempDir(), "only.log")
	r := Start(t, os.Args[0], Options{Env: []string{"FOO=file", fakeDaemonEnv + "=clean"}, CleanEnv: true, LogFile: only, LogFileOnly: true,
		Ready: func() error {
			if data, _ := os.ReadFile(only); !strings.Contains(string(data), "ready") {
				return errors.New("not ready")
			}
			return nil
		}})
	r.Stop(t, 10*time.Second)
	if out := r.Output.String(); out != "" {
		t.Errorf("LogFileOnly: Output %q; want nothing", out)
	}
	if data, err := os.ReadFile(only); err != nil || !strings.Contains(string(data), "FOO=file HOME=\n") {
		t.Errorf("LogFileOnly: log file %q, %v; want the daemon's output", data, err)
	}
}

// TestAtEnd: Checked fails a test whose daemon does not exit 0 on
// SIGTERM; Kill ends even a daemon that ignores SIGTERM without failing
// it; Leave leaves the daemon running for WaitExit's caller.
func TestAtEnd(t *testing.T) {
	checked := &fakeTB{TB: t}
	startFake(checked, "fail", Options{})
	checked.runCleanups()
	if !checked.failed {
		t.Error("Checked: a daemon exiting 1 on SIGTERM did not fail the test")
	}

	killed := &fakeTB{TB: t}
	p := startFake(killed, "stubborn", Options{AtEnd: Kill})
	killed.runCleanups()
	if exited, _ := p.Exited(); !exited || killed.failed {
		t.Errorf("Kill: exited %v, test failed %v; want killed, not failed", exited, killed.failed)
	}

	left := &fakeTB{TB: t}
	q := startFake(left, "stubborn", Options{AtEnd: Leave})
	left.runCleanups()
	if exited, _ := q.WaitExit(50 * time.Millisecond); exited || left.failed {
		t.Fatalf("Leave: exited %v, test failed %v; want it left running", exited, left.failed)
	}
	if err := q.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if exited, _ := q.WaitExit(10 * time.Second); !exited {
		t.Error("WaitExit: the killed daemon has not exited")
	}
}

// TestRepoRoot finds the repository from this package's directory.
func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "testutil", "daemonbin", "daemonbin.go")); err != nil {
		t.Errorf("RepoRoot() = %s, which does not hold this package: %v", root, err)
	}
}

// TestBuildOnceAndFailFast builds the daemon once for two callers, and a
// daemon that exits at once (an unknown flag) fails Start at once.
func TestBuildOnceAndFailFast(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the daemon; skipped with -short")
	}
	a, b := Binary(t), Binary(t)
	if a != b {
		t.Fatalf("two builds: %s and %s", a, b)
	}
	// A fake test that records its failure instead of ending this one.
	ft := &fakeTB{TB: t}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(ft, a, Options{Args: []string{"--no-such-flag"}, Ready: func() error { return os.ErrNotExist }, ReadyTimeout: time.Minute})
	}()
	<-done
	if !ft.fatal {
		t.Fatal("Start returned for a daemon that exited")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Start took %v to notice the exit; want well under the 1 min ReadyTimeout", d)
	}
	ft.runCleanups()
}

// TestBinaryBuiltAsReleased: Binary is the daemon as hack/release.sh
// builds it, static and -trimpath, whatever this test binary was built
// with (make unit builds it with cgo and local paths, for the race
// detector). Issue 26: the daemon's build used to follow the test's
// environment, a configuration no other build of make test shared.
func TestBinaryBuiltAsReleased(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the daemon; skipped with -short")
	}
	info, err := buildinfo.ReadFile(Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	for key, want := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true"} {
		if got := settings[key]; got != want {
			t.Errorf("the daemon was built with %s=%q, want %q (settings %v)", key, got, want, info.Settings)
		}
	}
}

// fakeTB stops at Fatal (runtime.Goexit, as testing does) and keeps the
// cleanups for the test to run.
type fakeTB struct {
	testing.TB
	fatal    bool
	failed   bool
	cleanups []func()
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Cleanup(fn func())     { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(string, ...any) { f.failed = true }
func (f *fakeTB) Logf(string, ...any)   {}
func (f *fakeTB) Failed() bool          { return f.failed || f.fatal }
func (f *fakeTB) Fatal(...any)          { f.fatal = true; runtimeGoexit() }
func (f *fakeTB) Fatalf(string, ...any) { f.fatal = true; runtimeGoexit() }
func (f *fakeTB) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

var runtimeGoexit = runtime.Goexit

// TestRunToExit: the exit code and stderr of a daemon that refuses to
// start come back to the test.
func TestRunToExit(t *testing.T) {
	t.Setenv(fakeDaemonEnv, "refuse")
	code, stderr := RunToExit(t, os.Args[0])
	if code != 3 || !strings.Contains(stderr, "refused: a bad flag") {
		t.Errorf("RunToExit = %d, %q; want 3 and the reason", code, stderr)
	}
}
