package client_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter/diskv1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter/systemv1alpha1"
)

// countingListener counts the connections it accepted that are still open.
type countingListener struct {
	net.Listener
	mu   sync.Mutex
	open int
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.open++
	l.mu.Unlock()
	return &countedConn{Conn: c, l: l}, nil
}

func (l *countingListener) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

type countedConn struct {
	net.Conn
	l    *countingListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.open--
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// servePipe serves one group-version with the health service on the named
// pipe prefix+csi-proxy-<group>-<version>, as the daemon does.
func servePipe(t *testing.T, prefix, name, service string, register func(*grpc.Server)) *countingListener {
	t.Helper()
	path := prefix + name
	l, err := winio.ListenPipe(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// go-winio's reserved first pipe instance lets a client connect on
	// Wine and never answers it (microsoft/go-winio#313); open and close
	// one client to use it up, as internal/transport does.
	if p, err := windows.UTF16PtrFromString(path); err == nil {
		if h, err := windows.CreateFile(p, 0, 0, nil, windows.OPEN_EXISTING, windows.SECURITY_SQOS_PRESENT|windows.SECURITY_ANONYMOUS, 0); err == nil {
			_ = windows.CloseHandle(h)
		}
	}
	cl := &countingListener{Listener: l}
	gs := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus(service, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	register(gs)
	done := make(chan error, 1)
	go func() { done <- gs.Serve(cl) }()
	t.Cleanup(func() {
		gs.Stop()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, net.ErrClosed) {
				t.Errorf("serve %s: %v", path, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("serve %s did not end", path)
		}
	})
	return cl
}

// waitOpen waits until l holds want open connections.
func waitOpen(t *testing.T, l *countingListener, want int, when string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for l.count() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d connections open, want %d", when, l.count(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPipes: on Windows the client dials named pipes: it negotiates disk
// v1 and system v1alpha1 from pipes that serve only those, keeps one
// connection per group, calls through them, closes them, and explains a
// group whose pipes are missing.
func TestPipes(t *testing.T) {
	prefix := fmt.Sprintf(`\\.\pipe\client-test-%d\`, os.Getpid())
	h, err := simulated.New(simulated.DefaultConfig([]string{kubelet}))
	if err != nil {
		t.Fatal(err)
	}
	dl := servePipe(t, prefix, "csi-proxy-disk-v1", diskv1.ServiceName, func(s *grpc.Server) { diskv1.Register(s, disk.NewService(h.Disk())) })
	sl := servePipe(t, prefix, "csi-proxy-system-v1alpha1", systemv1alpha1.ServiceName, func(s *grpc.Server) {
		systemv1alpha1.Register(s, system.NewService(h.System(), nil))
	})

	ctx := context.Background()
	c, err := client.Dial(ctx, client.Options{PipePrefix: prefix, Groups: []string{"disk", "system"}})
	if err != nil {
		t.Fatal(err)
	}
	if v := c.Versions(); v["disk"] != "v1" || v["system"] != "v1alpha1" {
		t.Errorf("negotiated %v", v)
	}
	waitOpen(t, dl, 1, "disk after Dial")
	waitOpen(t, sl, 1, "system after Dial")
	if _, err := c.Disk().ListDiskLocations(ctx, nil); err != nil {
		t.Errorf("ListDiskLocations: %v", err)
	}
	if _, err := c.System().GetBIOSSerialNumber(ctx, nil); err != nil {
		t.Errorf("GetBIOSSerialNumber: %v", err)
	}
	if _, err := c.Disk().GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: 99}); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("GetDiskStats(missing disk): %v, want NotFound", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	waitOpen(t, dl, 0, "disk after Close")
	waitOpen(t, sl, 0, "system after Close")

	_, err = client.Dial(ctx, client.Options{PipePrefix: prefix, Groups: []string{"smb"}, DialTimeout: 2 * time.Second})
	want := `smb: no common API version: client supports v1, v1beta2, v1beta1, v1alpha1; server serves none of them (no csi-proxy-smb-* endpoint answered under ` + prefix + `)`
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("Dial of a group without pipes: %v, want Unavailable containing %q", err, want)
	}
}
