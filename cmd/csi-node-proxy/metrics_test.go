package main

import (
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/callgate"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/metrics"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/klogcapture"
)

// servingMetrics finds the bound address in startMetrics' log line.
var servingMetrics = regexp.MustCompile(`"Serving metrics" address="([^"]+)"`)

// metricsAddress returns the address the daemon's log says metrics are
// served on.
func metricsAddress(t *testing.T, logs string) string {
	t.Helper()
	m := servingMetrics.FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("no \"Serving metrics\" line in the log:\n%s", logs)
	}
	return m[1]
}

// captureKlog sends klog's output to the returned buffer until the test
// ends, and resets the flags the daemon's flag parsing sets.
func captureKlog(t *testing.T) *klogcapture.Buffer {
	t.Helper()
	resetKlog(t)
	return klogcapture.Capture(t, 0)
}

// Metrics are off by default: no server, no Metrics, nothing wrapped.
func TestStartMetricsOff(t *testing.T) {
	resetKlog(t)
	cfg, err := parseFlagsWith([]string{"--host=simulated"}, registry)
	if err != nil {
		t.Fatal(err)
	}
	m, stop, err := startMetrics(cfg, metrics.Extra{})
	if err != nil || m != nil || stop == nil {
		t.Fatalf("startMetrics with no address = %v, stop set %v, %v; want nil, a no-op, nil", m, stop != nil, err)
	}
	stop()
	sim, err := simulated.New(simulated.DefaultConfig(nil))
	if err != nil {
		t.Fatal(err)
	}
	h := hostset.Set{Style: hostpath.Windows, Disk: sim.Disk(), Volume: sim.Volume(), Filesystem: sim.Filesystem(),
		SMB: sim.SMB(), ISCSI: sim.ISCSI(), System: sim.System()}
	if got := instrumentHost(h, nil, hostSimulated); !reflect.DeepEqual(got, h) {
		t.Error("instrumentHost wrapped the host with metrics off")
	}
	trackSecurity(nil, callgate.Gate{}) // must not panic
}

// Port 0 serves on a free port; an address that cannot be listened on is
// a startup error.
func TestStartMetrics(t *testing.T) {
	logs := captureKlog(t)
	m, stop, err := startMetrics(Config{MetricsBindAddress: "127.0.0.1:0"}, metrics.Extra{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if m == nil {
		t.Fatal("no Metrics")
	}
	addr := metricsAddress(t, logs.String())
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok\n" {
		t.Errorf("GET /healthz = %d %q", resp.StatusCode, body)
	}

	for _, bad := range []string{addr, "nonsense", "localhost", "127.0.0.1:99999"} {
		if _, stop2, err := startMetrics(Config{MetricsBindAddress: bad}, metrics.Extra{}); err == nil {
			stop2()
			t.Errorf("-metrics-bind-address=%s started", bad)
		} else if !strings.Contains(err.Error(), "metrics address") {
			t.Errorf("-metrics-bind-address=%s: error %q does not name the flag's subject", bad, err)
		}
	}
}
