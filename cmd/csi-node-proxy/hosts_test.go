//go:build unix

package main

import (
	"context"
	"io"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// TestServeClosesHost: the daemon closes its host backend (hostset's
// Close: on Linux the system group's D-Bus connection) once, when it has
// stopped serving, and not before; a start that fails after the host was
// built closes it too.
func TestServeClosesHost(t *testing.T) {
	if len(adapter.All()) == 0 {
		t.Skip("the adapter registry is empty: nothing to serve")
	}
	var closes atomic.Int32
	buildNode = func(cfg hostset.Config, hooks hostset.Hooks) (*hostset.Node, error) {
		instrument := hooks.Instrument
		hooks.Instrument = func(h hostset.Set) hostset.Set {
			h = instrument(h)
			h.Closer = countingCloser{h.Closer, &closes}
			return h
		}
		return hostset.NewNode(cfg, hooks)
	}
	t.Cleanup(func() { buildNode = hostset.NewNode })
	// A short directory: socket paths must stay under 108 bytes.
	dir := sockdir.New(t, "cnp")
	cfg, err := parseFlags([]string{"--host=simulated", "--socket-dir=" + filepath.Join(dir, "run")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	n := &startNotifier{started: make(chan struct{})}
	served := make(chan error, 1)
	go func() { served <- serve(ctx, cfg, n) }()
	select {
	case <-n.started:
	case err := <-served:
		cancel()
		t.Fatalf("serve ended before serving: %v", err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("serve did not start")
	}
	if c := closes.Load(); c != 0 {
		t.Errorf("the host was closed %d times while serving", c)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if c := closes.Load(); c != 1 {
		t.Errorf("the host was closed %d times after shutdown, want 1", c)
	}

	// A start that fails after the host exists (the policy file is
	// missing) closes it as well.
	closes.Store(0)
	cfg.PolicyFile = filepath.Join(dir, "no-such-policy.yaml")
	if err := serve(t.Context(), cfg, n); err == nil {
		t.Fatal("serve started without its policy file")
	}
	if c := closes.Load(); c != 1 {
		t.Errorf("the host was closed %d times after a failed start, want 1", c)
	}
}

// countingCloser counts the Closes of a backend.
type countingCloser struct {
	io.Closer
	n *atomic.Int32
}

func (c countingCloser) Close() error {
	c.n.Add(1)
	if c.Closer == nil { // the simulated host holds nothing
		return nil
	}
	return c.Closer.Close()
}

// startNotifier tells when serve has started.
type startNotifier struct{ started chan struct{} }

func (n *startNotifier) Started()               { close(n.started) }
func (n *startNotifier) Stopping(time.Duration) {}
