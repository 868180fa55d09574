package wirecompat

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// This file runs csi-node-proxy as a subprocess. The first wire test builds
// it from the main module (../..) and starts one daemon that all wire tests
// share; TestMain stops it with SIGTERM after the tests, checking that it
// exits cleanly and removes its sockets, and checks the call record. The
// descriptor tests need no daemon, so -run Descriptor neither builds nor
// starts one.

const (
	// readyTimeout bounds how long a daemon may take to open its sockets.
	readyTimeout = 10 * time.Second
	// stopTimeout bounds how long a daemon may take to exit after SIGTERM.
	stopTimeout = 10 * time.Second
	// callTimeout bounds every RPC.
	callTimeout = 10 * time.Second
	// simConfig is the simulated host's configuration for the shared daemon.
	simConfig = "testdata/sim.json"
	// allowedService is a default simulated service the daemon may start
	// and stop (--allowed-service).
	allowedService = "MSiSCSI"
)

var (
	// daemonBin is the built daemon.
	daemonBin string
	// shared is the daemon all wire tests talk to.
	shared *daemon
	// conns holds one client connection per served group-version, keyed
	// "group/version".
	conns = map[string]*grpc.ClientConn{}
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

// run runs the tests, then stops the shared daemon if a test started it
// and checks its clean exit and the call record.
func run(m *testing.M) int {
	defer func() {
		if binDir != "" {
			os.RemoveAll(binDir)
		}
	}()
	code := m.Run()
	if shared == nil {
		return code // no wire test ran (e.g. -run Descriptor)
	}
	for _, cc := range conns {
		cc.Close()
	}
	start := time.Now()
	if err := shared.stop(); err != nil {
		fmt.Fprintf(os.Stderr, "wirecompat: shared daemon: %v\n", err)
		code = 1
	} else {
		logf("shared daemon stopped cleanly in %v", time.Since(start).Round(time.Millisecond))
	}
	msg, summary := calls.problems(flag.Lookup("test.run").Value.String() == "")
	logf("%s", summary)
	if msg != "" && code == 0 {
		fmt.Fprint(os.Stderr, msg)
		code = 1
	}
	return code
}

var (
	buildOnce sync.Once
	buildErr  error
	binDir    string

	sharedOnce sync.Once
	sharedErr  error
)

// buildDaemon builds the daemon from the cmd module once per run. This
// module requires none of the repository's modules (its point is that
// upstream's stubs alone reach the daemon), so it builds the daemon itself
// rather than through internal/testutil/daemonbin.
func buildDaemon(t *testing.T) {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "wcbin"); buildErr != nil {
			return
		}
		daemonBin = filepath.Join(binDir, "csi-node-proxy")
		start := time.Now()
		build := exec.Command("go", "build", "-o", daemonBin, "./csi-node-proxy")
		build.Dir = filepath.Join("..", "..", "cmd") // the daemon's module, not this one
		// Never through a workspace: the modules must stay apart.
		build.Env = append(os.Environ(), "GOWORK=off")
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build the daemon: %v\n%s", err, out)
			return
		}
		logf("built the daemon in %v", time.Since(start).Round(time.Millisecond))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

// sharedDaemon starts, on first use, the daemon all wire tests share, and
// connects to each of its sockets. TestMain stops it.
func sharedDaemon(t *testing.T) *daemon {
	t.Helper()
	buildDaemon(t)
	sharedOnce.Do(func() {
		start := time.Now()
		d, err := startDaemon(nil, "--allowed-service="+allowedService, "--sim-config="+simConfig)
		if err != nil {
			sharedErr = err
			return
		}
		logf("shared daemon ready in %v", time.Since(start).Round(time.Millisecond))
		for _, g := range served {
			cc, err := dialSocket(d.socket(g))
			if err != nil {
				d.kill()
				sharedErr = err
				return
			}
			conns[g.String()] = cc
		}
		shared = d
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// logf prints progress when the tests run verbosely.
func logf(format string, args ...any) {
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "wirecompat: "+format+"\n", args...)
	}
}

// daemon is one running csi-node-proxy.
type daemon struct {
	dir    string // socket directory
	cmd    *exec.Cmd
	output *syncBuffer
	done   chan error
	gvs    []groupVersion // the group-versions it is expected to serve
}

// startDaemon starts the daemon on a fresh socket directory with the
// simulated host and waits until every socket of gvs (all served
// group-versions when nil) accepts connections. A copy of
// daemonbin.Start's loop: this module imports nothing of ours (see
// buildDaemon).
func startDaemon(gvs []groupVersion, extra ...string) (*daemon, error) {
	if gvs == nil {
		gvs = served
	}
	// os.MkdirTemp, not t.TempDir: a socket path must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "wc")
	if err != nil {
		return nil, err
	}
	d := &daemon{dir: dir, output: &syncBuffer{}, done: make(chan error, 1), gvs: gvs}
	args := append([]string{"--host=simulated", "--socket-dir=" + dir}, extra...)
	d.cmd = exec.Command(daemonBin, args...)
	d.cmd.Stdout, d.cmd.Stderr = d.output, d.output
	if err := d.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", daemonBin, err)
	}
	go func() { d.done <- d.cmd.Wait() }()
	deadline := time.Now().Add(readyTimeout)
	for _, g := range gvs {
		for {
			c, err := net.DialTimeout("unix", d.socket(g), 100*time.Millisecond)
			if err == nil {
				c.Close()
				break
			}
			select {
			case werr := <-d.done:
				d.done <- werr
				d.cleanup()
				return nil, fmt.Errorf("daemon %v exited before serving %s: %v\n%s", args, g, werr, d.output)
			default:
			}
			if time.Now().After(deadline) {
				d.kill()
				return nil, fmt.Errorf("daemon %v: %s not accepting connections after %v: %v\n%s", args, d.socket(g), readyTimeout, err, d.output)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return d, nil
}

// socket returns the socket path of a group-version.
func (d *daemon) socket(g groupVersion) string {
	return filepath.Join(d.dir, "csi-proxy-"+g.group+"-"+g.version+".sock")
}

// stop sends SIGTERM and checks that the daemon exits with status 0 in
// time and removes its sockets.
func (d *daemon) stop() error {
	defer d.cleanup()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("SIGTERM: %w", err)
	}
	select {
	case err := <-d.done:
		if err != nil {
			return fmt.Errorf("exit after SIGTERM: %v\n%s", err, d.output)
		}
	case <-time.After(stopTimeout):
		d.cmd.Process.Kill()
		<-d.done
		return fmt.Errorf("still running %v after SIGTERM; killed\n%s", stopTimeout, d.output)
	}
	var left []string
	for _, g := range served {
		if _, err := os.Lstat(d.socket(g)); !errors.Is(err, os.ErrNotExist) {
			left = append(left, d.socket(g))
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("sockets left behind after a clean exit: %v", left)
	}
	return nil
}

// kill ends the daemon without ceremony (on a failed start).
func (d *daemon) kill() {
	d.cmd.Process.Kill()
	<-d.done
	d.cleanup()
}

func (d *daemon) cleanup() { os.RemoveAll(d.dir) }

// syncBuffer collects the daemon's output for error messages. A copy of
// syncbuf.Buffer: this module imports nothing of ours (see buildDaemon).
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

// dialSocket connects to a socket the way a Linux build of an upstream
// driver would: plain gRPC over a unix:// target, no TLS. Every call goes
// through the recorder.
func dialSocket(path string) (*grpc.ClientConn, error) {
	return dialRecorded(path, calls)
}

func dialRecorded(path string, r *recorder) (*grpc.ClientConn, error) {
	cc, err := grpc.NewClient("unix://"+path,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(r.intercept))
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", path, err)
	}
	return cc, nil
}

// conn returns the shared daemon's connection for a group-version.
func conn(t *testing.T, gv string) *grpc.ClientConn {
	t.Helper()
	sharedDaemon(t)
	cc := conns[gv]
	if cc == nil {
		t.Fatalf("no connection for %s", gv)
	}
	return cc
}

// ctx returns a bounded context for one test.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), callTimeout)
	t.Cleanup(cancel)
	return c
}

// recorder notes every call made through a test connection, so the run can
// prove that every method was exercised and that no error was Unknown.
type recorder struct {
	mu      sync.Mutex
	ok      map[string]int // full method -> successful calls
	failed  map[string]int // full method -> failed calls
	unknown []string       // calls that failed with codes.Unknown
}

var calls = newRecorder()

func newRecorder() *recorder {
	return &recorder{ok: map[string]int{}, failed: map[string]int{}}
}

func (r *recorder) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	r.mu.Lock()
	defer r.mu.Unlock()
	// Full method names are unique across the served group-versions
	// (v1.Volume vs v2alpha1.Volume), so the method is key enough.
	if err == nil {
		r.ok[method]++
	} else {
		r.failed[method]++
		if status.Code(err) == codes.Unknown {
			r.unknown = append(r.unknown, fmt.Sprintf("%s: %v", method, err))
		}
	}
	return err
}

// upstreamFileByPath returns upstream's registered descriptor for g.
func upstreamFileByPath(g groupVersion) protoreflect.FileDescriptor {
	fd, err := protoregistry.GlobalFiles.FindFileByPath(g.theirs)
	if err != nil {
		return nil
	}
	return fd
}

// problems reports Unknown errors and, when the whole suite ran, methods of
// served group-versions that never succeeded; summary is the coverage.
func (r *recorder) problems(fullRun bool) (problems, summary string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, u := range r.unknown {
		fmt.Fprintf(&b, "wirecompat: error with code Unknown: %s\n", u)
	}
	var lines []string
	totalOK, totalFail := 0, 0
	for _, g := range served {
		fd := upstreamFileByPath(g)
		if fd == nil {
			fmt.Fprintf(&b, "wirecompat: no upstream descriptor for %s\n", g)
			continue
		}
		svc := fd.Services().Get(0)
		okN, failN := 0, 0
		for i := 0; i < svc.Methods().Len(); i++ {
			m := "/" + string(svc.FullName()) + "/" + string(svc.Methods().Get(i).Name())
			if r.ok[m] > 0 {
				okN++
			} else if fullRun {
				fmt.Fprintf(&b, "wirecompat: %s (%s) never called successfully\n", m, g)
			}
			failN += r.failed[m]
		}
		totalOK += okN
		totalFail += failN
		lines = append(lines, fmt.Sprintf("%-20s %2d/%2d methods succeeded, %3d failing calls", g, okN, svc.Methods().Len(), failN))
	}
	sort.Strings(lines)
	summary = fmt.Sprintf("coverage:\n  %s\n  total: %d methods succeeded, %d failing calls, %d failure cases asserted",
		strings.Join(lines, "\n  "), totalOK, totalFail, failureCases.Load())
	return b.String(), summary
}
