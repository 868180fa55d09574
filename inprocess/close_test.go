package inprocess

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
)

// fakeSystem is the simulated host's system backend with StartService and
// BIOSSerialNumber replaced where the test says, and a Close, as a backend
// holding something (systemd's D-Bus connection) has; it counts Closes.
type fakeSystem struct {
	system.Host
	start  func(ctx context.Context, name string) error
	bios   func(ctx context.Context) (string, error)
	closes atomic.Int32
}

func (f *fakeSystem) StartService(ctx context.Context, name string) error {
	if f.start != nil {
		return f.start(ctx, name)
	}
	return f.Host.StartService(ctx, name)
}

func (f *fakeSystem) BIOSSerialNumber(ctx context.Context) (string, error) {
	if f.bios != nil {
		return f.bios(ctx)
	}
	return f.Host.BIOSSerialNumber(ctx)
}

func (f *fakeSystem) Close() error {
	f.closes.Add(1)
	return nil
}

// fakeNode is a Node of o on the simulated host whose system backend is
// sys (sys.Host is filled in), built as New builds one.
func fakeNode(t *testing.T, o Options, sys *fakeSystem) (*Node, error) {
	t.Helper()
	o.Host = HostSimulated
	hooks := nodeHooks(o)
	hooks.Instrument = func(h hostset.Set) hostset.Set {
		sys.Host = h.System
		h.System = sys
		h.Closer = sys // as the Linux backend names its systemd connection
		return h
	}
	n, err := newNode(o, hooks)
	if err == nil {
		t.Cleanup(func() { _ = n.Close() })
	}
	return n, err
}

// TestCloseWaitsForCallsInFlight: Close refuses new calls at once, waits
// for a call in flight to return and be audited, and only then closes
// the audit log and the host.
func TestCloseWaitsForCallsInFlight(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.log")
	entered, release := make(chan struct{}), make(chan struct{})
	sys := &fakeSystem{start: func(context.Context, string) error {
		close(entered)
		<-release
		return nil
	}}
	n, err := fakeNode(t, Options{AuditLog: log, AllowedServices: []string{"svc"}}, sys)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	started := make(chan error, 1)
	go func() {
		_, err := n.System().StartService(ctx, &system.StartServiceRequest{Name: "svc"})
		started <- err
	}()
	<-entered
	closed := make(chan error, 1)
	go func() { closed <- n.Close() }()
	// Close has marked the node closed: wait until a new call says so.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := n.Filesystem().PathExists(ctx, &filesystem.PathExistsRequest{Path: kubelet})
		if errors.Is(err, errdefs.ErrFailedPrecondition) {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("a call while Close waits: %v; want it refused as closed", err)
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a call was in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	if c := sys.closes.Load(); c != 0 {
		t.Errorf("the host was closed while a call was in flight")
	}
	close(release)
	if err := <-started; err != nil {
		t.Errorf("the call in flight: %v", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	if c := sys.closes.Load(); c != 1 {
		t.Errorf("the host was closed %d times, want 1", c)
	}
	lines := readAudit(t, log)
	if len(lines) != 1 || lines[0].Method != "StartService" || lines[0].Code != "OK" {
		t.Errorf("audit records %+v; want the StartService that finished during Close", lines)
	}
}

// TestCloseRacesCalls (the reviewer's repro, with more callers): calls
// racing Close either fail as closed or succeed with their audit record;
// none changes the node unaudited.
func TestCloseRacesCalls(t *testing.T) {
	ctx := t.Context()
	const rounds, callers = 50, 4
	succeeded := 0
	for range rounds {
		log := filepath.Join(t.TempDir(), "audit.log")
		n, err := New(ctx, Options{Host: HostSimulated, AuditLog: log})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, callers)
		for i := range callers {
			wg.Go(func() {
				_, errs[i] = n.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: fmt.Sprintf(`%s\d%d`, kubelet, i)})
			})
		}
		wg.Go(func() { _ = n.Close() })
		wg.Wait()
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		for i, err := range errs {
			switch {
			case err == nil:
				succeeded++
				if !strings.Contains(string(b), fmt.Sprintf(`d%d"`, i)) {
					t.Errorf("Mkdir d%d succeeded with no audit record; the log:\n%s", i, b)
				}
			case !errors.Is(err, errdefs.ErrFailedPrecondition):
				t.Errorf("Mkdir d%d racing Close: %v", i, err)
			}
		}
	}
	t.Logf("%d of %d calls racing Close succeeded, each audited", succeeded, rounds*callers)
}

// TestCloseReleasesHost: Close closes the host backend once, after the
// audit log, and a Node whose construction fails closes it too; New and
// Close cycles, with a policy file being watched, leave no goroutine.
func TestCloseReleasesHost(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte(onlyBIOS), 0o600); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "audit.log")
	base := 0
	for i := range 21 {
		if i == 1 { // after a first cycle, which may start what lives on (klog's)
			base = runtime.NumGoroutine()
		}
		sys := &fakeSystem{}
		n, err := fakeNode(t, Options{PolicyFile: pol, PolicyReloadInterval: time.Millisecond, AuditLog: log}, sys)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.System().GetBIOSSerialNumber(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
		if err := n.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if c := sys.closes.Load(); c != 1 {
			t.Fatalf("the host was closed %d times by two Closes, want 1", c)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		g := runtime.NumGoroutine()
		if g <= base {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%d goroutines after 20 New/Close cycles, %d before", g, base)
			break
		}
	}

	sys := &fakeSystem{}
	if _, err := fakeNode(t, Options{PolicyData: []byte("rules: [")}, sys); err == nil {
		t.Fatal("a broken policy was accepted")
	}
	if c := sys.closes.Load(); c != 1 {
		t.Errorf("a Node that failed to build closed its host %d times, want 1", c)
	}
}

// TestPanicInService: a group Service that panics does not panic the
// driver. The call fails as Internal (no errdefs sentinel, even when the
// panic value is one), saying what panicked, and is audited as the daemon
// audits it; the Node goes on serving.
func TestPanicInService(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.log")
	sys := &fakeSystem{
		start: func(context.Context, string) error { panic("boom") },
		bios:  func(context.Context) (string, error) { panic(errdefs.ErrNotFound) },
	}
	n, err := fakeNode(t, Options{AuditLog: log, AllowedServices: []string{"svc"}}, sys)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	_, err = n.System().StartService(ctx, &system.StartServiceRequest{Name: "svc"})
	if err == nil || errgrpc.Code(err) != codes.Internal || !strings.Contains(err.Error(), "system.StartService panicked: boom") {
		t.Errorf("StartService that panics: %v (code %v); want Internal, naming the method and the panic", err, errgrpc.Code(err))
	}
	// Not audited (reads are not): the panic is recovered all the same.
	_, err = n.System().GetBIOSSerialNumber(ctx, nil)
	if err == nil || errgrpc.Code(err) != codes.Internal || errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("GetBIOSSerialNumber that panics with ErrNotFound: %v (code %v); want Internal, wrapping no sentinel", err, errgrpc.Code(err))
	}
	if _, err := n.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: kubelet + `\after`}); err != nil {
		t.Errorf("a call after the panics: %v", err)
	}
	lines := readAudit(t, log)
	if len(lines) != 2 || lines[0].Method != "StartService" || lines[0].Code != "Internal" || lines[0].Message != "internal error" || lines[1].Method != "Mkdir" {
		t.Errorf("audit records %+v; want StartService as Internal (\"internal error\"), then Mkdir", lines)
	}
}
