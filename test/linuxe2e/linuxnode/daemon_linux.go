package linuxnode

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

const (
	// readyTimeout bounds how long the daemon may take to open its
	// sockets, stopTimeout how long it may take to exit after SIGTERM.
	readyTimeout = 15 * time.Second
	stopTimeout  = 15 * time.Second
	// daemonPkg is what BuildDaemon builds.
	daemonPkg = "github.com/csi-node-proxy/csi-node-proxy/cmd/csi-node-proxy"
)

var (
	buildOnce sync.Once
	buildDir  string
	daemonBin string
	buildErr  error
)

// DaemonBinary builds cmd/csi-node-proxy from this module once per test
// binary (with -race when the tests run with it) and returns its path. The
// go command must be on PATH. Call RemoveDaemonBinary from TestMain after
// the tests.
func DaemonBinary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "lnxbin"); buildErr != nil {
			return
		}
		daemonBin = filepath.Join(buildDir, "csi-node-proxy")
		args := []string{"build", "-o", daemonBin}
		if raceEnabled {
			args = append(args, "-race")
		}
		start := time.Now()
		// The tests run in their package directory, inside this module.
		out, err := exec.Command("go", append(args, daemonPkg)...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("build the daemon (go %s): %w\n%s", strings.Join(args, " "), err, out)
			return
		}
		if testing.Verbose() {
			fmt.Fprintf(os.Stderr, "linuxnode: built the daemon in %v (race: %v)\n", time.Since(start).Round(time.Millisecond), raceEnabled)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return daemonBin
}

// RemoveDaemonBinary removes what DaemonBinary built.
func RemoveDaemonBinary() {
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
}

// Disks says which disks a daemon sees.
type Disks int

const (
	// AllDisks shows the daemon every disk of the machine, as on a node.
	AllDisks Disks = iota
	// OwnDisks shows it only the disk holding the root filesystem and the scratch
	// area's loop disks. The Linux backend reconciles the partitions of
	// every disk it sees on every listing (BLKPG), so a daemon seeing all
	// disks races other tests that partition their own loop disks at the
	// same moment (host/linux/blockdev's root tests, run in parallel by
	// go test ./...): their BLKPG add fails with EBUSY. The daemon runs in
	// a mount namespace of its own (see isolate), where /sys/block is a
	// tmpfs holding links to just those disks; Scratch.Attach adds a link,
	// Scratch.Detach removes it. The scratch directory is a shared bind
	// mount, so the volumes the daemon mounts below it appear in the
	// test's mount table, as on a node.
	OwnDisks
)

// Daemon is one csi-node-proxy process serving the scratch area's node.
type Daemon struct {
	// SocketDir is its --socket-dir.
	SocketDir string
	cmd       *exec.Cmd
	out       *syncBuffer
	done      chan error
	// isolated: the daemon sees only the disks linked into its own
	// /sys/block (OwnDisks).
	isolated bool
	stopped  atomic.Bool
}

// StartDaemon starts the built daemon as the CI node would run it:
// --host=linux, its sockets in a fresh directory of the scratch area,
// -kubelet-path=s.Kubelet, plus extra flags (--linux-filesystem=xfs,
// -v=2...), seeing the disks disks says. It returns once the disk, volume
// and filesystem v1 sockets accept connections, and registers a cleanup
// that stops it with SIGTERM and fails the test unless it exits 0 and
// removes its sockets. The daemon's output is logged when the test fails.
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
	d := &Daemon{SocketDir: dir, out: &syncBuffer{}, done: make(chan error, 1), isolated: disks == OwnDisks}
	args := append([]string{"--host=linux", "--socket-dir=" + dir, "-kubelet-path=" + s.Kubelet}, extra...)
	d.cmd = exec.Command(bin, args...)
	d.cmd.Env = os.Environ()
	if d.isolated {
		// This test binary starts again, isolates itself in init and
		// becomes the daemon (same PID).
		self, err := os.Executable()
		if err != nil {
			tb.Fatal(err)
		}
		d.cmd = exec.Command(self, append([]string{bin}, args...)...)
		d.cmd.Env = append(os.Environ(), isolateEnv+"=1")
	}
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	if raceEnabled {
		// A race-enabled binary sleeps 1 s at exit by default.
		d.cmd.Env = append(d.cmd.Env, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
	if err := d.cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", bin, err)
	}
	go func() { d.done <- d.cmd.Wait() }()
	tb.Cleanup(func() { d.stop(tb) })
	deadline := time.Now().Add(readyTimeout)
	for _, ep := range []string{"disk-v1", "volume-v1", "filesystem-v1"} {
		for {
			c, err := net.DialTimeout("unix", d.Socket(ep), 100*time.Millisecond)
			if err == nil {
				_ = c.Close()
				break
			}
			select {
			case err := <-d.done:
				d.done <- err
				tb.Fatalf("csi-node-proxy %s exited before serving: %v\n%s", strings.Join(args, " "), err, d.out.String())
			default:
			}
			if time.Now().After(deadline) {
				tb.Fatalf("csi-node-proxy did not open %s within %v:\n%s", d.Socket(ep), readyTimeout, d.out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if d.isolated {
		// The node's own disk is always there; so are the loop disks
		// the test attached before.
		names := s.loopNames()
		if root, err := RootDisk(); err == nil {
			names = append(names, root)
		}
		for _, name := range names {
			if err := d.expose(name); err != nil {
				tb.Fatal(err)
			}
		}
		s.mu.Lock()
		s.isolated = append(s.isolated, d)
		s.mu.Unlock()
	}
	return d
}

// blockLink is the path of a disk's entry in an isolated daemon's
// /sys/block, reached through its root in /proc.
func (d *Daemon) blockLink(name string) string {
	return fmt.Sprintf("/proc/%d/root/sys/block/%s", d.cmd.Process.Pid, name)
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

// stop sends SIGTERM and checks a clean exit: status 0 and no socket left.
func (d *Daemon) stop(tb testing.TB) {
	if d.cmd.Process == nil {
		return
	}
	d.stopped.Store(true)
	defer func() {
		if tb.Failed() {
			tb.Logf("daemon output:\n%s", d.out.String())
		}
	}()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		tb.Errorf("stop daemon: %v", err)
	}
	select {
	case err := <-d.done:
		if err != nil {
			tb.Errorf("daemon exited with %v after SIGTERM, want status 0", err)
		}
	case <-time.After(stopTimeout):
		_ = d.cmd.Process.Kill()
		killed := <-d.done
		tb.Errorf("daemon did not exit within %v of SIGTERM; killed (%v)", stopTimeout, killed)
		return
	}
	if strings.Contains(d.out.String(), "WARNING: DATA RACE") {
		tb.Errorf("the daemon reported a data race")
	}
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

// syncBuffer is a bytes.Buffer safe for the daemon's writes and the
// test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
