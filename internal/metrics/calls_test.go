package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/httpcall"
)

// TestCallsByRule: calls_total counts API calls (not health checks) by
// method, code and the rule a handler below named with SetRule; a call no
// rule was named for is "none". DeprecatedCall counts by rule the same way.
func TestCallsByRule(t *testing.T) {
	m := New(testBuild)
	ui := m.UnaryServerInterceptor(Endpoint{Group: "disk", Version: "v1beta3", Service: "v1beta3.Disk"})
	call := func(method, rule string, err error) {
		_, _ = ui(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: method},
			func(ctx context.Context, _ any) (any, error) {
				if rule != "" {
					SetRule(ctx, rule)
				}
				return nil, err
			})
	}
	call("/v1beta3.Disk/ListDiskIDs", "azure-disk", nil)
	call("/v1beta3.Disk/ListDiskIDs", "azure-disk", nil)
	call("/v1beta3.Disk/PartitionDisk", "", status.Error(codes.PermissionDenied, "no"))
	call("/grpc.health.v1.Health/Check", "", nil)
	m.DeprecatedCall("disk", "v1beta3", "azure-disk")
	m.DeprecatedCall("disk", "v1beta3", "")
	var nilMetrics *Metrics
	nilMetrics.DeprecatedCall("disk", "v1beta3", "x") // must not panic
	SetRule(context.Background(), "ignored")          // no interceptor above: nothing to set

	fams := gather(t, m)
	for labels, want := range map[string]float64{
		"code=OK,group=disk,method=ListDiskIDs,rule=azure-disk,version=v1beta3":           2,
		"code=PermissionDenied,group=disk,method=PartitionDisk,rule=none,version=v1beta3": 1,
	} {
		if v := value(fams, "csi_node_proxy_calls_total", labels); v != want {
			t.Errorf("calls_total{%s} = %v, want %v", labels, v, want)
		}
	}
	if n := len(fams["csi_node_proxy_calls_total"].GetMetric()); n != 2 {
		t.Errorf("calls_total has %d series, want 2 (health checks are not API calls)", n)
	}
	for labels, want := range map[string]float64{
		"group=disk,rule=azure-disk,version=v1beta3": 1,
		"group=disk,rule=none,version=v1beta3":       1,
	} {
		if v := value(fams, "csi_node_proxy_deprecated_api_calls_total", labels); v != want {
			t.Errorf("deprecated_api_calls_total{%s} = %v, want %v", labels, v, want)
		}
	}
}

// TestServeReadyAndJSON: /readyz follows Extra.Ready (503 with the
// reason while it fails), and Extra's JSON documents are served fresh on
// every request.
func TestServeReadyAndJSON(t *testing.T) {
	notReady := errors.New("csi-proxy-disk-v1: connection refused")
	n := 0
	s, err := Serve("127.0.0.1:0", New(testBuild), Extra{
		Ready: func(ctx context.Context) error {
			if _, ok := ctx.Deadline(); !ok {
				t.Error("Ready got no deadline")
			}
			return notReady
		},
		JSON: map[string]func() any{"/doc": func() any { n++; return map[string]int{"n": n} }},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	base := "http://" + s.Addr()
	if code, body := httpcall.Get(t, base+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "connection refused") {
		t.Errorf("GET /readyz while not ready = %d %q, want 503 with the reason", code, body)
	}
	notReady = nil
	if code, body := httpcall.Get(t, base+"/readyz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("GET /readyz when ready = %d %q", code, body)
	}
	httpcall.Get(t, base+"/doc")
	if code, body := httpcall.Get(t, base+"/doc"); code != http.StatusOK || !strings.Contains(body, `"n": 2`) {
		t.Errorf("GET /doc = %d %q, want a fresh document", code, body)
	}
	if code, _ := httpcall.Do(t, http.MethodPost, base+"/doc"); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /doc = %d, want 405", code)
	}
}

// TestReadyWarnings: /readyz shows Extra.Warnings after its first line,
// as text and, to a client that accepts JSON, as a document, without
// changing whether it succeeds: 200 when ready, 503 when not.
func TestReadyWarnings(t *testing.T) {
	var notReady error
	warnings := []string{"no container runtime (CRI) endpoint is configured"}
	s, err := Serve("127.0.0.1:0", New(testBuild), Extra{
		Ready:    func(context.Context) error { return notReady },
		Warnings: func() []string { return warnings },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	url := "http://" + s.Addr() + "/readyz"
	if code, body := httpcall.Get(t, url); code != http.StatusOK || body != "ok\nwarning: no container runtime (CRI) endpoint is configured\n" {
		t.Errorf("GET /readyz, ready with a warning = %d %q", code, body)
	}
	getJSON := func() (int, readyReport) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var rep readyReport
		if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, rep
	}
	if code, rep := getJSON(); code != http.StatusOK || !rep.Ready || !slices.Equal(rep.Warnings, warnings) {
		t.Errorf("GET /readyz as JSON, ready with a warning = %d %+v", code, rep)
	}
	notReady = errors.New("shutting down")
	if code, body := httpcall.Get(t, url); code != http.StatusServiceUnavailable || body != "not ready: shutting down\nwarning: no container runtime (CRI) endpoint is configured\n" {
		t.Errorf("GET /readyz, not ready with a warning = %d %q", code, body)
	}
	if code, rep := getJSON(); code != http.StatusServiceUnavailable || rep.Ready || rep.Reason != "shutting down" || len(rep.Warnings) != 1 {
		t.Errorf("GET /readyz as JSON, not ready = %d %+v", code, rep)
	}
	notReady, warnings = nil, nil
	if code, body := httpcall.Get(t, url); code != http.StatusOK || body != "ok\n" {
		t.Errorf("GET /readyz without warnings = %d %q", code, body)
	}
}

// TestReadyzVerbose: /readyz?verbose lists every check as kube-apiserver
// does; a degraded-only check that fails is listed and named but keeps
// /readyz at 200; an unready one makes it 503; /livez?verbose lists ping.
func TestReadyzVerbose(t *testing.T) {
	var endpointsErr, policyErr error
	s, err := Serve("127.0.0.1:0", New(testBuild), Extra{
		Ready:  func(context.Context) error { return endpointsErr },
		Checks: []ReadyCheck{{Name: "policy", DegradedOnly: true, Check: func(context.Context) error { return policyErr }}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	base := "http://" + s.Addr()
	if code, body := httpcall.Get(t, base+"/readyz?verbose"); code != http.StatusOK || body != "[+]ping ok\n[+]endpoints ok\n[+]policy ok\nreadyz check passed\n" {
		t.Errorf("ready: %d %q", code, body)
	}
	policyErr = errors.New("admits no caller")
	if code, body := httpcall.Get(t, base+"/readyz?verbose"); code != http.StatusOK || !strings.Contains(body, "[-]policy failed (degraded, still ready): admits no caller\n") || !strings.HasSuffix(body, "readyz check passed\n") {
		t.Errorf("degraded: %d %q", code, body)
	}
	if code, body := httpcall.Get(t, base+"/readyz"); code != http.StatusOK || body != "ok (degraded: policy)\n" {
		t.Errorf("degraded, short: %d %q", code, body)
	}
	endpointsErr = errors.New("disk endpoint down")
	if code, body := httpcall.Get(t, base+"/readyz?verbose"); code != http.StatusServiceUnavailable || !strings.Contains(body, "[-]endpoints failed: disk endpoint down\n") || !strings.HasSuffix(body, "readyz check failed\n") {
		t.Errorf("unready: %d %q", code, body)
	}
	if code, body := httpcall.Get(t, base+"/livez?verbose"); code != http.StatusOK || body != "[+]ping ok\nlivez check passed\n" {
		t.Errorf("livez: %d %q", code, body)
	}
}
