package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
	systemv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/system/v1alpha1"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	smbadapter "github.com/csi-node-proxy/csi-node-proxy/internal/adapter/smbv1"
	systemadapter "github.com/csi-node-proxy/csi-node-proxy/internal/adapter/systemv1alpha1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/klogcapture"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/poll"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// fakeSystem is a system group whose GetService behaves as the requested
// name says, so tests can provoke each path of the interceptors and the
// gate; its other methods are not called.
type fakeSystem struct {
	system.Interface
	started chan struct{} // receives when a "block" call has begun
	release chan struct{} // closed to let "block" calls return
}

func newFakeSystem() *fakeSystem {
	return &fakeSystem{started: make(chan struct{}, 16), release: make(chan struct{})}
}

func (f *fakeSystem) GetService(ctx context.Context, req *system.GetServiceRequest) (*system.GetServiceResponse, error) {
	switch req.Name {
	case "block":
		f.started <- struct{}{}
		<-f.release
	case "panic":
		panic("handler bug")
	case "plain":
		return nil, errors.New("plain failure")
	case "unknown":
		return nil, status.Error(codes.Unknown, "unknown failure")
	case "missing":
		return nil, errdefs.Errorf(errdefs.ErrNotFound, "service %q", req.Name)
	case "invalid":
		return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "service name %q", req.Name)
	}
	return &system.GetServiceResponse{DisplayName: "shown " + req.Name}, nil
}

// fakeSmb is an SMB group that accepts every mapping.
type fakeSmb struct{ smb.Interface }

func (fakeSmb) NewSmbGlobalMapping(context.Context, *smb.NewSmbGlobalMappingRequest) (*smb.NewSmbGlobalMappingResponse, error) {
	return &smb.NewSmbGlobalMappingResponse{}, nil
}

var groupSeq atomic.Int64

// uniqueGroup returns a group name no other test uses, so pipe names (which
// are global on Windows) never collide.
func uniqueGroup() string { return fmt.Sprintf("t%d%d", os.Getpid(), groupSeq.Add(1)) }

// fakes holds the groups behind each test API, by its unique group or
// version: testSet puts them in the Set a test server is given, so their
// calls pass the gate as every real call does.
var fakes sync.Map // API name → func(*groups.Set)

// testSet is the Set behind apis: the fakes their constructors
// registered.
func testSet(apis ...adapter.API) groups.Set {
	var set groups.Set
	for _, a := range apis {
		if f, ok := fakes.Load(a.Name()); ok {
			f.(func(*groups.Set))(&set)
		}
	}
	return set
}

// newServer is New with the fakes apis serve behind the gate.
func newServer(cfg Config, apis ...adapter.API) (*Server, error) {
	return New(cfg, testSet(apis...), apis)
}

// The methods the fakes leave out answer as an unimplemented RPC does.
func (*fakeSystem) GetBIOSSerialNumber(context.Context, *system.GetBIOSSerialNumberRequest) (*system.GetBIOSSerialNumberResponse, error) {
	return nil, errdefs.Errorf(errdefs.ErrUnimplemented, "GetBIOSSerialNumber")
}

func (*fakeSystem) StartService(context.Context, *system.StartServiceRequest) (*system.StartServiceResponse, error) {
	return nil, errdefs.Errorf(errdefs.ErrUnimplemented, "StartService")
}

func (*fakeSystem) StopService(context.Context, *system.StopServiceRequest) (*system.StopServiceResponse, error) {
	return nil, errdefs.Errorf(errdefs.ErrUnimplemented, "StopService")
}

func (fakeSmb) RemoveSmbGlobalMapping(context.Context, *smb.RemoveSmbGlobalMappingRequest) (*smb.RemoveSmbGlobalMappingResponse, error) {
	return nil, errdefs.Errorf(errdefs.ErrUnimplemented, "RemoveSmbGlobalMapping")
}

// systemAPI serves f's GetService through system v1alpha1's adapter under
// a unique group name.
func systemAPI(f *fakeSystem) adapter.API {
	api := adapter.API{
		Group: uniqueGroup(), Version: "v1alpha1", Service: "v1alpha1.System",
		Register: func(s grpc.ServiceRegistrar, g groups.Set) { systemadapter.Register(s, g.System) },
	}
	fakes.Store(api.Name(), func(set *groups.Set) { set.System = f })
	return api
}

// smbAPI serves fakeSmb through smb v1's adapter under a unique group
// name.
func smbAPI() adapter.API {
	return smbAPIOf(uniqueGroup(), "v1", fakeSmb{})
}

func smbAPIOf(group, version string, f smb.Interface) adapter.API {
	api := adapter.API{
		Group: group, Version: version, Service: "v1.Smb",
		Register: func(s grpc.ServiceRegistrar, g groups.Set) { smbadapter.Register(s, g.SMB) },
	}
	fakes.Store(api.Name(), func(set *groups.Set) { set.SMB = f })
	return api
}

// testConfig puts sockets in a fresh short directory: t.TempDir embeds the
// test name and can push socket paths past the 108-byte limit.
func testConfig(t *testing.T) Config {
	t.Helper()
	d := sockdir.New(t, "srv")
	o := transport.DefaultOptions()
	o.SocketDir = d
	return Config{Transport: o}
}

// start serves apis and stops the server when the test ends.
func start(t *testing.T, cfg Config, apis ...adapter.API) *Server {
	t.Helper()
	s, err := New(cfg, testSet(apis...), apis)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Stop(ctx)
	})
	return s
}

// dial returns a gRPC connection to address, closed when the test ends.
func dial(t *testing.T, address string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(transport.Target(address), transport.DialOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// gone tells whether nothing can connect to address any more, and on Unix
// that the socket file is removed.
func gone(address string) bool {
	if runtime.GOOS != "windows" {
		if _, err := os.Lstat(address); !errors.Is(err, os.ErrNotExist) {
			return false
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := transport.Dial(ctx, address)
	if err == nil {
		c.Close()
		return false
	}
	return true
}

// waitFor waits up to 10 s for cond, checking every 10 ms.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Must(t, what, 10*time.Second, 10*time.Millisecond, cond)
}

// captureLogs sends klog's output, at verbosity v, to the returned buffer
// until the test ends. klog is global: tests that use it must not run in
// parallel.
func captureLogs(t *testing.T, v int) *klogcapture.Buffer {
	t.Helper()
	return klogcapture.Capture(t, v)
}

func TestHealthServing(t *testing.T) {
	captureLogs(t, 0)
	api := systemAPI(newFakeSystem())
	s := start(t, testConfig(t), api)
	eps := s.Endpoints()
	if len(eps) != 1 || eps[0].API.Name() != api.Name() {
		t.Fatalf("Endpoints() = %+v", eps)
	}
	if runtime.GOOS != "windows" && !strings.HasSuffix(eps[0].Address, "/"+api.Name()+".sock") {
		t.Errorf("address %s", eps[0].Address)
	}
	hc := healthpb.NewHealthClient(dial(t, eps[0].Address))
	for _, svc := range []string{"", "v1alpha1.System"} {
		r, err := hc.Check(callCtx(t), &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("Check(%q) = %v, %v; want SERVING", svc, r, err)
		}
	}
	if _, err := hc.Check(callCtx(t), &healthpb.HealthCheckRequest{Service: "v1.Disk"}); status.Code(err) != codes.NotFound {
		t.Errorf("Check(v1.Disk) = %v, want NotFound", err)
	}
}

func TestErrorMapping(t *testing.T) {
	captureLogs(t, 0) // keep expected failures out of the test output
	s := start(t, testConfig(t), systemAPI(newFakeSystem()))
	c := systemv1alpha1.NewSystemClient(dial(t, s.Endpoints()[0].Address))
	for _, tc := range []struct {
		name string
		code codes.Code
		msg  string
	}{
		{"ok", codes.OK, ""},
		{"plain", codes.Internal, "plain failure"},
		{"unknown", codes.Internal, "unknown failure"},
		{"missing", codes.NotFound, `service "missing": not found`},
		{"panic", codes.Internal, "internal error"},
		{"ok", codes.OK, ""}, // still serving after the panic
	} {
		r, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: tc.name})
		st := status.Convert(err)
		if st.Code() != tc.code || st.Message() != tc.msg {
			t.Errorf("GetService(%s) = %v %q, want %v %q", tc.name, st.Code(), st.Message(), tc.code, tc.msg)
		}
		if err == nil && r.DisplayName != "shown "+tc.name {
			t.Errorf("GetService(%s) = %v", tc.name, r)
		}
	}
	// A method the version does not define is grpc's own Unimplemented.
	if _, err := c.StartService(callCtx(t), &systemv1alpha1.StartServiceRequest{Name: "x"}); status.Code(err) != codes.Unimplemented {
		t.Errorf("StartService = %v, want Unimplemented", err)
	}
}

func TestLogging(t *testing.T) {
	logs := captureLogs(t, 5)
	sys := systemAPI(newFakeSystem())
	smb := smbAPI()
	s := start(t, testConfig(t), sys, smb)
	eps := s.Endpoints()
	c := systemv1alpha1.NewSystemClient(dial(t, eps[0].Address))
	if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "ok"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "panic"}); status.Code(err) != codes.Internal {
		t.Fatal(err)
	}
	if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "plain"}); status.Code(err) != codes.Internal {
		t.Fatal(err)
	}
	if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "missing"}); status.Code(err) != codes.NotFound {
		t.Fatal(err)
	}

	const password = "Tr0ub4dor-secret-pw"
	sc := smbv1.NewSmbClient(dial(t, eps[1].Address))
	if _, err := sc.NewSmbGlobalMapping(callCtx(t), &smbv1.NewSmbGlobalMappingRequest{
		RemotePath: `\\srv\share`, Username: `DOM\user`, Password: password,
	}); err != nil {
		t.Fatal(err)
	}

	out := logs.String()
	if strings.Contains(out, password) {
		t.Fatalf("the password reached the log:\n%s", out)
	}
	lines := strings.Split(out, "\n")
	count := func(subs ...string) int {
		n := 0
	line:
		for _, l := range lines {
			for _, s := range subs {
				if !strings.Contains(l, s) {
					continue line
				}
			}
			n++
		}
		return n
	}
	method := "/v1alpha1.System/GetService"
	checks := []struct {
		what string
		subs []string
		want int
	}{
		{"successful call", []string{`"call"`, `endpoint="` + sys.Name() + `"`, `method="` + method + `"`, `code="OK"`, "duration="}, 1},
		{"request payloads", []string{`"request"`, `method="` + method + `"`, `\"name\":`}, 4},
		{"response payload", []string{`"call"`, `response="{\"display_name\":\"shown ok\"}"`}, 1},
		{"panic with stack", []string{`"panic in call"`, `panic="handler bug"`, "stack=", "GetService"}, 1},
		{"panics logged once", []string{"handler bug"}, 1},
		{"internal failure as error", []string{"E", `"call failed"`, `code="Internal"`, "plain failure"}, 1},
		{"caller fault as info", []string{"I", `"call failed"`, `code="NotFound"`}, 1},
		{"smb request redacted", []string{`"request"`, `method="/v1.Smb/NewSmbGlobalMapping"`, `\"password\":\"REDACTED\"`, `\"username\":\"DOM\\\\user\"`}, 1},
	}
	for _, c := range checks {
		if got := count(c.subs...); got != c.want {
			t.Errorf("%s: %d lines with %q, want %d", c.what, got, c.subs, c.want)
		}
	}
	if t.Failed() {
		t.Logf("log:\n%s", out)
	}
}

func TestLoggingQuietByDefault(t *testing.T) {
	logs := captureLogs(t, 1)
	s := start(t, testConfig(t), systemAPI(newFakeSystem()))
	c := systemv1alpha1.NewSystemClient(dial(t, s.Endpoints()[0].Address))
	if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "ok"}); err != nil {
		t.Fatal(err)
	}
	if out := logs.String(); strings.Contains(out, "GetService") {
		t.Errorf("a successful call was logged at -v=1:\n%s", out)
	}
}

// Upstream's client opens a probe connection and never uses or closes it.
// It must not hold up other callers nor shutdown.
func TestIdleConnection(t *testing.T) {
	s, err := newServer(testConfig(t), systemAPI(newFakeSystem()))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	addr := s.Endpoints()[0].Address
	idle, err := transport.Dial(callCtx(t), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()

	c := systemv1alpha1.NewSystemClient(dial(t, addr))
	if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "ok"}); err != nil {
		t.Fatalf("call next to an idle connection: %v", err)
	}

	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("Stop took %v with an idle connection open", d)
	}
	if err := s.Wait(); err != nil {
		t.Errorf("Wait after Stop: %v", err)
	}
}

func TestGracefulStop(t *testing.T) {
	f := newFakeSystem()
	s, err := newServer(testConfig(t), systemAPI(f), smbAPI())
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	var addrs []string
	for _, ep := range s.Endpoints() {
		addrs = append(addrs, ep.Address)
	}
	waitFor(t, "the endpoints exist", func() bool {
		for _, a := range addrs {
			if gone(a) {
				return false
			}
		}
		return true
	})

	c := systemv1alpha1.NewSystemClient(dial(t, addrs[0]))
	inflight := make(chan error, 1)
	go func() {
		r, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "block"})
		if err == nil && r.DisplayName != "shown block" {
			err = fmt.Errorf("response %v", r)
		}
		inflight <- err
	}()
	<-f.started

	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		stopped <- s.Stop(ctx)
	}()

	// Every endpoint disappears at once, while the call is still running.
	waitFor(t, "the endpoints are removed", func() bool {
		for _, a := range addrs {
			if !gone(a) {
				return false
			}
		}
		return true
	})
	r, err := s.eps[0].health.Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || r.Status != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("health during shutdown = %v, %v; want NOT_SERVING", r, err)
	}
	// A new client cannot get in.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	nc := systemv1alpha1.NewSystemClient(dial(t, addrs[0]))
	if _, err := nc.GetService(ctx, &systemv1alpha1.GetServiceRequest{Name: "ok"}); err == nil {
		t.Error("a new connection was served during shutdown")
	}
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned before the in-flight call finished: %v", err)
	default:
	}

	close(f.release)
	if err := <-inflight; err != nil {
		t.Errorf("in-flight call: %v", err)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Stop: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestForcedStop(t *testing.T) {
	captureLogs(t, 0)
	f := newFakeSystem()
	defer close(f.release)
	s, err := newServer(testConfig(t), systemAPI(f))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	addr := s.Endpoints()[0].Address
	c := systemv1alpha1.NewSystemClient(dial(t, addr))
	inflight := make(chan error, 1)
	go func() {
		_, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "block"})
		inflight <- err
	}()
	<-f.started

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	begin := time.Now()
	err = s.Stop(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stop with a stuck call = %v, want a deadline error", err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("forced Stop took %v", d)
	}
	if err := <-inflight; status.Code(err) != codes.Unavailable {
		t.Errorf("cut-off call = %v, want Unavailable", err)
	}
	if !gone(addr) {
		t.Error("endpoint still there after a forced stop")
	}
}

func TestEndpointInUse(t *testing.T) {
	cfg := testConfig(t)
	api := systemAPI(newFakeSystem())
	first := start(t, cfg, api)

	second, err := newServer(cfg, api)
	if err != nil {
		t.Fatal(err)
	}
	err = second.Start()
	if !errors.Is(err, transport.ErrInUse) || !strings.Contains(err.Error(), "already in use by another process") {
		t.Fatalf("second server Start = %v, want an in-use error", err)
	}
	if !strings.Contains(err.Error(), api.Name()) {
		t.Errorf("error %q does not name the endpoint", err)
	}
	// The first server is unharmed.
	hc := healthpb.NewHealthClient(dial(t, first.Endpoints()[0].Address))
	if _, err := hc.Check(callCtx(t), &healthpb.HealthCheckRequest{}); err != nil {
		t.Errorf("first server after the clash: %v", err)
	}
}

// Start is all or nothing: when a later endpoint is taken, the ones it
// created before are removed again.
func TestStartAllOrNothing(t *testing.T) {
	cfg := testConfig(t)
	taken := systemAPI(newFakeSystem())
	start(t, cfg, taken)

	free := smbAPI()
	s, err := newServer(cfg, free, taken)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); !errors.Is(err, transport.ErrInUse) {
		t.Fatalf("Start = %v, want ErrInUse", err)
	}
	if addr := s.Endpoints()[0].Address; !gone(addr) {
		t.Errorf("%s left behind after a failed Start", addr)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Errorf("Stop after a failed Start: %v", err)
	}
	if err := s.Wait(); err != nil {
		t.Errorf("Wait after Stop: %v", err)
	}
}

func TestNewRejects(t *testing.T) {
	api := systemAPI(newFakeSystem())
	noReg := api
	noReg.Register = nil
	for name, apis := range map[string][]adapter.API{
		"none":        nil,
		"duplicate":   {api, api},
		"no register": {noReg},
		"no service":  {{Group: "g", Version: "v1", Register: api.Register}},
	} {
		if _, err := New(Config{}, groups.Set{}, apis); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
}

func TestStopBeforeStart(t *testing.T) {
	s, err := newServer(testConfig(t), systemAPI(newFakeSystem()))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err == nil {
		t.Error("Start after Stop succeeded")
	}
	if err := s.Wait(); err != nil {
		t.Errorf("Wait: %v", err)
	}
}

// TestStopRightAfterStart: a Stop that reaches gRPC before an endpoint's
// Serve has begun (the daemon told to stop as it starts, a test that ends
// at once) is a stop like any other. gRPC's Serve then returns
// grpc.ErrServerStopped, which Wait used to report as a failure.
func TestStopRightAfterStart(t *testing.T) {
	for i := range 30 {
		cfg := testConfig(t)
		s, err := newServer(cfg, systemAPI(newFakeSystem()))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		if err := s.Stop(context.Background()); err != nil {
			t.Fatalf("run %d: Stop: %v", i, err)
		}
		if err := s.Wait(); err != nil {
			t.Fatalf("run %d: Wait after Stop: %v", i, err)
		}
		if left, _ := os.ReadDir(cfg.Transport.SocketDir); len(left) > 0 {
			t.Fatalf("run %d: %s still holds %s after Stop", i, cfg.Transport.SocketDir, left[0].Name())
		}
	}
}

// A caller's failed calls (its fault: here NotFound) are logged at the
// audit log's denial rate, a burst of 100, then one per 10 s, the next
// line saying how many were left out; without the bound a caller no rule
// admits grew the daemon's log by a line per call (issue 23). The
// daemon's own failures are always logged.
func TestCallerFaultLinesRateLimited(t *testing.T) {
	logs := captureLogs(t, 0)
	s := start(t, testConfig(t), systemAPI(newFakeSystem()))
	c := systemv1alpha1.NewSystemClient(dial(t, s.Endpoints()[0].Address))
	const calls = audit.DefaultDenialBurst + 50
	for range calls {
		if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "missing"}); status.Code(err) != codes.NotFound {
			t.Fatal(err)
		}
	}
	for range 3 {
		if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "plain"}); status.Code(err) != codes.Internal {
			t.Fatal(err)
		}
	}
	out := logs.String()
	if n := strings.Count(out, `code="NotFound"`); n != audit.DefaultDenialBurst {
		t.Errorf("%d lines of %d NotFound calls, want %d", n, calls, audit.DefaultDenialBurst)
	}
	if n := strings.Count(out, `code="Internal"`); n != 3 {
		t.Errorf("%d lines of 3 Internal failures, want 3", n)
	}
}
