//go:build unix

package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/fakecri"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/httpcall"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// TestRuntimeMissingWarnedAndInReadyz: a container runtime that is not
// there at start is a warning in the log; /readyz stays 200 with a
// warning while the policy needs nothing the runtime tells, and is 503
// while a rule selects callers by namespace (drivers it admits would be
// refused). Once a runtime serves the socket, /readyz is 200 with no
// warning (issue 23, item 4).
func TestRuntimeMissingWarnedAndInReadyz(t *testing.T) {
	if len(adapter.All()) == 0 {
		t.Skip("the adapter registry is empty: nothing to serve")
	}
	logs := captureKlog(t)
	dir := sockdir.New(t, "cnp")
	pol := filepath.Join(dir, "policy.yaml")
	const byUID = "rules:\n- {name: uid, callers: [{uids: [0]}], allow: [{methods: ['*']}]}\n"
	const byNamespace = "rules:\n- {name: ns, callers: [{namespaces: [kube-system]}], allow: [{methods: ['*']}]}\n"
	writeFile(t, pol, byUID)
	sock := filepath.Join(dir, "cri.sock")
	cfg, err := parseFlags([]string{"--host=simulated", "--socket-dir=" + filepath.Join(dir, "run"), "--policy=" + pol,
		"--policy-reload-interval=20ms", "--cri-endpoint=unix://" + sock, "--apis=disk-v1", "--metrics-bind-address=127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	serveInProcess(t, cfg)
	if !strings.Contains(logs.String(), "The container runtime does not answer") {
		t.Errorf("no warning at start about the missing runtime:\n%s", logs)
	}
	readyz := "http://" + metricsAddress(t, logs.String()) + "/readyz"
	const noAnswer = "the container runtime does not answer"
	if code, body := httpcall.Get(t, readyz); code != http.StatusOK || !strings.Contains(body, "warning: "+noAnswer) {
		t.Errorf("/readyz with no runtime and a policy by uid = %d %q, want 200 with a warning", code, body)
	}
	writeFile(t, pol, byNamespace)
	waitUntil(t, "/readyz fails while the policy needs the missing runtime", func() bool {
		code, body := httpcall.Get(t, readyz)
		return code == http.StatusServiceUnavailable && strings.Contains(body, "rule ns: namespaces")
	})
	var rt fakecri.Runtime
	rt.Serve(t, sock)
	waitUntil(t, "/readyz is ready once the runtime answers", func() bool {
		code, body := httpcall.Get(t, readyz)
		return code == http.StatusOK && body == "ok\n"
	})
}
