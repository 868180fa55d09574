package daemonbin

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

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
