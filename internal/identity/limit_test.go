package identity

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// Connections beyond MaxIdentifying wait for a slot and are refused when
// none frees in time; a freed slot serves the next.
func TestHandshakeBoundsConcurrentIdentification(t *testing.T) {
	c := NewCredentials(Options{MaxIdentifying: 1})
	c.wait = 50 * time.Millisecond
	release := make(chan struct{})
	entered := make(chan struct{})
	c.identify = func(net.Conn, Options, acceptMark) (Caller, *process) {
		entered <- struct{}{}
		<-release
		return Caller{Incomplete: "test"}, nil
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	first := make(chan error, 1)
	go func() { _, _, err := c.ServerHandshake(a); first <- err }()
	<-entered
	if _, _, err := c.ServerHandshake(b); !errors.Is(err, ErrTooManyConnections) || !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("second connection while the first is identified: %v, want ErrTooManyConnections", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	c.identify = func(net.Conn, Options, acceptMark) (Caller, *process) { return Caller{}, nil }
	if _, _, err := c.ServerHandshake(b); err != nil {
		t.Errorf("after the slot was freed: %v", err)
	}
}

// slowRuntime models a container runtime that is down, as the resolver
// met it before issue 23: every lookup waits 2 s (gRPC's WaitForReady
// within the old timeout) before it fails.
type slowRuntime struct{ wait time.Duration }

func (r slowRuntime) Workload(ctx context.Context, _ string) (Workload, error) {
	select {
	case <-time.After(r.wait):
	case <-ctx.Done():
	}
	return Workload{}, errdefs.Errorf(errdefs.ErrUnavailable, "runtime down")
}

// A caller with no rights opening connections 40 a second, from a
// container the runtime is slow to answer about, must not get a
// driver's connections refused: the runtime is asked after the
// identification slot is freed (issue 23: 5 of 20 driver calls failed).
// The runtime is a seam (slowRuntime): what it costs, not what it says,
// is tested here; package cri tests the real resolver's bounds.
func TestHandshakeFloodWithSlowRuntimeSpareDrivers(t *testing.T) {
	c := NewCredentials(Options{Workloads: slowRuntime{wait: 2 * time.Second}})
	c.wait = 500 * time.Millisecond
	driverID := strings.Repeat("d", 64)
	floodID := strings.Repeat("f", 64)
	c.identify = func(conn net.Conn, _ Options, _ acceptMark) (Caller, *process) {
		if conn.(*tagged).driver {
			return Caller{ContainerID: driverID}, nil
		}
		return Caller{ContainerID: floodID}, nil
	}
	stop := make(chan struct{})
	var flood sync.WaitGroup
	flood.Go(func() {
		tick := time.NewTicker(25 * time.Millisecond) // 40 a second
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				flood.Go(func() { _, _, _ = c.ServerHandshake(&tagged{}) })
			}
		}
	})
	time.Sleep(1500 * time.Millisecond) // the flood fills what it can
	var failed int
	var drivers sync.WaitGroup
	var mu sync.Mutex
	for range 20 {
		drivers.Go(func() {
			if _, _, err := c.ServerHandshake(&tagged{driver: true}); err != nil {
				mu.Lock()
				failed++
				mu.Unlock()
			}
		})
		time.Sleep(50 * time.Millisecond)
	}
	drivers.Wait()
	close(stop)
	flood.Wait()
	if failed > 0 {
		t.Errorf("%d of 20 driver connections refused under the flood", failed)
	}
}

// tagged is a connection that says whose it is.
type tagged struct {
	net.Conn
	driver bool
}
