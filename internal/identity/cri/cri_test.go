package cri

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// fakeCRI is a container runtime speaking the real CRI RuntimeService
// protocol: ContainerStatus answers from its table, every other method
// is the generated Unimplemented one.
type fakeCRI struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	mu         sync.Mutex
	containers map[string]map[string]string // container ID → labels
	// mounts are the mounts reported per container ID, as runtimes
	// report those of the create request.
	mounts map[string][]*runtimeapi.Mount
	calls  int
}

func (f *fakeCRI) ContainerStatus(_ context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	labels, ok := f.containers[req.ContainerId]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "container %q not found", req.ContainerId)
	}
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: req.ContainerId, Labels: labels, Mounts: f.mounts[req.ContainerId]}}, nil
}

func (f *fakeCRI) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// kubeletLabels are the labels kubelet gives every container it creates.
func kubeletLabels(ns, podName, podUID, container string) map[string]string {
	return map[string]string{
		"io.kubernetes.pod.namespace":   ns,
		"io.kubernetes.pod.name":        podName,
		"io.kubernetes.pod.uid":         podUID,
		"io.kubernetes.container.name":  container,
		"io.kubernetes.container.hash":  "1a2b3c",
		"io.kubernetes.container.image": "ignored",
	}
}

// startCRI serves f on a Unix socket and returns its endpoint.
func startCRI(t *testing.T, f *fakeCRI) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the test runtime listens on a Unix socket")
	}
	sock := filepath.Join(sockdir.New(t, "cri"), "cri.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(s, f)
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return "unix://" + sock
}

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
	f := &fakeCRI{containers: map[string]map[string]string{cid: kubeletLabels("kube-system", "csi-azuredisk-node-x7k2p", pod, "azuredisk")}}
	c := newTestCRI(t, Config{Endpoint: startCRI(t, f), TTL: time.Minute})
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
	if n := f.count(); n != 1 {
		t.Errorf("the runtime was asked %d times within the TTL, want once", n)
	}
	now = now.Add(2 * time.Minute)
	if _, err := c.Workload(t.Context(), cid); err != nil {
		t.Fatal(err)
	}
	if n := f.count(); n != 2 {
		t.Errorf("after the TTL the runtime was asked %d times in all, want 2", n)
	}
}

// A container the runtime does not know, or knows without kubelet's
// labels, has no workload: nothing is made up.
func TestCRIWorkloadUnknown(t *testing.T) {
	other := strings.Repeat("b", 64)
	f := &fakeCRI{containers: map[string]map[string]string{other: {"app": "not-from-kubelet"}}}
	c := newTestCRI(t, Config{Endpoint: startCRI(t, f)})
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
