// Package fakecri is a container runtime for tests: it speaks the real CRI
// RuntimeService protocol over a Unix socket, so the daemon's identity code
// (internal/identity/cri) is tested against the wire it meets on a node.
// ContainerStatus answers from a table of containers with their labels and
// mounts; Version answers for the daemon's readiness check; every other
// method is the generated Unimplemented one, since the daemon asks a
// runtime nothing else. Stall makes it hang, as a runtime stuck while it
// stops does. The identity package's tests and the
// deployment test share it, so what a runtime answers is written once.
package fakecri

import (
	"context"
	"net"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// Runtime is the fake container runtime. Its zero value knows no
// container; Add tells it of one. It is safe for use by several
// goroutines, since the daemon asks it while a test adds to it.
type Runtime struct {
	runtimeapi.UnimplementedRuntimeServiceServer

	mu         sync.Mutex
	containers map[string]container // container ID → what the runtime reports
	calls      int
	stalled    bool
}

// Stall makes every call from now on wait until its caller gives up, as
// a runtime that hangs (while it stops, say) does.
func (r *Runtime) Stall() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stalled = true
}

// stall waits for ctx to end if the runtime is stalled, and tells so.
func (r *Runtime) stall(ctx context.Context) bool {
	r.mu.Lock()
	stalled := r.stalled
	r.mu.Unlock()
	if stalled {
		<-ctx.Done()
	}
	return stalled
}

// Version answers as containerd does, for readiness checks.
func (r *Runtime) Version(ctx context.Context, _ *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	if r.stall(ctx) {
		return nil, ctx.Err()
	}
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: "fakecri", RuntimeVersion: "test", RuntimeApiVersion: "v1"}, nil
}

// container is what the runtime reports of one container.
type container struct {
	labels map[string]string
	mounts []*runtimeapi.Mount
}

// Add makes the runtime know container id with these labels and mounts (as
// runtimes report those of the create request), replacing what it knew of
// id before.
func (r *Runtime) Add(id string, labels map[string]string, mounts []*runtimeapi.Mount) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.containers == nil {
		r.containers = map[string]container{}
	}
	r.containers[id] = container{labels: labels, mounts: mounts}
}

// ContainerStatus reports a known container as running, with its labels
// and mounts, and an unknown one as codes.NotFound, as containerd does.
func (r *Runtime) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	if r.stall(ctx) {
		return nil, ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	c, ok := r.containers[req.ContainerId]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "container %q not found", req.ContainerId)
	}
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{
		Id:     req.ContainerId,
		State:  runtimeapi.ContainerState_CONTAINER_RUNNING,
		Labels: c.labels,
		Mounts: c.mounts,
	}}, nil
}

// Calls is how many ContainerStatus calls the runtime has answered, known
// containers or not: what a test of the caller's cache counts.
func (r *Runtime) Calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// Serve serves r on the Unix socket sock until the test ends, for a test
// that decides where the runtime's socket lies (a daemon's flags name it).
func (r *Runtime) Serve(tb testing.TB, sock string) {
	tb.Helper()
	l, err := net.Listen("unix", sock)
	if err != nil {
		tb.Fatal(err)
	}
	s := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(s, r)
	go func() { _ = s.Serve(l) }()
	tb.Cleanup(s.Stop)
}

// Start serves r on a Unix socket in a fresh short directory until the
// test ends, and returns its endpoint (unix://<path>). On Windows the test
// is skipped: the fake listens on a Unix socket only.
func (r *Runtime) Start(tb testing.TB) string {
	tb.Helper()
	if runtime.GOOS == "windows" {
		tb.Skip("the test runtime listens on a Unix socket")
	}
	sock := filepath.Join(sockdir.New(tb, "cri"), "cri.sock")
	r.Serve(tb, sock)
	return "unix://" + sock
}

// KubeletLabels are the labels kubelet gives every container it creates
// (types.KubernetesPodNamespaceLabel and siblings), naming its pod's
// namespace, name and UID and the container's name, with the hash and
// image labels that the daemon must ignore.
func KubeletLabels(namespace, podName, podUID, container string) map[string]string {
	return map[string]string{
		"io.kubernetes.pod.namespace":   namespace,
		"io.kubernetes.pod.name":        podName,
		"io.kubernetes.pod.uid":         podUID,
		"io.kubernetes.container.name":  container,
		"io.kubernetes.container.hash":  "1a2b3c",
		"io.kubernetes.container.image": "ignored",
	}
}
