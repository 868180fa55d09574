package cri

import (
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/fakecri"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// serveAt serves rt on a new Unix socket at sock and returns the server
// and its listener: closing the listener removes the socket file and
// leaves the connections made before open, as a runtime stuck while it
// stops does; Stop closes them too.
func serveAt(t *testing.T, rt *fakecri.Runtime, sock string) (*grpc.Server, net.Listener) {
	t.Helper()
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(s, rt)
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return s, l
}

// The runtime restarts: its socket file is removed and made anew (a
// new inode) while the connection to the old one stays open and never
// answers again (the old runtime hangs while it stops). The resolver
// drops that connection and dials the new socket, so lookups work
// again; then a runtime that is stopped outright and started again at
// the same path is found too. Before the fix the lookup after the
// restart went down the old connection and timed out.
func TestCRIRuntimeRestartNewSocket(t *testing.T) {
	sock := filepath.Join(sockdir.New(t, "cri"), "cri.sock")
	old := &fakecri.Runtime{}
	old.Add(cid, fakecri.KubeletLabels("kube-system", "node-a", pod, "driver"), nil)
	_, oldListener := serveAt(t, old, sock)
	c := newTestCRI(t, Config{Endpoint: "unix://" + sock, Timeout: 300 * time.Millisecond, NegativeTTL: 100 * time.Millisecond})
	if _, err := c.Workload(t.Context(), cid); err != nil {
		t.Fatalf("before the restart: %v", err)
	}

	old.Stall() // the old runtime hangs on every call from now on
	if err := oldListener.Close(); err != nil {
		t.Fatal(err)
	}
	other := "1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	restarted := &fakecri.Runtime{}
	restarted.Add(other, fakecri.KubeletLabels("kube-system", "node-b", pod, "driver"), nil)
	second, _ := serveAt(t, restarted, sock)
	if _, err := c.Workload(t.Context(), other); err != nil {
		t.Fatalf("after the runtime restarted with a new socket: %v", err)
	}
	if n := c.Stats().Redials.Load(); n != 1 {
		t.Errorf("%d redials, want 1", n)
	}

	second.Stop()
	third := "2123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	if _, err := c.Workload(t.Context(), third); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("while the runtime is stopped: %v, want ErrUnavailable", err)
	}
	again := &fakecri.Runtime{}
	again.Add(third, fakecri.KubeletLabels("kube-system", "node-c", pod, "driver"), nil)
	serveAt(t, again, sock)
	time.Sleep(150 * time.Millisecond) // past NegativeTTL
	if _, err := c.Workload(t.Context(), third); err != nil {
		t.Fatalf("after the runtime started again: %v", err)
	}
}

// An unreachable runtime fails a lookup within the timeout (no waiting
// for it to come up), and for NegativeTTL the next lookups fail at once
// without asking; the same for a container the runtime does not know.
func TestCRIUnreachableFailsFastAndIsRemembered(t *testing.T) {
	sock := filepath.Join(sockdir.New(t, "cri"), "cri.sock")
	rt := &fakecri.Runtime{}
	s, _ := serveAt(t, rt, sock)
	c := newTestCRI(t, Config{Endpoint: "unix://" + sock, Timeout: 300 * time.Millisecond})
	if _, err := c.Workload(t.Context(), cid); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("unknown container: %v, want ErrNotFound", err)
	}
	for range 5 {
		if _, err := c.Workload(t.Context(), cid); !errors.Is(err, errdefs.ErrNotFound) {
			t.Fatalf("unknown container again: %v", err)
		}
	}
	if n := rt.Calls(); n != 1 {
		t.Errorf("the runtime was asked %d times about an unknown container, want once", n)
	}

	rt.Stall() // reachable, never answering: the lookup's timeout ends it
	s.GracefulStop()
	other := "1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	hung := &fakecri.Runtime{}
	hung.Stall()
	serveAt(t, hung, sock)
	start := time.Now()
	_, err := c.Workload(t.Context(), other)
	if took := time.Since(start); !errors.Is(err, errdefs.ErrUnavailable) || took > 600*time.Millisecond {
		t.Fatalf("hung runtime: %v after %v, want ErrUnavailable within 300 ms and a margin", err, took)
	}
	hits := c.Stats().NegativeHits.Load()
	start = time.Now()
	for range 10 {
		if _, err := c.Workload(t.Context(), other); !errors.Is(err, errdefs.ErrUnavailable) {
			t.Fatalf("remembered failure: %v", err)
		}
	}
	if took := time.Since(start); took > 50*time.Millisecond {
		t.Errorf("10 remembered failures took %v", took)
	}
	if n := c.Stats().NegativeHits.Load() - hits; n != 10 {
		t.Errorf("%d negative cache hits, want 10", n)
	}
	if err := c.Check(t.Context()); err == nil {
		t.Error("Check of a hung runtime: nil")
	}
}
