package server

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
	systemv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/system/v1alpha1"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/metrics"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
	"github.com/csi-node-proxy/csi-node-proxy/internal/version"
)

// TestDeprecated pins which versions count as deprecated: the alphas and
// betas of groups that have v1, not the only versions of iscsi and system,
// nor the v2alpha1s that extend v1.
func TestDeprecated(t *testing.T) {
	for _, tc := range []struct {
		group, version string
		want           bool
	}{
		{"disk", "v1beta3", true}, {"disk", "v1alpha1", true}, {"smb", "v1beta2", true},
		{"filesystem", "v1beta1", true}, {"volume", "v1alpha1", true},
		{"disk", "v1", false}, {"volume", "v2alpha1", false}, {"filesystem", "v2alpha1", false},
		{"iscsi", "v1alpha2", false}, {"system", "v1alpha1", false},
	} {
		if got := Deprecated(adapter.API{Group: tc.group, Version: tc.version}); got != tc.want {
			t.Errorf("Deprecated(%s %s) = %v, want %v", tc.group, tc.version, got, tc.want)
		}
	}
}

// deprecatedSmbAPI is an smb API under a v1beta version (unique per test,
// for Windows' global pipe names), so calls on it are deprecated ones.
func deprecatedSmbAPI(f *callerSmb) adapter.API {
	return smbAPIOf("smb", "v1beta"+uniqueGroup(), f)
}

// Over the wire: the rule that allowed a call labels calls_total, a call
// on a deprecated version counts in deprecated_api_calls_total and is
// noted once per caller (one log line however many calls), a denied call
// is rule "none", and health checks answer with the daemon's build.
func TestRuleLabelAndDeprecations(t *testing.T) {
	logs := captureLogs(t, 0)
	m := metrics.New(version.Get())
	cfg := testConfig(t)
	cfg.Metrics = m
	cfg.Policy = writePolicy(t, `
rules:
- name: smb-driver
  callers: [{any: true}]
  allow: [{groups: [smb], methods: ["NewSmbGlobalMapping"]}]
`)
	cfg.Deprecations = NewDeprecations(0)
	cfg.Build = "csi-node-proxy v9.8.7-test"
	api := deprecatedSmbAPI(&callerSmb{})
	s := start(t, cfg, api)
	cc := dial(t, s.Endpoints()[0].Address)
	c := smbv1.NewSmbClient(cc)
	for range 3 {
		if _, err := c.NewSmbGlobalMapping(callCtx(t), &smbv1.NewSmbGlobalMappingRequest{RemotePath: `\\srv\share`}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.RemoveSmbGlobalMapping(callCtx(t), &smbv1.RemoveSmbGlobalMappingRequest{RemotePath: `\\srv\share`}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("denied call: %v", err)
	}
	var header metadata.MD
	if _, err := healthpb.NewHealthClient(cc).Check(callCtx(t), &healthpb.HealthCheckRequest{}, grpc.Header(&header)); err != nil {
		t.Fatal(err)
	}
	if got := header.Get(VersionHeader); len(got) != 1 || got[0] != cfg.Build {
		t.Errorf("health check header %s = %q, want %q", VersionHeader, got, cfg.Build)
	}

	got := series(t, m)
	g, v := api.Group, api.Version
	for key, want := range map[string]float64{
		"csi_node_proxy_calls_total{code=OK,group=" + g + ",method=NewSmbGlobalMapping,rule=smb-driver,version=" + v + "}":            3,
		"csi_node_proxy_calls_total{code=PermissionDenied,group=" + g + ",method=RemoveSmbGlobalMapping,rule=none,version=" + v + "}": 1,
		"csi_node_proxy_deprecated_api_calls_total{group=" + g + ",rule=smb-driver,version=" + v + "}":                                3,
	} {
		if val, ok := got[key]; !ok || val != want {
			t.Errorf("%s = %v (present %v), want %v", key, val, ok, want)
		}
	}
	r := cfg.Deprecations.Report()
	if len(r.Uses) != 1 {
		t.Fatalf("report %+v, want one caller", r)
	}
	u := r.Uses[0]
	if u.Group != g || u.Version != v || u.Rule != "smb-driver" || u.Calls != 3 || u.LastMethod != "NewSmbGlobalMapping" ||
		u.FirstSeen.IsZero() || u.LastSeen.Before(u.FirstSeen) || strings.Contains(u.Caller, "pid") {
		t.Errorf("use %+v", u)
	}
	if runtime.GOOS == "linux" && (u.LastPID != os.Getpid() || !strings.Contains(u.Caller, "uid")) {
		t.Errorf("use %+v, want this process's uid and pid %d", u, os.Getpid())
	}
	if n := strings.Count(logs.String(), "deprecated API version"); n != 1 {
		t.Errorf("%d log lines about the deprecated version, want 1 for one caller:\n%s", n, logs.String())
	}
}

// A v1 call is not deprecated and counts under rule "none" without a
// policy; health checks carry no header when no build is set.
func TestNotDeprecatedWithoutPolicy(t *testing.T) {
	captureLogs(t, 0)
	m := metrics.New(version.Get())
	cfg := testConfig(t)
	cfg.Metrics, cfg.Deprecations = m, NewDeprecations(0)
	api := smbAPIOf(uniqueGroup(), "v1", &callerSmb{}) // v1 of a made-up group: never deprecated
	s := start(t, cfg, api)
	cc := dial(t, s.Endpoints()[0].Address)
	if _, err := smbv1.NewSmbClient(cc).NewSmbGlobalMapping(callCtx(t), &smbv1.NewSmbGlobalMappingRequest{RemotePath: `\\s\x`}); err != nil {
		t.Fatal(err)
	}
	var header metadata.MD
	if _, err := healthpb.NewHealthClient(cc).Check(callCtx(t), &healthpb.HealthCheckRequest{}, grpc.Header(&header)); err != nil {
		t.Fatal(err)
	}
	if got := header.Get(VersionHeader); len(got) != 0 {
		t.Errorf("header %q without a build", got)
	}
	got := series(t, m)
	if key := "csi_node_proxy_calls_total{code=OK,group=" + api.Group + ",method=NewSmbGlobalMapping,rule=none,version=v1}"; got[key] != 1 {
		t.Errorf("%s = %v, want 1", key, got[key])
	}
	for key := range got {
		if strings.HasPrefix(key, "csi_node_proxy_deprecated_api_calls_total") {
			t.Errorf("a v1 call counted as deprecated: %s", key)
		}
	}
	if r := cfg.Deprecations.Report(); len(r.Uses) != 0 {
		t.Errorf("report %+v after a v1 call", r)
	}
}

// Deprecations is bounded: past its limit further callers are counted as
// untracked, never remembered.
func TestDeprecationsBounded(t *testing.T) {
	captureLogs(t, 0)
	d := NewDeprecations(2)
	api := adapter.API{Group: "disk", Version: "v1beta3"}
	for i, uid := range []uint32{1, 2, 3, 4, 1} {
		c := identityWithUID(uid, 100+i)
		d.note("csi-proxy-disk-v1beta3", api, "", c, "ListDiskIDs")
	}
	r := d.Report()
	if len(r.Uses) != 2 || r.Untracked != 2 || r.Uses[0].Calls+r.Uses[1].Calls != 3 {
		t.Errorf("report %+v, want 2 callers (3 calls) and 2 untracked", r)
	}
	if r.Uses[0].Rule != metrics.NoRule {
		t.Errorf("rule %q, want %q", r.Uses[0].Rule, metrics.NoRule)
	}
}

// unavailableSystem fails as a host that cannot be reached does.
type unavailableSystem struct {
	systemv1alpha1.UnimplementedSystemServer
}

func (unavailableSystem) GetService(context.Context, *systemv1alpha1.GetServiceRequest) (*systemv1alpha1.GetServiceResponse, error) {
	return nil, status.Error(codes.Unavailable, "the service control manager does not answer")
}

// A failure that is the daemon's or the host's (Unavailable here; Internal
// and Unknown in TestLogging) is logged at error level.
func TestHostUnavailableLoggedAsError(t *testing.T) {
	logs := captureLogs(t, 0)
	api := systemAPI(newFakeSystem())
	api.Register = func(s grpc.ServiceRegistrar, _ groups.Set) {
		systemv1alpha1.RegisterSystemServer(s, unavailableSystem{})
	}
	s := start(t, testConfig(t), api)
	c := systemv1alpha1.NewSystemClient(dial(t, s.Endpoints()[0].Address))
	if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "x"}); status.Code(err) != codes.Unavailable {
		t.Fatal(err)
	}
	found := false
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `"call failed"`) && strings.Contains(l, `code="Unavailable"`) {
			found = true
			if !strings.HasPrefix(l, "E") {
				t.Errorf("an Unavailable failure logged below error level: %s", l)
			}
		}
	}
	if !found {
		t.Errorf("no call-failed line:\n%s", logs.String())
	}
}

// Two servers with different prefixes serve the same group-version side
// by side in one socket directory; a bad prefix is refused.
func TestEndpointPrefix(t *testing.T) {
	captureLogs(t, 0)
	cfg := testConfig(t)
	api := systemAPI(newFakeSystem())
	a := start(t, cfg, api)
	cfg.EndpointPrefix = "csi-node-proxy"
	b := start(t, cfg, api)
	ea, eb := a.Endpoints()[0], b.Endpoints()[0]
	if want := transport.EndpointName("", api.Group, api.Version); !strings.HasSuffix(ea.Address, want+transport.SocketSuffix) && !strings.HasSuffix(ea.Address, want) {
		t.Errorf("default prefix: address %s, want the name %s", ea.Address, want)
	}
	if !strings.Contains(eb.Address, "csi-node-proxy-"+api.Group+"-"+api.Version) {
		t.Errorf("prefixed address %s", eb.Address)
	}
	for _, ep := range []Endpoint{ea, eb} {
		c := systemv1alpha1.NewSystemClient(dial(t, ep.Address))
		if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "ok"}); err != nil {
			t.Errorf("%s: %v", ep.Address, err)
		}
	}
	cfg.EndpointPrefix = "../x"
	if _, err := New(cfg, groups.Set{}, []adapter.API{api}); err == nil {
		t.Error("a prefix with a path separator was accepted")
	}
}

// Ready fails before Start, passes while every endpoint answers, fails
// naming the endpoint whose socket disappeared, and fails after Stop.
func TestReady(t *testing.T) {
	captureLogs(t, 0)
	cfg := testConfig(t)
	sys, smb := systemAPI(newFakeSystem()), smbAPI()
	s, err := newServer(cfg, sys, smb)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(callCtx(t)); err == nil {
		t.Error("ready before Start")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(callCtx(t)); err != nil {
		t.Errorf("not ready while serving: %v", err)
	}
	if runtime.GOOS != "windows" {
		gone := s.Endpoints()[1]
		if err := os.Remove(gone.Address); err != nil {
			t.Fatal(err)
		}
		err := s.Ready(callCtx(t))
		if err == nil || !strings.Contains(err.Error(), smb.Name()) || strings.Contains(err.Error(), sys.Name()) {
			t.Errorf("Ready with %s removed = %v, want an error naming it alone", gone.Address, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(callCtx(t)); err == nil {
		t.Error("ready after Stop")
	}
}

// identityWithUID is a Linux caller with uid and pid.
func identityWithUID(uid uint32, pid int) identity.Caller {
	return identity.Caller{PID: pid, HasUnixIDs: true, UID: uid, GID: uid}
}
