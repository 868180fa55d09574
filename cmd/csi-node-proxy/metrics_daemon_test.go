//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	diskv1beta3 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1beta3"
	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
	systemv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/system/v1alpha1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
)

// What the metrics test sends; none of it may appear in /metrics.
const (
	metricsVersion  = "v9.8.7-metrics"
	metricsCommit   = "0123456789abcdef"
	allowedPath     = `C:\var\lib\kubelet\pods\pod-0001\volumes\vol-a`
	deniedPath      = `C:\var\lib\kubelet\plugins\kubernetes.io\csi\pv-secret-77`
	missingVolumeID = `\\?\Volume{00000000-0000-4000-8000-0000000000e2}\`
	smbRemote       = `\\fileserver\secret-share`
	smbUser         = `CONTOSO\metrics-user`
	smbPassword     = "Metr1cs-P@ssw0rd"
)

// metricsPolicy allows the reads the test makes, the SMB mapping, and
// PathExists only under the pods directory; nothing allows StartService.
const metricsPolicy = `
rules:
- name: reads
  callers: [{any: true}]
  allow:
  - methods: [disk.ListDiskLocations, disk.GetDiskStats, volume.GetVolumeStats, smb.NewSmbGlobalMapping]
- name: pods-only
  callers: [{any: true}]
  allow:
  - methods: [filesystem.PathExists]
  pathRoots: ['C:\var\lib\kubelet\pods']
`

// upstreamBuckets are upstream csi-proxy v1.3.0's handling-time buckets.
var upstreamBuckets = []float64{0.001, 0.01, 0.1, 0.3, 0.6, 1, 3, 6, 9, 20, 30, 60, 90, 120}

// safeLabel is every character a label value may have: names, codes,
// versions and bucket bounds. No path separator, drive colon, brace,
// space or quote.
var safeLabel = regexp.MustCompile(`^[A-Za-z0-9_.+-]*$`)

// scrape fetches and parses /metrics.
func scrape(t *testing.T, addr string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d, %v", resp.StatusCode, err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, b)
	}
	return fams, string(b)
}

// metricWith returns the family's series whose labels include want, or
// nil.
func metricWith(f *dto.MetricFamily, want map[string]string) []*dto.Metric {
	var out []*dto.Metric
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

// one returns the single series of name with exactly labels (given as
// k=v pairs), failing the test when there is none.
func one(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	t.Helper()
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	ms := metricWith(fams[name], want)
	for _, m := range ms {
		if len(m.GetLabel()) == len(want) {
			return m
		}
	}
	t.Errorf("no series %s%v", name, want)
	return &dto.Metric{}
}

// TestDaemonMetrics runs the real binary on the simulated host with
// metrics on port 0 and a policy, makes successful, failing and denied
// calls on five groups, scrapes /metrics and checks the series upstream
// csi-proxy's dashboards use and csi-node-proxy's own, with plausible
// values, and that no label carries anything from a request.
func TestDaemonMetrics(t *testing.T) {
	if len(adapter.All()) == 0 {
		t.Skip("the adapter registry is empty: nothing to serve")
	}
	bin := buildStamped(t, map[string]string{"Version": metricsVersion, "Commit": metricsCommit})
	policyPath := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, policyPath, metricsPolicy)

	d := startDaemon(t, bin, "csi-proxy-system-v1alpha1", "-metrics-bind-address=127.0.0.1:0", "--policy="+policyPath, "-v=2")
	addr := metricsAddress(t, d.stderr.String())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// The calls, with the codes they must get.
	dc := diskv1.NewDiskClient(d.conn(t, "csi-proxy-disk-v1"))
	for range 2 {
		if _, err := dc.ListDiskLocations(ctx, &diskv1.ListDiskLocationsRequest{}); err != nil {
			t.Fatalf("ListDiskLocations: %v", err)
		}
	}
	if _, err := dc.GetDiskStats(ctx, &diskv1.GetDiskStatsRequest{DiskNumber: 99}); status.Code(err) != codes.NotFound {
		t.Fatalf("GetDiskStats(99) = %v, want NotFound", err)
	}
	fc := filesystemv1.NewFilesystemClient(d.conn(t, "csi-proxy-filesystem-v1"))
	if _, err := fc.PathExists(ctx, &filesystemv1.PathExistsRequest{Path: allowedPath}); err != nil {
		t.Fatalf("PathExists under the pods root: %v", err)
	}
	if _, err := fc.PathExists(ctx, &filesystemv1.PathExistsRequest{Path: deniedPath}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("PathExists outside the root = %v, want PermissionDenied", err)
	}
	sc := systemv1alpha1.NewSystemClient(d.conn(t, "csi-proxy-system-v1alpha1"))
	if _, err := sc.StartService(ctx, &systemv1alpha1.StartServiceRequest{Name: "W32Time"}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("StartService = %v, want PermissionDenied", err)
	}
	vc := volumev1.NewVolumeClient(d.conn(t, "csi-proxy-volume-v1"))
	if _, err := vc.GetVolumeStats(ctx, &volumev1.GetVolumeStatsRequest{VolumeId: missingVolumeID}); status.Code(err) != codes.NotFound {
		t.Fatalf("GetVolumeStats of a missing volume = %v, want NotFound", err)
	}
	_, smbErr := smbv1.NewSmbClient(d.conn(t, "csi-proxy-smb-v1")).NewSmbGlobalMapping(ctx, &smbv1.NewSmbGlobalMappingRequest{
		RemotePath: smbRemote, Username: smbUser, Password: smbPassword})
	smbCode := status.Code(smbErr)
	if smbCode == codes.PermissionDenied && strings.Contains(status.Convert(smbErr).Message(), "may not call") {
		t.Fatalf("the policy refused the SMB mapping: %v", smbErr)
	}
	if _, err := healthpb.NewHealthClient(d.conn(t, "csi-proxy-disk-v1")).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("health: %v", err)
	}

	// A deprecated version's call, for the deprecation series the
	// alert rules and the dashboard read.
	beta := diskv1beta3.NewDiskClient(d.conn(t, "csi-proxy-disk-v1beta3"))
	if _, err := beta.ListDiskLocations(ctx, &diskv1beta3.ListDiskLocationsRequest{}); err != nil {
		t.Fatalf("v1beta3 ListDiskLocations: %v", err)
	}

	fams, body := scrape(t, addr)
	checkMonitoring(t, fams)

	// Upstream's series: each call once under its service and method,
	// with the code the client got.
	type call struct {
		service, method string
		codes           map[string]float64
	}
	calls := []call{
		{"v1.Disk", "ListDiskLocations", map[string]float64{"OK": 2}},
		{"v1.Disk", "GetDiskStats", map[string]float64{"NotFound": 1}},
		{"v1.Filesystem", "PathExists", map[string]float64{"OK": 1, "PermissionDenied": 1}},
		{"v1alpha1.System", "StartService", map[string]float64{"PermissionDenied": 1}},
		{"v1.Volume", "GetVolumeStats", map[string]float64{"NotFound": 1}},
		{"v1.Smb", "NewSmbGlobalMapping", map[string]float64{smbCode.String(): 1}},
		{"grpc.health.v1.Health", "Check", map[string]float64{"OK": 1}},
	}
	for _, c := range calls {
		l := []string{"grpc_type", "unary", "grpc_service", c.service, "grpc_method", c.method}
		total := 0.0
		for code, n := range c.codes {
			if v := one(t, fams, "grpc_server_handled_total", append(l, "grpc_code", code)...).GetCounter().GetValue(); v != n {
				t.Errorf("grpc_server_handled_total %s/%s %s = %v, want %v", c.service, c.method, code, v, n)
			}
			total += n
		}
		if handled := len(metricWith(fams["grpc_server_handled_total"], map[string]string{"grpc_service": c.service, "grpc_method": c.method})); handled != len(c.codes) {
			t.Errorf("%s/%s has %d grpc_code series, want %d", c.service, c.method, handled, len(c.codes))
		}
		for _, name := range []string{"grpc_server_started_total", "grpc_server_msg_received_total", "grpc_server_msg_sent_total"} {
			if v := one(t, fams, name, l...).GetCounter().GetValue(); v != total {
				t.Errorf("%s %s/%s = %v, want %v", name, c.service, c.method, v, total)
			}
		}
		h := one(t, fams, "grpc_server_handling_seconds", l...).GetHistogram()
		if float64(h.GetSampleCount()) != total || h.GetSampleSum() <= 0 || h.GetSampleSum() > 5 {
			t.Errorf("grpc_server_handling_seconds %s/%s: count %d sum %v, want %v calls taking more than 0 and less than 5 s",
				c.service, c.method, h.GetSampleCount(), h.GetSampleSum(), total)
		}
		var bounds []float64
		for _, b := range h.GetBucket() {
			if !math.IsInf(b.GetUpperBound(), 1) { // the text format lists +Inf too
				bounds = append(bounds, b.GetUpperBound())
			}
		}
		if !slices.Equal(bounds, upstreamBuckets) {
			t.Errorf("grpc_server_handling_seconds buckets %v, want upstream's %v", bounds, upstreamBuckets)
		}
	}

	// Host operations: one per call that reached the host, none for
	// denied calls.
	hostOp := func(group, op, code string) *dto.Histogram {
		return one(t, fams, "csi_node_proxy_host_operation_duration_seconds",
			"backend", "simulated", "group", group, "operation", op, "code", code).GetHistogram()
	}
	for _, op := range []struct {
		group, op, code string
		n               uint64
	}{
		{"disk", "ListDiskLocations", "OK", 3}, // v1 twice, v1beta3 once
		{"disk", "DiskSize", "NotFound", 1},
		{"filesystem", "PathExists", "OK", 1},
		{"volume", "VolumeStats", "NotFound", 1},
	} {
		h := hostOp(op.group, op.op, op.code)
		if h.GetSampleCount() != op.n || h.GetSampleSum() < 0 || h.GetSampleSum() > 5 {
			t.Errorf("host %s.%s %s: count %d sum %v, want %d", op.group, op.op, op.code, h.GetSampleCount(), h.GetSampleSum(), op.n)
		}
	}
	if smb := metricWith(fams["csi_node_proxy_host_operation_duration_seconds"], map[string]string{"group": "smb", "operation": "NewSmbGlobalMapping"}); len(smb) != 1 {
		t.Errorf("the SMB mapping reached the host %d times in the metrics, want 1", len(smb))
	}
	if sys := metricWith(fams["csi_node_proxy_host_operation_duration_seconds"], map[string]string{"group": "system"}); len(sys) != 0 {
		t.Error("a denied StartService reached the host")
	}

	// Denials, by fixed reason.
	for _, dn := range [][4]string{{"filesystem", "v1", "PathExists", "path"}, {"system", "v1alpha1", "StartService", "no_rule"}} {
		if v := one(t, fams, "csi_node_proxy_denied_calls_total", "group", dn[0], "version", dn[1], "method", dn[2], "reason", dn[3]).GetCounter().GetValue(); v != 1 {
			t.Errorf("denied_calls_total %v = %v, want 1", dn, v)
		}
	}
	if n := len(fams["csi_node_proxy_denied_calls_total"].GetMetric()); n != 2 {
		t.Errorf("%d denied_calls_total series, want 2", n)
	}

	// Nothing in flight, and a series for every endpoint.
	inFlight := fams["csi_node_proxy_in_flight_calls"].GetMetric()
	if len(inFlight) != len(adapter.All()) {
		t.Errorf("%d in_flight_calls series, want one per endpoint (%d)", len(inFlight), len(adapter.All()))
	}
	for _, m := range inFlight {
		if m.GetGauge().GetValue() != 0 {
			t.Errorf("in_flight_calls %v = %v after every call returned", m.GetLabel(), m.GetGauge().GetValue())
		}
	}

	if v := one(t, fams, "csi_node_proxy_build_info", "version", metricsVersion, "commit", metricsCommit, "go_version", runtime.Version()).GetGauge().GetValue(); v != 1 {
		t.Errorf("build_info = %v, want 1", v)
	}
	for _, name := range []string{"csi_node_proxy_audit_write_failures_total", "csi_node_proxy_audit_torn_writes_total", "csi_node_proxy_policy_reload_failures_total"} {
		if v := one(t, fams, name).GetCounter().GetValue(); v != 0 {
			t.Errorf("%s = %v, want 0", name, v)
		}
	}
	if v := one(t, fams, "csi_node_proxy_audit_log_healthy").GetGauge().GetValue(); v != 1 {
		t.Errorf("csi_node_proxy_audit_log_healthy without an audit log = %v, want 1", v)
	}
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes"} {
		if fams[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}

	// Cardinality and privacy: every label value is a name, a code, a
	// version or a bucket bound; nothing the calls sent appears anywhere.
	var names []string
	for name, f := range fams {
		names = append(names, name)
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if !safeLabel.MatchString(l.GetValue()) {
					t.Errorf("%s has label %s=%q", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
	for _, leak := range []string{allowedPath, deniedPath, missingVolumeID, smbRemote, smbUser, smbPassword,
		"kubelet", "pv-secret", "Volume{", "fileserver", "metrics-user", "P@ss", "W32Time"} {
		if strings.Contains(body, leak) {
			t.Errorf("/metrics contains %q", leak)
		}
	}
	sort.Strings(names)
	t.Logf("%d metric families: %s", len(names), strings.Join(names, " "))

	// Shutdown takes the metrics endpoint down with the daemon.
	d.stop(t)
	if !strings.Contains(d.stderr.String(), `"Serving metrics" address="127.0.0.1:`) {
		t.Error("the log does not name the metrics address")
	}
	if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
		resp.Body.Close()
		t.Error("/metrics still answers after the daemon exited")
	}
}

// TestDaemonMetricsBadAddress: an address that cannot be listened on
// stops the daemon at start, before any endpoint exists.
func TestDaemonMetricsBadAddress(t *testing.T) {
	bin := buildDaemon(t)
	for _, addr := range []string{"nonsense", "127.0.0.1:99999"} {
		sockDir := t.TempDir()
		code, stderr := daemonbin.RunToExit(t, bin, "--host=simulated", "--socket-dir="+sockDir, "-metrics-bind-address="+addr)
		if code != exitFailure {
			t.Errorf("-metrics-bind-address=%s: exit status %d, want %d", addr, code, exitFailure)
		}
		if !strings.Contains(stderr, `metrics address "`+addr+`"`) {
			t.Errorf("-metrics-bind-address=%s: stderr %q does not say why", addr, stderr)
		}
		if strings.Contains(stderr, `"Serving" api=`) {
			t.Errorf("-metrics-bind-address=%s: endpoints were served before the failure", addr)
		}
	}
}
