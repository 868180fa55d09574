//go:build unix

package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity/cri"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/fakecri"
)

// testContainerID is a full container ID the fake runtime knows.
const testContainerID = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// startRuntime serves the shared fake container runtime on a Unix socket,
// knowing testContainerID with kubelet's labels, and returns its endpoint.
func startRuntime(t *testing.T) string {
	t.Helper()
	var r fakecri.Runtime
	r.Add(testContainerID, fakecri.KubeletLabels("kube-system", "csi-node-abcde", "11111111-2222-3333-4444-555555555555", "driver"), nil)
	return r.Start(t)
}

// TestCRIEndpointFlag: --cri-endpoint (containerd's socket by default)
// becomes the workload resolver of the endpoints' identity options, which
// asks the runtime at that endpoint and stops asking once the daemon's
// security is closed; "" asks no runtime; a runtime that is not there
// does not stop the daemon (its answer is an error per caller); a
// malformed endpoint is a command-line error.
func TestCRIEndpointFlag(t *testing.T) {
	resetKlog(t)
	cfg, err := parseFlagsWith(nil, registry)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CRIEndpoint != cri.DefaultEndpoint {
		t.Errorf("default --cri-endpoint %q, want %q", cfg.CRIEndpoint, cri.DefaultEndpoint)
	}

	endpoint := startRuntime(t)
	cfg, err = parseFlagsWith([]string{"--cri-endpoint=" + endpoint}, registry)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := setupCallers(cfg)
	if err != nil {
		t.Fatal(err)
	}
	scfg := serverConfig(cfg, &hostset.Node{}, ids, nil, nil)
	if scfg.Identity.Workloads == nil {
		t.Fatal("--cri-endpoint set, but the server identifies callers without the runtime")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	w, err := scfg.Identity.Workloads.Workload(ctx, testContainerID)
	if err != nil || w.Namespace != "kube-system" || w.PodName != "csi-node-abcde" || w.ContainerName != "driver" {
		t.Errorf("the runtime at --cri-endpoint says %+v, %v", w, err)
	}
	ids.close()
	if _, err := ids.identity.Workloads.Workload(ctx, strings.Repeat("f", 64)); err == nil {
		t.Error("the runtime was asked after the daemon closed its connection")
	}

	cfg, err = parseFlagsWith([]string{"--cri-endpoint="}, registry)
	if err != nil {
		t.Fatal(err)
	}
	ids, err = setupCallers(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if w := serverConfig(cfg, &hostset.Node{}, ids, nil, nil).Identity.Workloads; w != nil {
		t.Errorf("--cri-endpoint= still asks a runtime (%T)", w)
	}
	ids.close()

	missing := "unix://" + filepath.Join(t.TempDir(), "no-runtime.sock")
	cfg, err = parseFlagsWith([]string{"--cri-endpoint=" + missing}, registry)
	if err != nil {
		t.Fatalf("a runtime socket that does not exist yet is refused: %v", err)
	}
	ids, err = setupCallers(cfg)
	if err != nil {
		t.Fatalf("a runtime socket that does not exist yet stops the daemon: %v", err)
	}
	defer ids.close()
	if _, err := ids.identity.Workloads.Workload(ctx, testContainerID); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("a missing runtime answers %v, want ErrUnavailable", err)
	}

	for _, bad := range []string{"tcp://127.0.0.1:1", "/run/containerd/containerd.sock"} {
		if _, err := parseFlagsWith([]string{"--cri-endpoint=" + bad}, registry); err == nil || !strings.Contains(err.Error(), "-cri-endpoint") {
			t.Errorf("--cri-endpoint=%s: %v, want a command-line error", bad, err)
		}
	}
}

// The runtime resolver reads ServiceAccount tokens below -kubelet-path,
// the daemon's one spelling of the kubelet directory, except on the
// simulated host, whose kubelet directory is not this machine's.
func TestCRIKubeletPath(t *testing.T) {
	resetKlog(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--host=linux"}, "/var/lib/kubelet"},
		{[]string{"--host=linux", "--kubelet-path=/data/kubelet"}, "/data/kubelet"},
		{[]string{"--host=simulated"}, ""},
		{[]string{"--host=simulated", "--kubelet-path=/var/lib/kubelet"}, ""},
	} {
		cfg, err := parseFlagsWith(tc.args, registry)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := criConfig(cfg).KubeletPath; got != tc.want {
			t.Errorf("%v: the runtime resolver reads tokens below %q, want %q", tc.args, got, tc.want)
		}
		ids, err := setupCallers(cfg)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		src, ok := ids.identity.Workloads.(identity.ServiceAccountSource)
		if !ok || (src.ServiceAccountsUnknown() == "") != (tc.want != "") {
			t.Errorf("%v: the daemon's resolver %T does not say whether it reads tokens as configured", tc.args, ids.identity.Workloads)
		}
		ids.close()
	}
}

// TestKubeletCgroupRootFlag: --kubelet-cgroup-root (kubelet's default,
// /, unless given) reaches the endpoints' identity options, and a root
// that is no cgroup path is a command-line error.
func TestKubeletCgroupRootFlag(t *testing.T) {
	resetKlog(t)
	for args, want := range map[string]string{"": identity.DefaultCgroupRoot, "--kubelet-cgroup-root=/kubelet": "/kubelet"} {
		var argv []string
		if args != "" {
			argv = []string{args}
		}
		cfg, err := parseFlagsWith(append(argv, "--cri-endpoint="), registry)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := setupCallers(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := serverConfig(cfg, &hostset.Node{}, ids, nil, nil).Identity.CgroupRoot; got != want {
			t.Errorf("%q: the server identifies callers below cgroup root %q, want %q", args, got, want)
		}
	}
	for _, bad := range []string{"kubelet", "/a-b", "/kubepods"} {
		if _, err := parseFlagsWith([]string{"--kubelet-cgroup-root=" + bad}, registry); err == nil || !strings.Contains(err.Error(), "kubelet-cgroup-root") {
			t.Errorf("--kubelet-cgroup-root=%s: %v, want a command-line error", bad, err)
		}
	}
}
