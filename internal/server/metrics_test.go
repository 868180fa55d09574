package server

import (
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/callgate"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/metrics"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/version"
)

// series returns every series of the registry as name{labels} → value
// (counters and gauges) or sample count (histograms).
func series(t *testing.T, m *metrics.Metrics) map[string]float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, s := range f.GetMetric() {
			var ls []string
			for _, l := range s.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(ls)
			key := f.GetName() + "{" + strings.Join(ls, ",") + "}"
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = s.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key] = s.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[key] = float64(s.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// The policy's two kinds of denial get two reasons; the free-text reason,
// which quotes paths, never becomes a label.
func TestDenyReasons(t *testing.T) {
	p, err := policy.Parse([]byte(`
rules:
- name: pods
  callers: [{any: true}]
  allow: [{methods: ["smb.NewSmbGlobalMapping"]}]
  pathRoots: ['C:\var\lib\kubelet\pods']
`), policy.Options{Style: hostpath.Windows})
	if err != nil {
		t.Fatal(err)
	}
	noRule := p.Decide(policy.Call{Caller: identity.Caller{}, Group: "smb", Version: "v1", Method: "RemoveSmbGlobalMapping",
		Inspected: true})
	path := p.Decide(policy.Call{Caller: identity.Caller{}, Group: "smb", Version: "v1", Method: "NewSmbGlobalMapping",
		Inspected: true, Args: []policy.Arg{{Field: "local_path", Kind: policy.ArgPath, Value: `C:\var\lib\kubelet\plugins\x`}}})
	if noRule.Allowed || path.Allowed {
		t.Fatalf("decisions %+v %+v, want two denials", noRule, path)
	}
	if got := callgate.DenyReason(noRule); got != metrics.DeniedNoRule {
		t.Errorf("no rule: reason %q (policy said %q), want %q", got, noRule.Reason, metrics.DeniedNoRule)
	}
	if got := callgate.DenyReason(path); got != metrics.DeniedPath || !strings.Contains(path.Reason, "plugins") {
		t.Errorf("path: reason %q (policy said %q), want %q", got, path.Reason, metrics.DeniedPath)
	}
}

// grpc_service alone must identify a group-version, since the
// grpc_server_* series keep upstream's labels and have no group label.
func TestServiceNamesIdentifyGroupVersion(t *testing.T) {
	seen := map[string]string{}
	for _, api := range adapter.All() {
		if prev, ok := seen[api.Service]; ok {
			t.Errorf("service %s is served by both %s and %s", api.Service, prev, api.Name())
		}
		seen[api.Service] = api.Name()
	}
	if len(seen) == 0 {
		t.Skip("the adapter registry is empty")
	}
}

// Calls through a server with metrics: every call counted once under its
// service and method with the code the client got, denials by reason,
// nothing left in flight, health checks counted apart, and a method no
// endpoint serves creates no series.
func TestMetricsThroughServer(t *testing.T) {
	captureLogs(t, 0)
	m := metrics.New(version.Get())
	store := writePolicy(t, `
rules:
- name: pods
  callers: [{any: true}]
  allow: [{groups: [smb], methods: ["NewSmbGlobalMapping"]}]
  pathRoots: ['C:\var\lib\kubelet\pods']
`)
	cfg := testConfig(t)
	cfg.Policy, cfg.Metrics = store, m
	f := &callerSmb{}
	api := smbGroupAPI(f)
	s := start(t, cfg, api)
	cc := dial(t, s.Endpoints()[0].Address)
	c := smbv1.NewSmbClient(cc)

	for range 2 {
		if _, err := c.NewSmbGlobalMapping(callCtx(t), &smbv1.NewSmbGlobalMappingRequest{
			RemotePath: `\\srv\share`, LocalPath: `C:\var\lib\kubelet\pods\p1\vol`, Password: "s3cret-Pw"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.NewSmbGlobalMapping(callCtx(t), &smbv1.NewSmbGlobalMappingRequest{
		RemotePath: `\\srv\share`, LocalPath: `C:\var\lib\kubelet\plugins\x`}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("path outside the roots: %v", err)
	}
	if _, err := c.RemoveSmbGlobalMapping(callCtx(t), &smbv1.RemoveSmbGlobalMappingRequest{RemotePath: `\\srv\share`}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("method no rule allows: %v", err)
	}
	if _, err := healthpb.NewHealthClient(cc).Check(callCtx(t), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := cc.Invoke(callCtx(t), "/v1.Smb/NoSuchMethod", &smbv1.RemoveSmbGlobalMappingRequest{}, &smbv1.RemoveSmbGlobalMappingResponse{}); status.Code(err) != codes.Unimplemented {
		t.Fatalf("unknown method: %v", err)
	}

	got := series(t, m)
	g, v := api.Group, api.Version
	for key, want := range map[string]float64{
		"grpc_server_started_total{grpc_method=NewSmbGlobalMapping,grpc_service=v1.Smb,grpc_type=unary}":                               3,
		"grpc_server_handled_total{grpc_code=OK,grpc_method=NewSmbGlobalMapping,grpc_service=v1.Smb,grpc_type=unary}":                  2,
		"grpc_server_handled_total{grpc_code=PermissionDenied,grpc_method=NewSmbGlobalMapping,grpc_service=v1.Smb,grpc_type=unary}":    1,
		"grpc_server_handled_total{grpc_code=PermissionDenied,grpc_method=RemoveSmbGlobalMapping,grpc_service=v1.Smb,grpc_type=unary}": 1,
		"grpc_server_handling_seconds{grpc_method=NewSmbGlobalMapping,grpc_service=v1.Smb,grpc_type=unary}":                            3,
		"grpc_server_handled_total{grpc_code=OK,grpc_method=Check,grpc_service=grpc.health.v1.Health,grpc_type=unary}":                 1,
		"csi_node_proxy_denied_calls_total{group=" + g + ",method=NewSmbGlobalMapping,reason=path,version=" + v + "}":                  1,
		"csi_node_proxy_denied_calls_total{group=" + g + ",method=RemoveSmbGlobalMapping,reason=no_rule,version=" + v + "}":            1,
		"csi_node_proxy_in_flight_calls{group=" + g + ",version=" + v + "}":                                                            0,
	} {
		if val, ok := got[key]; !ok || val != want {
			t.Errorf("%s = %v (present %v), want %v", key, val, ok, want)
		}
	}
	for key := range got {
		if strings.Contains(key, "NoSuchMethod") {
			t.Errorf("a method no endpoint serves created %s", key)
		}
		for _, leak := range []string{"s3cret", `\`, "kubelet", "srv"} {
			if strings.Contains(key, leak) {
				t.Errorf("series %s contains %q", key, leak)
			}
		}
	}
}

// While the audit log cannot be written, the refused mutations are
// counted as denied with reason audit_unavailable.
func TestMetricsAuditUnavailable(t *testing.T) {
	captureLogs(t, 0)
	m := metrics.New(version.Get())
	w := &brokenWriter{}
	al := audit.New(w, audit.Options{})
	m.TrackAudit(al)
	cfg := testConfig(t)
	cfg.Audit, cfg.Metrics = al, m
	api := smbGroupAPI(&callerSmb{})
	s := start(t, cfg, api)
	c := smbv1.NewSmbClient(dial(t, s.Endpoints()[0].Address))
	w.set(true)
	for range 3 {
		_, _ = c.NewSmbGlobalMapping(callCtx(t), &smbv1.NewSmbGlobalMappingRequest{RemotePath: `\\s\x`})
	}
	got := series(t, m)
	key := "csi_node_proxy_denied_calls_total{group=" + api.Group + ",method=NewSmbGlobalMapping,reason=audit_unavailable,version=" + api.Version + "}"
	if got[key] != 3 { // every one, the first included: none could write its intent
		t.Errorf("%s = %v, want 3", key, got[key])
	}
	if got["csi_node_proxy_audit_write_failures_total{}"] != 6 { // per call: the intent and the refusal
		t.Errorf("audit_write_failures_total = %v, want 6", got["csi_node_proxy_audit_write_failures_total{}"])
	}
	if got["grpc_server_handled_total{grpc_code=Unavailable,grpc_method=NewSmbGlobalMapping,grpc_service=v1.Smb,grpc_type=unary}"] != 3 {
		t.Errorf("handled Unavailable: %v", got)
	}
}
