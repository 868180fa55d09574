package cri

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/fakecri"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// The container and pod the tests ask about.
const (
	cid = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	pod = "6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
)

func newTestCRI(t *testing.T, cfg Config) *Resolver {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// The runtime's labels name the container's pod and container; answers
// are cached for the TTL and asked again after it.
func TestCRIWorkload(t *testing.T) {
	f := &fakecri.Runtime{}
	f.Add(cid, fakecri.KubeletLabels("kube-system", "csi-azuredisk-node-x7k2p", pod, "azuredisk"), nil)
	c := newTestCRI(t, Config{Endpoint: f.Start(t), TTL: time.Minute})
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }

	want := identity.Workload{Namespace: "kube-system", PodName: "csi-azuredisk-node-x7k2p", PodUID: pod, ContainerName: "azuredisk",
		Incomplete: "service account unknown: no kubelet directory is configured"}
	for i := range 2 {
		w, err := c.Workload(t.Context(), cid)
		if err != nil || w != want {
			t.Fatalf("lookup %d: %+v, %v; want %+v", i, w, err, want)
		}
	}
	if n := f.Calls(); n != 1 {
		t.Errorf("the runtime was asked %d times within the TTL, want once", n)
	}
	now = now.Add(2 * time.Minute)
	if _, err := c.Workload(t.Context(), cid); err != nil {
		t.Fatal(err)
	}
	if n := f.Calls(); n != 2 {
		t.Errorf("after the TTL the runtime was asked %d times in all, want 2", n)
	}
}

// A container the runtime does not know, or knows without kubelet's
// labels, has no workload: nothing is made up.
func TestCRIWorkloadUnknown(t *testing.T) {
	other := strings.Repeat("b", 64)
	f := &fakecri.Runtime{}
	f.Add(other, map[string]string{"app": "not-from-kubelet"}, nil)
	c := newTestCRI(t, Config{Endpoint: f.Start(t)})
	if w, err := c.Workload(t.Context(), cid); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("unknown container: %+v, %v; want ErrNotFound", w, err)
	}
	if w, err := c.Workload(t.Context(), other); err == nil || w != (identity.Workload{}) {
		t.Errorf("container without kubelet's labels: %+v, %v; want an error", w, err)
	}
	if _, err := c.Workload(t.Context(), "short"); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("malformed ID: %v", err)
	}
}

// An unreachable runtime is an error within the timeout, never a guess.
func TestCRIUnreachable(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix socket endpoint")
	}
	c := newTestCRI(t, Config{Endpoint: "unix://" + filepath.Join(sockdir.New(t, "cri"), "absent.sock"), Timeout: 200 * time.Millisecond})
	start := time.Now()
	w, err := c.Workload(t.Context(), cid)
	if err == nil || w != (identity.Workload{}) {
		t.Fatalf("unreachable runtime: %+v, %v", w, err)
	}
	if !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("unreachable runtime: %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestCRIConfigEndpoint(t *testing.T) {
	for _, bad := range []string{"tcp://127.0.0.1:1", "/run/containerd/containerd.sock", "unix://relative.sock"} {
		if _, err := New(Config{Endpoint: bad}); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("endpoint %q: %v, want ErrInvalidArgument", bad, err)
		}
	}
	if DefaultEndpoint == "" {
		t.Error("no default endpoint")
	}
}
