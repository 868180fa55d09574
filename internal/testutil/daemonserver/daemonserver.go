// Package daemonserver runs the daemon's server in the test's own process,
// wired the way cmd/csi-node-proxy wires it: package hostset builds the
// host backend and the six group Services, server.SelectAPIs picks the
// group-versions from the daemon's --apis syntax, and package server
// serves them on unix sockets (named pipes on Windows). Tests that talk
// to the daemon over its sockets without building the binary use it, so a
// change in how the daemon assembles its groups reaches them all instead
// of drifting in hand-wired copies.
package daemonserver

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// Options says what Start serves.
type Options struct {
	// Host is the host backend's configuration, as the daemon's flags
	// make it. An empty Host.Host means hostset.Simulated.
	Host hostset.Config
	// AllowedServices is the system group's allow-list
	// (--allowed-service).
	AllowedServices []string
	// APIs selects the group-versions in the daemon's --apis syntax; ""
	// means "all".
	APIs string
	// Server is the server's configuration (audit, policy, metrics…).
	// Its Transport is replaced: the daemon's defaults with SocketDir.
	Server server.Config
	// SocketDir is where the endpoints are created; "" means a fresh
	// short directory (sockdir.New) removed when the test ends.
	SocketDir string
	// StopTolerates, if not nil, is an error (matched with errors.Is)
	// that Server.Stop may return without failing the test.
	StopTolerates error
}

// Node is a running server and what it serves.
type Node struct {
	// SocketDir holds the endpoints' unix sockets.
	SocketDir string
	// Set is the host backend, as hostset built it.
	Set hostset.Set
	// Sim is the simulated host behind Set, nil for another backend.
	Sim *simulated.Host
	// Server is the running server.
	Server *server.Server
	// stopped is set by Stop, so the cleanup does not stop it twice.
	stopped bool
	// tolerates is Options.StopTolerates.
	tolerates error
}

// Start serves what o says until the test ends, when the server is
// stopped (see Stop) and the host closed.
func Start(tb testing.TB, o Options) *Node {
	tb.Helper()
	n := StartNoCleanup(tb, o)
	tb.Cleanup(func() {
		if !n.stopped {
			n.Stop(tb)
		}
	})
	return n
}

// StartNoCleanup is Start for a test that stops the server itself (Stop),
// for instance to start another on the same directory. The host is
// closed when the test ends all the same.
func StartNoCleanup(tb testing.TB, o Options) *Node {
	tb.Helper()
	if o.Host.Host == "" {
		o.Host.Host = hostset.Simulated
	}
	if o.APIs == "" {
		o.APIs = "all"
	}
	if o.SocketDir == "" {
		o.SocketDir = sockdir.New(tb, "srv")
	}
	set, err := hostset.New(o.Host)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = set.Close() })
	groups, err := set.Services(o.AllowedServices)
	if err != nil {
		tb.Fatal(err)
	}
	apis, err := server.SelectAPIs(adapter.All(), o.APIs)
	if err != nil {
		tb.Fatal(err)
	}
	cfg := o.Server
	cfg.Transport = transport.DefaultOptions()
	cfg.Transport.SocketDir = o.SocketDir
	srv, err := server.New(cfg, groups, apis)
	if err != nil {
		tb.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		for _, ep := range srv.Endpoints() {
			if len(ep.Address) > sockdir.MaxPath {
				tb.Fatalf("socket path %s is %d bytes, too long for a unix socket; set TMPDIR to a shorter directory", ep.Address, len(ep.Address))
			}
		}
	}
	if err := srv.Start(); err != nil {
		tb.Fatal(err)
	}
	return &Node{SocketDir: o.SocketDir, Set: set, Sim: set.Simulated, Server: srv, tolerates: o.StopTolerates}
}

// Stop stops the server and waits for it, failing the test if it stops
// with an error or leaves an endpoint's socket behind: its endpoints are
// gone when Stop returns.
func (n *Node) Stop(tb testing.TB) {
	tb.Helper()
	n.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.Server.Stop(ctx); err != nil && (n.tolerates == nil || !errors.Is(err, n.tolerates)) {
		tb.Errorf("stop daemon: %v", err)
	}
	if err := n.Server.Wait(); err != nil {
		tb.Errorf("daemon stopped with %v", err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	for _, ep := range n.Server.Endpoints() {
		if _, err := os.Lstat(ep.Address); !errors.Is(err, fs.ErrNotExist) {
			tb.Errorf("socket %s still exists after Stop (lstat: %v)", ep.Address, err)
		}
	}
}

// Address returns the address of the endpoint serving group at version
// (e.g. "filesystem", "v1"), failing the test if none does.
func (n *Node) Address(tb testing.TB, group, version string) string {
	tb.Helper()
	for _, ep := range n.Server.Endpoints() {
		if ep.API.Group == group && ep.API.Version == version {
			return ep.Address
		}
	}
	tb.Fatalf("no endpoint serves %s %s", group, version)
	return ""
}
