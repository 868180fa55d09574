package linuxnode

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/syncbuf"
)

const (
	// readyTimeout bounds how long the daemon may take to open its
	// sockets, stopTimeout how long it may take to exit after SIGTERM.
	readyTimeout = 15 * time.Second
	stopTimeout  = 15 * time.Second
)

// DaemonBinary builds cmd/csi-node-proxy once per test binary (with -race
// when the tests run with it; daemonbin) and returns its path. The go
// command must be on PATH. Call RemoveDaemonBinary from TestMain after
// the tests.
func DaemonBinary(tb testing.TB) string {
	tb.Helper()
	return daemonbin.BinaryRace(tb)
}

// RemoveDaemonBinary removes what DaemonBinary built.
func RemoveDaemonBinary() { daemonbin.Remove() }

// Disks says which disks a daemon sees.
type Disks int

const (
	// AllDisks shows the daemon every disk of the machine, as on a node.
	AllDisks Disks = iota
	// OwnDisks shows it only the disk holding the root filesystem and the scratch
	// area's loop disks. The Linux backend reconciles the partitions of
	// every disk it sees on every listing (BLKPG), so a daemon seeing all
	// disks races other tests that partition their own loop disks at the
	// same moment (internal/host/linux/blockdev's root tests, run in parallel by
	// go test ./...): their BLKPG add fails with EBUSY. The daemon runs in
	// a mount namespace of its own (see isolate), where /sys/block is a
	// tmpfs holding links to just those disks; Scratch.Attach adds a link,
	// Scratch.Detach removes it. The scratch directory is a shared bind
	// mount, so the volumes the daemon mounts below it appear in the
	// test's mount table, as on a node.
	OwnDisks
)

// Daemon is one csi-node-proxy process serving the scratch area's node, or
// the processes it becomes across Kill and Restart: the same command line,
// sockets, working directory and view of the disks.
type Daemon struct {
	// SocketDir is its --socket-dir.
	SocketDir string
	s         *Scratch
	argv      []string // the daemon's command line, its binary first
	out       *syncbuf.Buffer
	// isolated: the daemon sees only the disks linked into its own
	// /sys/block (OwnDisks).
	isolated bool
	// stopped is set once the test is done with the daemon: no disk is
	// shown to or hidden from it any more.
	stopped atomic.Bool

	// mu guards the process fields: Attach and Detach may reach expose
	// and hide from another goroutine while the test restarts the daemon.
	mu      sync.Mutex
	p       *daemonbin.Process // the current process
	running bool               // p runs: started and neither killed nor stopped
	starts  int                // processes started so far
}

// StartDaemon starts the built daemon as the CI node would run it:
// --host=linux, its sockets in a fresh directory of the scratch area,
// -kubelet-path=s.Kubelet, plus extra flags (--linux-filesystem=xfs,
// -v=2...), seeing the disks disks says. It returns once the disk, volume
// and filesystem v1 sockets accept connections, and registers a cleanup
// that stops it with SIGTERM and fails the test unless it exits 0 and
// removes its sockets (unless the test has stopped or killed it last).
// The daemon's output, across Kill and Restart, is logged when the test
// fails.
func StartDaemon(tb testing.TB, s *Scratch, disks Disks, extra ...string) *Daemon {
	tb.Helper()
	bin := DaemonBinary(tb)
	if disks == OwnDisks {
		if err := s.share(); err != nil {
			tb.Fatal(err)
		}
	}
	s.mu.Lock()
	s.daemons++
	dir := filepath.Join(s.Dir, fmt.Sprintf("s%d", s.daemons))
	s.mu.Unlock()
	if err := os.Mkdir(dir, 0o750); err != nil {
		tb.Fatal(err)
	}
	d := &Daemon{
		SocketDir: dir, s: s, out: &syncbuf.Buffer{}, isolated: disks == OwnDisks,
		argv: append([]string{bin, "--host=linux", "--socket-dir=" + dir, "-kubelet-path=" + s.Kubelet}, extra...),
	}
	// Registered before the first process starts, so it runs after
	// daemonbin's cleanups, which leave the process to it.
	tb.Cleanup(func() { d.stop(tb) })
	d.start(tb)
	if d.isolated {
		s.mu.Lock()
		s.isolated = append(s.isolated, d)
		s.mu.Unlock()
	}
	return d
}

// start starts a daemon process with d's command line and waits until it
// serves; an isolated one is shown the area's disks again (its /sys/block
// is new).
func (d *Daemon) start(tb testing.TB) {
	tb.Helper()
	prog, args := d.argv[0], d.argv[1:]
	var env []string
	if d.isolated {
		// This test binary starts again, isolates itself in init and
		// becomes the daemon (same PID). Mounts below the scratch area
		// (the volumes an earlier process of this daemon mounted) stay
		// in its namespace, as a restarted daemon finds them on a node.
		self, err := os.Executable()
		if err != nil {
			tb.Fatal(err)
		}
		prog, args = self, d.argv
		env = []string{isolateEnv + "=1", keepBelowEnv + "=" + d.s.Dir}
	}
	d.mu.Lock()
	d.starts++
	if d.starts > 1 {
		_, _ = fmt.Fprintf(d.out, "linuxnode: --- daemon process %d ---\n", d.starts) // a log separator; the log buffer never fails
	}
	d.mu.Unlock()
	// AtEnd Leave: the cleanup StartDaemon registered ends the process
	// (terminate), and Kill and Restart end earlier ones.
	p := daemonbin.Start(tb, prog, daemonbin.Options{
		Args: args, Env: env, Output: d.out,
		Ready:        daemonbin.SocketsAccept(d.Socket("disk-v1"), d.Socket("volume-v1"), d.Socket("filesystem-v1")),
		ReadyTimeout: readyTimeout, PollInterval: 5 * time.Millisecond,
		AtEnd: daemonbin.Leave,
	})
	d.mu.Lock()
	d.p, d.running = p, true
	d.mu.Unlock()
	if d.isolated {
		// The node's own disk is always there; so are the loop disks
		// the test attached before.
		names := d.s.loopNames()
		if root, err := RootDisk(); err == nil {
			names = append(names, root)
		}
		for _, name := range names {
			if err := d.expose(name); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// PID is the process ID of the daemon's current process.
func (d *Daemon) PID() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.p.Cmd.Process.Pid
}

// Kill ends the daemon's process with SIGKILL, as the OOM killer or
// `kill -9` does: no shutdown, no cleanup, its sockets left behind, its
// children (mkfs, e2fsck) left running. It returns once the process is
// gone. Restart starts it again.
func (d *Daemon) Kill(tb testing.TB) {
	tb.Helper()
	d.mu.Lock()
	p, running := d.p, d.running
	d.running = false
	d.mu.Unlock()
	if !running {
		tb.Fatal("linuxnode: Kill of a daemon that is not running")
	}
	if err := p.Cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		tb.Fatalf("SIGKILL the daemon: %v", err)
	}
	exited, err := p.WaitExit(stopTimeout)
	if !exited {
		tb.Fatalf("the daemon did not end within %v of SIGKILL", stopTimeout)
	}
	if ws, ok := p.Cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		tb.Errorf("the daemon ended with %v before SIGKILL reached it", err)
	}
}

// Stop ends the daemon with SIGTERM, as its service manager would, and
// fails the test unless it exits 0 and removes its sockets. Restart
// starts it again.
func (d *Daemon) Stop(tb testing.TB) {
	tb.Helper()
	d.mu.Lock()
	running := d.running
	d.mu.Unlock()
	if !running {
		tb.Fatal("linuxnode: Stop of a daemon that is not running")
	}
	d.terminate(tb)
}

// Restart starts the daemon again with the same command line, sockets and
// working directory, as its service manager would, and returns once it
// serves. A daemon still running is stopped first with SIGTERM (and must
// exit 0); one that Kill ended leaves its stale sockets, which the new
// process replaces.
func (d *Daemon) Restart(tb testing.TB) {
	tb.Helper()
	d.mu.Lock()
	running := d.running
	d.mu.Unlock()
	if running {
		d.terminate(tb)
	}
	d.start(tb)
}

// blockLink is the path of a disk's entry in an isolated daemon's
// /sys/block, reached through its root in /proc.
func (d *Daemon) blockLink(name string) string {
	return fmt.Sprintf("/proc/%d/root/sys/block/%s", d.PID(), name)
}

// expose makes disk name visible to an isolated daemon: a link in its
// /sys/block to the disk's sysfs directory, as the kernel's own.
func (d *Daemon) expose(name string) error {
	if d.stopped.Load() {
		return nil
	}
	target, err := filepath.EvalSymlinks("/sys/class/block/" + name)
	if err != nil {
		return err
	}
	return os.Symlink(target, d.blockLink(name))
}

// hide removes disk name from an isolated daemon's view.
func (d *Daemon) hide(name string) error {
	if d.stopped.Load() {
		return nil
	}
	if err := os.Remove(d.blockLink(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Socket is the path of an endpoint's socket; endpoint is group-version,
// such as "disk-v1".
func (d *Daemon) Socket(endpoint string) string {
	return filepath.Join(d.SocketDir, "csi-proxy-"+endpoint+".sock")
}

// Dial connects to an endpoint ("disk-v1") with the generated stubs'
// transport: gRPC over the unix socket. The connection closes with the
// test.
func (d *Daemon) Dial(tb testing.TB, endpoint string, opts ...grpc.DialOption) *grpc.ClientConn {
	tb.Helper()
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
	conn, err := grpc.NewClient("unix://"+d.Socket(endpoint), opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = conn.Close() })
	return conn
}

// Output is what the daemon has written so far (its klog lines).
func (d *Daemon) Output() string { return d.out.String() }

// stop is the cleanup: SIGTERM and a check of a clean exit, status 0 and
// no socket left, unless the test killed the daemon last (then only its
// stale sockets are there, which is what Kill means).
func (d *Daemon) stop(tb testing.TB) {
	d.stopped.Store(true)
	defer func() {
		if tb.Failed() {
			tb.Logf("daemon output:\n%s", d.out.String())
		}
	}()
	d.mu.Lock()
	running := d.p != nil && d.running
	d.mu.Unlock()
	if running {
		d.terminate(tb)
	}
}

// terminate sends SIGTERM to the running process and checks a clean exit:
// status 0, no data race reported (daemonbin's Stop) and no socket left.
func (d *Daemon) terminate(tb testing.TB) {
	d.mu.Lock()
	p := d.p
	d.running = false
	d.mu.Unlock()
	p.Stop(tb, stopTimeout)
	entries, err := os.ReadDir(d.SocketDir)
	if err != nil {
		tb.Errorf("read socket dir: %v", err)
		return
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSocket != 0 {
			tb.Errorf("socket %s still exists after the daemon stopped", e.Name())
		}
	}
}
