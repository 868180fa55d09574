//go:build unix

package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/httpcall"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// noRuntimeWarning begins the warning for a policy naming pods or
// containers when no container runtime is asked.
const noRuntimeWarning = "no container runtime (CRI) endpoint is configured"

// TestIdentityWarningsLoggedAndReady: a policy selecting callers by pod
// namespace while --cri-endpoint is empty is warned about in the log at
// start and on /readyz, which stays 200; when a reload installs a policy
// that needs no runtime the warning leaves /readyz, and a reload bringing
// it back logs it again.
func TestIdentityWarningsLoggedAndReady(t *testing.T) {
	if len(adapter.All()) == 0 {
		t.Skip("the adapter registry is empty: nothing to serve")
	}
	logs := captureKlog(t)
	dir := sockdir.New(t, "cnp") // short: socket paths stay under 108 bytes
	pol := filepath.Join(dir, "policy.yaml")
	const byNamespace = "rules:\n- {name: ns, callers: [{namespaces: [kube-system]}], allow: [{methods: ['*']}]}\n"
	const byUID = "rules:\n- {name: uid, callers: [{uids: [0]}], allow: [{methods: ['*']}]}\n"
	writeFile(t, pol, byNamespace)
	cfg, err := parseFlags([]string{"--host=simulated", "--socket-dir=" + filepath.Join(dir, "run"), "--policy=" + pol,
		"--policy-reload-interval=20ms", "--cri-endpoint=", "--apis=disk-v1", "--metrics-bind-address=127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	serveInProcess(t, cfg)
	if n := strings.Count(logs.String(), noRuntimeWarning); n != 1 {
		t.Errorf("the log has %d warnings about the missing runtime at start, want 1:\n%s", n, logs)
	}
	addr := metricsAddress(t, logs.String())
	waitReady(t, addr)
	readyz := "http://" + addr + "/readyz"
	if code, body := httpcall.Get(t, readyz); code != http.StatusOK || !strings.HasPrefix(body, "ok\nwarning: ") || !strings.Contains(body, noRuntimeWarning) {
		t.Errorf("/readyz = %d %q, want ready with the warning", code, body)
	}

	writeFile(t, pol, byUID)
	waitUntil(t, "/readyz drops the warning after the reload", func() bool {
		code, body := httpcall.Get(t, readyz)
		return code == http.StatusOK && body == "ok\n"
	})
	writeFile(t, pol, byNamespace)
	waitUntil(t, "the reload brings the warning back", func() bool {
		_, body := httpcall.Get(t, readyz)
		return strings.Contains(body, noRuntimeWarning) && strings.Count(logs.String(), noRuntimeWarning) == 2
	})
}

// TestPolicyAdmitsNobodyWarned: the shipped default policy (the
// node-admin preset alone) lets no caller change the node; the daemon
// warns at start and /readyz (?verbose too) stays 200 and names the
// failing check, ready but degraded. Naming a driver's preset (a reload)
// clears it; an audit-only policy is warned about as such.
func TestPolicyAdmitsNobodyWarned(t *testing.T) {
	if len(adapter.All()) == 0 {
		t.Skip("the adapter registry is empty: nothing to serve")
	}
	logs := captureKlog(t)
	dir := sockdir.New(t, "cnp")
	pol := filepath.Join(dir, "policy.yaml")
	writeFile(t, pol, "presets: [node-admin]\nrules: []\n")
	cfg, err := parseFlags([]string{"--host=simulated", "--socket-dir=" + filepath.Join(dir, "run"), "--policy=" + pol,
		"--policy-reload-interval=20ms", "--cri-endpoint=", "--apis=disk-v1", "--metrics-bind-address=127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	serveInProcess(t, cfg)
	const check = "policy-admits-a-driver failed"
	if n := strings.Count(logs.String(), check); n != 1 {
		t.Errorf("the log warns %d times at start that the policy admits nobody, want 1:\n%s", n, logs)
	}
	addr := metricsAddress(t, logs.String())
	waitReady(t, addr)
	// /readyz lists it as a failed degraded-only check: still 200.
	if code, body := httpcall.Get(t, "http://"+addr+"/readyz"); code != http.StatusOK || body != "ok (degraded: policy-admits-a-driver)\n" {
		t.Errorf("/readyz = %d %q, want 200, degraded by the check", code, body)
	}
	if code, body := httpcall.Get(t, "http://"+addr+"/readyz?verbose"); code != http.StatusOK ||
		!strings.Contains(body, "[-]policy-admits-a-driver failed (degraded, still ready): ") || !strings.Contains(body, "rules: node-admin") {
		t.Errorf("/readyz?verbose = %d %q, want ready, naming the failed check and why", code, body)
	}
	writeFile(t, pol, "presets: [node-admin, azuredisk]\nrules: []\n")
	waitUntil(t, "/readyz drops the warning once a driver is named", func() bool {
		code, body := httpcall.Get(t, "http://"+addr+"/readyz?verbose")
		return code == http.StatusOK && strings.Contains(body, "[+]policy-admits-a-driver ok")
	})
	writeFile(t, pol, "mode: audit-only\npresets: [node-admin, azuredisk]\nrules: []\n")
	waitUntil(t, "/readyz says the policy is audit-only", func() bool {
		code, body := httpcall.Get(t, "http://"+addr+"/readyz")
		return code == http.StatusOK && strings.Contains(body, "audit-only")
	})
}
