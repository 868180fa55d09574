package client_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonserver"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// TestEndpointPrefix: a daemon serving under --endpoint-prefix
// csi-node-proxy (beside upstream's csi-proxy during a migration) is
// reached with Options.EndpointPrefix and nothing else; with the default
// prefix the same directory has nothing to answer; a prefix the daemon
// would refuse is InvalidArgument before anything is dialed.
func TestEndpointPrefix(t *testing.T) {
	requireUnixSockets(t)
	dir := sockdir.New(t, "pfx")
	daemonserver.Start(t, daemonserver.Options{
		Host:      hostset.Config{Host: hostset.Simulated, WorkingDirs: []string{kubelet}},
		APIs:      "system",
		SocketDir: dir,
		Server:    server.Config{EndpointPrefix: "csi-node-proxy"},
	})
	c, err := client.Dial(t.Context(), client.Options{SocketDir: dir, EndpointPrefix: "csi-node-proxy", Groups: []string{"system"}})
	if err != nil {
		t.Fatalf("Dial with the daemon's prefix: %v", err)
	}
	defer func() { _ = c.Close() }()
	if _, err := c.System().GetBIOSSerialNumber(t.Context(), &system.GetBIOSSerialNumberRequest{}); err != nil {
		t.Fatalf("a call under the prefix: %v", err)
	}
	served, err := client.Served(t.Context(), client.Options{SocketDir: dir, EndpointPrefix: "csi-node-proxy", Groups: []string{"system"}})
	if err != nil || len(served) == 0 {
		t.Fatalf("Served under the prefix: %v, %v", served, err)
	}
	for _, gv := range served {
		if !strings.Contains(gv.Address, "csi-node-proxy-system-") {
			t.Errorf("served at %s, not under the prefix", gv.Address)
		}
	}
	_, err = client.Dial(t.Context(), client.Options{SocketDir: dir, Groups: []string{"system"}})
	if !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("Dial with upstream's prefix where only csi-node-proxy-* is served: %v, want Unavailable", err)
	}
	for _, bad := range []string{"../x", "-lead", "a b", strings.Repeat("p", 41), `csi\proxy`} {
		_, err := client.Dial(t.Context(), client.Options{SocketDir: dir, EndpointPrefix: bad})
		if !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("prefix %q: %v, want InvalidArgument", bad, err)
		}
	}
}
