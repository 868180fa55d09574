//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	diskv1beta3 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1beta3"
	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/httpcall"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/syncbuf"
)

// opsPolicy names the rule the beta calls are allowed by, so the rule
// label and the deprecation report can be checked.
const opsPolicy = `
rules:
- name: old-driver
  callers: [{any: true}]
  allow: [{groups: [disk], methods: ["*"]}]
`

// jsonLines parses every line of a JSON log, failing on a line that is
// not one JSON object with Kubernetes' ts, caller and msg.
func jsonLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %q: %v", sc.Text(), err)
		}
		for _, k := range []string{"ts", "caller", "msg"} {
			if _, ok := m[k]; !ok {
				t.Errorf("log line without %s: %s", k, sc.Text())
			}
		}
		out = append(out, m)
	}
	return out
}

// waitReady polls /readyz until it answers 200.
func waitReady(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := httpcall.Get(t, "http://"+addr+"/readyz")
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never ready: %d %q", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDaemonOperations runs two real daemons side by side in one socket
// directory, one with upstream's endpoint names and one with the prefix a
// migration would give the second, and checks what operators rely on:
// JSON logs, /healthz and /readyz (which fails while an endpoint is
// gone), the daemon's build in health answers and /version, and the
// deprecation signals of a v1beta3 call: the metric, the rule label, one
// log line, and the /deprecated report csi-node-proxyctl reads.
func TestDaemonOperations(t *testing.T) {
	bin := buildDaemon(t)
	dir := sockdir.New(t, "cnp")
	sockDir := filepath.Join(dir, "run")
	policyPath := filepath.Join(dir, "policy.yaml")
	writeFile(t, policyPath, opsPolicy)

	start := func(prefix string) (*daemon, string) {
		d := &daemon{stderr: &syncbuf.Buffer{}, sockDir: sockDir}
		var addr string
		d.p = daemonbin.Start(t, bin, daemonbin.Options{
			Args: []string{"--host=simulated", "--socket-dir=" + sockDir, "--endpoint-prefix=" + prefix,
				"--logging-format=json", "-metrics-bind-address=127.0.0.1:0", "--policy=" + policyPath, "-v=2"},
			Output: d.stderr, StderrOnly: true, AtEnd: daemonbin.Kill,
			Ready: func() error {
				for _, l := range jsonLines(t, d.stderr.String()) {
					if l["msg"] == "Serving metrics" {
						addr, _ = l["address"].(string)
						return nil
					}
				}
				return fmt.Errorf("daemon %s logged no metrics address", prefix)
			},
			ReadyTimeout: 20 * time.Second,
		})
		d.cmd = d.p.Cmd
		waitReady(t, addr)
		return d, addr
	}
	up, upAddr := start(transport.DefaultEndpointPrefix)
	side, sideAddr := start("csi-node-proxy")

	// Side by side: both sets of sockets in one directory, each daemon
	// answering on its own.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, name := range []string{"csi-proxy-disk-v1", "csi-node-proxy-disk-v1"} {
		cc := up.conn(t, name)
		var header metadata.MD
		r, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{Service: "v1.Disk"}, grpc.Header(&header))
		if err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("%s: health %v, %v", name, r, err)
		}
		if v := header.Get(server.VersionHeader); len(v) != 1 || !strings.HasPrefix(v[0], "csi-node-proxy ") {
			t.Errorf("%s: health answer's %s header = %q, want the daemon's build", name, server.VersionHeader, v)
		}
		if _, err := diskv1.NewDiskClient(cc).ListDiskLocations(ctx, &diskv1.ListDiskLocationsRequest{}); err != nil {
			t.Errorf("%s: ListDiskLocations: %v", name, err)
		}
	}
	code, body := httpcall.Get(t, "http://"+sideAddr+"/version")
	var build buildDoc
	if err := json.Unmarshal([]byte(body), &build); code != http.StatusOK || err != nil ||
		build.EndpointPrefix != "csi-node-proxy" || build.Host != hostSimulated || build.Version == "" || build.GoVersion == "" {
		t.Errorf("GET /version = %d %q (%v)", code, body, err)
	}

	// A driver on a deprecated version, twice.
	beta := diskv1beta3.NewDiskClient(up.conn(t, "csi-proxy-disk-v1beta3"))
	for range 2 {
		if _, err := beta.ListDiskLocations(ctx, &diskv1beta3.ListDiskLocationsRequest{}); err != nil {
			t.Fatalf("v1beta3 ListDiskLocations: %v", err)
		}
	}
	fams, _ := scrape(t, upAddr)
	if v := one(t, fams, "csi_node_proxy_deprecated_api_calls_total", "group", "disk", "version", "v1beta3", "rule", "old-driver").GetCounter().GetValue(); v != 2 {
		t.Errorf("deprecated_api_calls_total = %v, want 2", v)
	}
	if v := one(t, fams, "csi_node_proxy_calls_total", "group", "disk", "version", "v1beta3", "method", "ListDiskLocations", "code", "OK", "rule", "old-driver").GetCounter().GetValue(); v != 2 {
		t.Errorf("calls_total of the beta calls = %v, want 2", v)
	}
	if n := len(fams["csi_node_proxy_deprecated_api_calls_total"].GetMetric()); n != 1 {
		t.Errorf("%d deprecated series, want 1: the v1 calls are not deprecated", n)
	}
	code, body = httpcall.Get(t, "http://"+upAddr+"/deprecated")
	var rep server.DeprecatedReport
	if err := json.Unmarshal([]byte(body), &rep); code != http.StatusOK || err != nil || len(rep.Uses) != 1 {
		t.Fatalf("GET /deprecated = %d %q (%v)", code, body, err)
	}
	if u := rep.Uses[0]; u.Group != "disk" || u.Version != "v1beta3" || u.Rule != "old-driver" || u.Calls != 2 ||
		u.LastPID != os.Getpid() || !strings.Contains(u.Caller, "uid") {
		t.Errorf("deprecated use %+v", u)
	}
	if _, body := httpcall.Get(t, "http://"+sideAddr+"/deprecated"); !strings.Contains(body, `"uses": []`) {
		t.Errorf("the other daemon reports deprecated uses it never saw: %s", body)
	}

	// Readiness follows the endpoints: one socket removed under the first
	// daemon makes it not ready, naming it; the second stays ready.
	if err := os.Remove(up.socket("csi-proxy-volume-v1")); err != nil {
		t.Fatal(err)
	}
	if code, body := httpcall.Get(t, "http://"+upAddr+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "csi-proxy-volume-v1") {
		t.Errorf("/readyz with an endpoint gone = %d %q, want 503 naming it", code, body)
	}
	if code, _ := httpcall.Get(t, "http://"+upAddr+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d: liveness must not follow one endpoint", code)
	}
	if code, _ := httpcall.Get(t, "http://"+sideAddr+"/readyz"); code != http.StatusOK {
		t.Errorf("the side-by-side daemon's /readyz = %d", code)
	}

	up.stop(t)
	side.stop(t)
	lines := jsonLines(t, up.stderr.String())
	notes := 0
	for _, l := range lines {
		if msg, _ := l["msg"].(string); strings.Contains(msg, "deprecated API version") {
			notes++
			if l["v"] == nil || l["group"] != "disk" || l["version"] != "v1beta3" || l["rule"] != "old-driver" {
				t.Errorf("deprecation line %v", l)
			}
		}
	}
	if notes != 1 {
		t.Errorf("%d deprecation log lines for one caller, want 1", notes)
	}
	for _, want := range []string{"csi-node-proxy started", "Shutting down", "Stopped"} {
		found := false
		for _, l := range lines {
			found = found || l["msg"] == want
		}
		if !found {
			t.Errorf("no JSON log line %q", want)
		}
	}
}
