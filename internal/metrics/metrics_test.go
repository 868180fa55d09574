package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/version"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/httpcall"
)

var testBuild = version.Info{Version: "v1.2.3", Commit: "0123abc", BuildDate: "2026-01-02T03:04:05Z", GoVersion: "go1.26.8"}

// gather returns the registry's families by name.
func gather(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// labelsOf renders a metric's labels as name=value,... in name order.
func labelsOf(m *dto.Metric) string {
	var parts []string
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// find returns the family's metric with exactly these labels, or nil.
func find(f *dto.MetricFamily, labels string) *dto.Metric {
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		if labelsOf(m) == labels {
			return m
		}
	}
	return nil
}

// value returns a counter's or gauge's value, or -1 when the series does
// not exist.
func value(fams map[string]*dto.MetricFamily, name, labels string) float64 {
	m := find(fams[name], labels)
	switch {
	case m == nil:
		return -1
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return -1
}

// The grpc_server_* families must be go-grpc-middleware's, as upstream
// csi-proxy registers them: the same names, types, help and label names,
// and upstream's handling-time buckets. Dashboards and alerts written
// for upstream depend on exactly this.
func TestUpstreamGRPCFamilies(t *testing.T) {
	m := New(testBuild)
	// One call of each kind, so every family has a series to show its
	// labels.
	ui := m.UnaryServerInterceptor(Endpoint{Group: "disk", Version: "v1", Service: "v1.Disk"})
	_, _ = ui(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/v1.Disk/ListDiskLocations"},
		func(context.Context, any) (any, error) { return "ok", nil })
	fams := gather(t, m)

	base := []string{"grpc_method", "grpc_service", "grpc_type"}
	for _, want := range []struct {
		name, help string
		typ        dto.MetricType
		labels     []string
	}{
		{"grpc_server_started_total", "Total number of RPCs started on the server.", dto.MetricType_COUNTER, base},
		{"grpc_server_handled_total", "Total number of RPCs completed on the server, regardless of success or failure.", dto.MetricType_COUNTER,
			[]string{"grpc_code", "grpc_method", "grpc_service", "grpc_type"}},
		{"grpc_server_msg_received_total", "Total number of RPC stream messages received on the server.", dto.MetricType_COUNTER, base},
		{"grpc_server_msg_sent_total", "Total number of gRPC stream messages sent by the server.", dto.MetricType_COUNTER, base},
		{"grpc_server_handling_seconds", "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.",
			dto.MetricType_HISTOGRAM, base},
	} {
		f := fams[want.name]
		if f == nil {
			t.Errorf("%s missing", want.name)
			continue
		}
		if f.GetType() != want.typ || f.GetHelp() != want.help {
			t.Errorf("%s: type %v help %q, want %v %q", want.name, f.GetType(), f.GetHelp(), want.typ, want.help)
		}
		var names []string
		for _, l := range f.GetMetric()[0].GetLabel() {
			names = append(names, l.GetName())
		}
		if !slices.Equal(names, want.labels) {
			t.Errorf("%s labels %v, want %v", want.name, names, want.labels)
		}
	}
	h := fams["grpc_server_handling_seconds"].GetMetric()[0].GetHistogram()
	var bounds []float64
	for _, b := range h.GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
	}
	upstream := []float64{0.001, 0.01, 0.1, 0.3, 0.6, 1, 3, 6, 9, 20, 30, 60, 90, 120}
	if !slices.Equal(bounds, upstream) {
		t.Errorf("handling buckets %v, want upstream's %v", bounds, upstream)
	}
}

func TestUnaryInterceptor(t *testing.T) {
	m := New(testBuild)
	ep := Endpoint{Group: "disk", Version: "v1", Service: "v1.Disk"}
	ui := m.UnaryServerInterceptor(ep)
	fams := gather(t, m)
	if v := value(fams, "csi_node_proxy_in_flight_calls", "group=disk,version=v1"); v != 0 {
		t.Errorf("in_flight_calls before any call = %v, want a series at 0", v)
	}

	release := make(chan struct{})
	running := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		_, _ = ui(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/v1.Disk/PartitionDisk"},
			func(context.Context, any) (any, error) {
				close(running)
				<-release
				return nil, status.Error(codes.NotFound, "disk 9: not found")
			})
	})
	<-running
	// A health check on the same endpoint meanwhile: counted by the
	// grpc_server_* series, not in flight.
	_, _ = ui(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/grpc.health.v1.Health/Check"},
		func(context.Context, any) (any, error) {
			fams := gather(t, m)
			if v := value(fams, "csi_node_proxy_in_flight_calls", "group=disk,version=v1"); v != 1 {
				t.Errorf("in_flight_calls during one API call and one health check = %v, want 1", v)
			}
			return "ok", nil
		})
	close(release)
	wg.Wait()
	for range 2 {
		_, _ = ui(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/v1.Disk/PartitionDisk"},
			func(context.Context, any) (any, error) { time.Sleep(2 * time.Millisecond); return "ok", nil })
	}

	fams = gather(t, m)
	call := "grpc_method=PartitionDisk,grpc_service=v1.Disk,grpc_type=unary"
	wantValues(t, fams, call, map[string]float64{
		"grpc_server_started_total":      3,
		"grpc_server_msg_received_total": 3,
		"grpc_server_msg_sent_total":     3,
	})
	if v := value(fams, "grpc_server_handled_total", "grpc_code=OK,"+call); v != 2 {
		t.Errorf("handled OK = %v, want 2", v)
	}
	if v := value(fams, "grpc_server_handled_total", "grpc_code=NotFound,"+call); v != 1 {
		t.Errorf("handled NotFound = %v, want 1", v)
	}
	health := "grpc_code=OK,grpc_method=Check,grpc_service=grpc.health.v1.Health,grpc_type=unary"
	if v := value(fams, "grpc_server_handled_total", health); v != 1 {
		t.Errorf("health check handled = %v, want 1", v)
	}
	h := find(fams["grpc_server_handling_seconds"], call).GetHistogram()
	if h.GetSampleCount() != 3 || h.GetSampleSum() < 0.004 || h.GetSampleSum() > 5 {
		t.Errorf("handling histogram count %d sum %v, want 3 calls taking 4 ms to 5 s", h.GetSampleCount(), h.GetSampleSum())
	}
	if v := value(fams, "csi_node_proxy_in_flight_calls", "group=disk,version=v1"); v != 0 {
		t.Errorf("in_flight_calls after the calls = %v, want 0", v)
	}
}

// wantValues fails the test for each metric in want whose series with the
// labels has another value: the interceptor tests check the same three
// counters of one call.
func wantValues(t *testing.T, fams map[string]*dto.MetricFamily, labels string, want map[string]float64) {
	t.Helper()
	for name, w := range want {
		if v := value(fams, name, labels); v != w {
			t.Errorf("%s{%s} = %v, want %v", name, labels, v, w)
		}
	}
}

// fakeStream is a server stream that receives n messages, then EOF.
type fakeStream struct {
	grpc.ServerStream
	n int
}

func (s *fakeStream) Context() context.Context { return context.Background() }

func (s *fakeStream) RecvMsg(any) error {
	if s.n == 0 {
		return io.EOF
	}
	s.n--
	return nil
}

func (s *fakeStream) SendMsg(any) error { return nil }

func TestStreamInterceptor(t *testing.T) {
	m := New(testBuild)
	si := m.StreamServerInterceptor()
	info := &grpc.StreamServerInfo{FullMethod: "/grpc.health.v1.Health/Watch", IsServerStream: true}
	err := si(nil, &fakeStream{n: 1}, info, func(_ any, ss grpc.ServerStream) error {
		if err := ss.RecvMsg(nil); err != nil {
			return err
		}
		for range 3 {
			if err := ss.SendMsg(nil); err != nil {
				return err
			}
		}
		return status.Error(codes.Canceled, "client went away")
	})
	if status.Code(err) != codes.Canceled {
		t.Fatalf("stream interceptor changed the error: %v", err)
	}
	fams := gather(t, m)
	call := "grpc_method=Watch,grpc_service=grpc.health.v1.Health,grpc_type=server_stream"
	wantValues(t, fams, call, map[string]float64{
		"grpc_server_started_total":      1,
		"grpc_server_msg_received_total": 1,
		"grpc_server_msg_sent_total":     3,
	})
	if v := value(fams, "grpc_server_handled_total", "grpc_code=Canceled,"+call); v != 1 {
		t.Errorf("handled Canceled = %v, want 1", v)
	}
	if h := find(fams["grpc_server_handling_seconds"], call); h == nil || h.GetHistogram().GetSampleCount() != 1 {
		t.Errorf("handling histogram %v", h)
	}
}

func TestSplitFullMethod(t *testing.T) {
	for in, want := range map[string][2]string{
		"/v1.Disk/PartitionDisk":       {"v1.Disk", "PartitionDisk"},
		"/grpc.health.v1.Health/Check": {"grpc.health.v1.Health", "Check"},
		"nonsense":                     {"unknown", "unknown"},
	} {
		if s, m := splitFullMethod(in); s != want[0] || m != want[1] {
			t.Errorf("splitFullMethod(%q) = %q, %q", in, s, m)
		}
	}
}

func TestOwnMetrics(t *testing.T) {
	m := New(testBuild)
	m.CallDenied("system", "v1alpha1", "StartService", DeniedNoRule)
	m.CallDenied("system", "v1alpha1", "StartService", DeniedNoRule)
	m.CallDenied("filesystem", "v1", "Rmdir", DeniedPath)
	o := m.HostObserver("simulated")
	o.ObserveHostOperation("disk", "DiskSize", 3*time.Millisecond, nil)
	o.ObserveHostOperation("disk", "DiskSize", time.Millisecond, fmt.Errorf("disk 9: %w", errdefs.ErrNotFound))
	o.ObserveHostOperation("volume", "FormatVolume", 2*time.Second, errors.New("mkfs exploded"))
	fams := gather(t, m)

	if v := value(fams, "csi_node_proxy_build_info", "commit=0123abc,go_version=go1.26.8,version=v1.2.3"); v != 1 {
		t.Errorf("build_info = %v, want 1", v)
	}
	if v := value(fams, "csi_node_proxy_denied_calls_total", "group=system,method=StartService,reason=no_rule,version=v1alpha1"); v != 2 {
		t.Errorf("denied no_rule = %v, want 2", v)
	}
	if v := value(fams, "csi_node_proxy_denied_calls_total", "group=filesystem,method=Rmdir,reason=path,version=v1"); v != 1 {
		t.Errorf("denied path = %v, want 1", v)
	}
	for labels, want := range map[string]uint64{
		"backend=simulated,code=OK,group=disk,operation=DiskSize":             1,
		"backend=simulated,code=NotFound,group=disk,operation=DiskSize":       1,
		"backend=simulated,code=Internal,group=volume,operation=FormatVolume": 1,
	} {
		h := find(fams["csi_node_proxy_host_operation_duration_seconds"], labels)
		if h == nil || h.GetHistogram().GetSampleCount() != want {
			t.Errorf("host_operation_duration_seconds{%s} = %v, want %d samples", labels, h, want)
		}
	}
	for _, name := range []string{"csi_node_proxy_audit_write_failures_total", "csi_node_proxy_audit_torn_writes_total", "csi_node_proxy_policy_reload_failures_total"} {
		if v := value(fams, name, ""); v != 0 {
			t.Errorf("%s without an audit log or policy = %v, want 0", name, v)
		}
	}
	if v := value(fams, "csi_node_proxy_audit_log_healthy", ""); v != 1 {
		t.Errorf("audit_log_healthy without an audit log = %v, want 1", v)
	}
	for _, name := range []string{"go_goroutines", "go_info"} {
		if fams[name] == nil {
			t.Errorf("%s missing: the Go collector is not registered", name)
		}
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestTrackAuditAndPolicy(t *testing.T) {
	m := New(testBuild)
	al := audit.New(failingWriter{}, audit.Options{})
	m.TrackAudit(al)
	_ = al.Log(audit.Record{Method: "PartitionDisk"})
	_ = al.Log(audit.Record{Method: "FormatVolume"})

	path := filepath.Join(t.TempDir(), "policy.yaml")
	good := "rules:\n- name: all\n  callers: [{any: true}]\n  allow: [{methods: [\"*\"]}]\n"
	if err := os.WriteFile(path, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	ps, err := policy.Load(path, policy.Options{Style: hostpath.Windows})
	if err != nil {
		t.Fatal(err)
	}
	m.TrackPolicy(ps)
	if err := os.WriteFile(path, []byte("rules: [oops"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.Reload(); err == nil {
		t.Fatal("reloading a broken policy succeeded")
	}

	// Denials past the caller's rate are counted, not written.
	for range audit.DefaultDenialBurst + 3 {
		_ = al.Log(audit.Record{Method: "Mkdir", Decision: audit.Deny})
	}

	fams := gather(t, m)
	if v := value(fams, "csi_node_proxy_audit_write_failures_total", ""); v != 2+audit.DefaultDenialBurst {
		t.Errorf("audit_write_failures_total = %v, want %d", v, 2+audit.DefaultDenialBurst)
	}
	if v := value(fams, "csi_node_proxy_audit_suppressed_denials_total", ""); v != 3 {
		t.Errorf("audit_suppressed_denials_total = %v, want 3", v)
	}
	if v := value(fams, "csi_node_proxy_policy_reload_failures_total", ""); v != 1 {
		t.Errorf("policy_reload_failures_total = %v, want 1", v)
	}
	if f := fams["csi_node_proxy_audit_write_failures_total"]; f.GetType() != dto.MetricType_COUNTER {
		t.Errorf("audit_write_failures_total is a %v", f.GetType())
	}
}

// tearingWriter writes half of each record and fails, as a full disk
// does part-way through a record, until healed.
type tearingWriter struct{ healed bool }

func (w *tearingWriter) Write(p []byte) (int, error) {
	if w.healed {
		return len(p), nil
	}
	return len(p) / 2, errors.New("no space left on device")
}

// TestTrackAuditTornAndHealth: audit_torn_writes_total counts the records
// that failed part-way, and audit_log_healthy is 1 until a write fails,
// 0 while the log is broken, 1 again after a write succeeds.
func TestTrackAuditTornAndHealth(t *testing.T) {
	m := New(testBuild)
	w := &tearingWriter{}
	al := audit.New(w, audit.Options{})
	m.TrackAudit(al)
	check := func(when string, failures, torn, healthy float64) {
		t.Helper()
		fams := gather(t, m)
		if v := value(fams, "csi_node_proxy_audit_write_failures_total", ""); v != failures {
			t.Errorf("%s: audit_write_failures_total = %v, want %v", when, v, failures)
		}
		if v := value(fams, "csi_node_proxy_audit_torn_writes_total", ""); v != torn {
			t.Errorf("%s: audit_torn_writes_total = %v, want %v", when, v, torn)
		}
		if v := value(fams, "csi_node_proxy_audit_log_healthy", ""); v != healthy {
			t.Errorf("%s: audit_log_healthy = %v, want %v", when, v, healthy)
		}
	}
	check("before any record", 0, 0, 1)
	r := audit.Record{Method: "PartitionDisk"}
	if err := al.Intent(&r); err == nil {
		t.Fatal("a torn intent was reported written")
	}
	_ = al.Log(r)
	check("after two torn records", 2, 2, 0)
	w.healed = true
	if err := al.Log(audit.Record{Method: "FormatVolume"}); err != nil {
		t.Fatal(err)
	}
	check("after a record written", 2, 2, 1)
	if f := family(t, m, "csi_node_proxy_audit_torn_writes_total"); f.GetType() != dto.MetricType_COUNTER {
		t.Errorf("audit_torn_writes_total is a %v", f.GetType())
	}
	if f := family(t, m, "csi_node_proxy_audit_log_healthy"); f.GetType() != dto.MetricType_GAUGE {
		t.Errorf("audit_log_healthy is a %v", f.GetType())
	}
}

// family returns one metric family of m.
func family(t *testing.T, m *Metrics, name string) *dto.MetricFamily {
	t.Helper()
	return gather(t, m)[name]
}

// A nil Metrics records nothing and never panics: the daemon passes nil
// when metrics are off.
func TestNilMetrics(t *testing.T) {
	var m *Metrics
	m.CallDenied("disk", "v1", "PartitionDisk", DeniedNoRule)
	m.TrackAudit(nil)
	m.TrackPolicy(nil)
	m.HostObserver("simulated").ObserveHostOperation("disk", "DiskSize", time.Second, nil)
	HostObserver{}.ObserveHostOperation("disk", "DiskSize", time.Second, nil)
	resp, err := m.UnaryServerInterceptor(Endpoint{})(context.Background(), "req", &grpc.UnaryServerInfo{FullMethod: "/v1.Disk/X"},
		func(_ context.Context, req any) (any, error) { return req, nil })
	if resp != "req" || err != nil {
		t.Errorf("nil unary interceptor = %v, %v", resp, err)
	}
	called := false
	err = m.StreamServerInterceptor()(nil, &fakeStream{}, &grpc.StreamServerInfo{FullMethod: "/a.B/C"},
		func(any, grpc.ServerStream) error { called = true; return nil })
	if !called || err != nil {
		t.Errorf("nil stream interceptor: called %v, err %v", called, err)
	}
}

func TestServe(t *testing.T) {
	m := New(testBuild)
	s, err := Serve("127.0.0.1:0", m, Extra{})
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(s.Addr())
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("Addr() = %q, want 127.0.0.1 with the port chosen", s.Addr())
	}
	base := "http://" + s.Addr()

	code, body := httpcall.Get(t, base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics = %d", code)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	for _, name := range []string{"csi_node_proxy_build_info", "go_goroutines", "csi_node_proxy_audit_write_failures_total"} {
		if fams[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if code, body := httpcall.Get(t, base+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("GET /healthz = %d %q", code, body)
	}
	if code, _ := httpcall.Do(t, http.MethodPost, base+"/metrics"); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics = %d, want 405", code)
	}
	if code, _ := httpcall.Get(t, base+"/"); code != http.StatusNotFound {
		t.Errorf("GET / = %d, want 404", code)
	}
	// A second scrape sees the first in the handler's own metrics.
	_, body = httpcall.Get(t, base+"/metrics")
	if !strings.Contains(body, `promhttp_metric_handler_requests_total{code="200"} 1`) {
		t.Errorf("scrape counter missing:\n%s", body)
	}

	// An address in use, and addresses that are not host:port, are
	// refused at once.
	for _, bad := range []string{s.Addr(), "nonsense", "localhost", "127.0.0.1:99999", ""} {
		if s2, err := Serve(bad, m, Extra{}); err == nil {
			s2.Shutdown(context.Background())
			t.Errorf("Serve(%q) succeeded", bad)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if resp, err := http.Get(base + "/healthz"); err == nil {
		resp.Body.Close()
		t.Error("the server still answers after Shutdown")
	}
}
