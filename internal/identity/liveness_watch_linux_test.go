//go:build linux

package identity

import (
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A watched pidfd says a running process runs and an exited one has
// exited without a system call per question: the watcher, waiting in the
// runtime's poller, marks the exit.
func TestWatchedPidfdMarksExit(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	fd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	if err != nil {
		t.Skipf("pidfd_open: %v", err)
	}
	p := newProcess(fd)
	t.Cleanup(p.close)
	if exited, ok := p.h.known(); !ok || exited {
		t.Fatalf("running process: known() = exited %v, ok %v; want a watcher that says it runs", exited, ok)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		exited, ok := p.h.known()
		if ok && exited {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after the kill: known() = exited %v, ok %v; want the exit marked", exited, ok)
		}
		time.Sleep(time.Millisecond)
	}
	if exited, err := p.exited(); err != nil || !exited {
		t.Errorf("exited() = %v, %v; want true", exited, err)
	}
	p.close()
	if _, err := p.exited(); err == nil {
		t.Errorf("exited() after close: no error, want liveness unknown")
	}
}
