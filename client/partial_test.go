//go:build !windows

package client

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// serveHealth serves, at each named endpoint in dir, only a health service
// that reports the endpoint's version service as serving: enough for Dial
// to negotiate it (calls would fail, and these tests make none that reach
// it). The real daemon is tested in negotiation_test.go and examples/node-plugin.
func serveHealth(t *testing.T, dir string, endpoints ...string) {
	t.Helper()
	for _, ep := range endpoints {
		group, version, _ := strings.Cut(strings.TrimPrefix(ep, "csi-proxy-"), "-")
		gv, ok := lookup(group, version)
		if !ok {
			t.Fatalf("unknown endpoint %s", ep)
		}
		l, err := net.Listen("unix", filepath.Join(dir, ep+".sock"))
		if err != nil {
			t.Fatal(err)
		}
		gs := grpc.NewServer()
		hs := health.NewServer()
		hs.SetServingStatus(gv.service, healthpb.HealthCheckResponse_SERVING)
		healthpb.RegisterHealthServer(gs, hs)
		go func() { _ = gs.Serve(l) }() // ends with Stop below
		t.Cleanup(gs.Stop)
	}
}

// shortDir is a fresh directory whose socket paths fit in 108 bytes
// (t.TempDir's may not).
func shortDir(t *testing.T) string {
	t.Helper()
	return sockdir.New(t, "cl")
}

// TestDialDefaultsConnectWhatAnswers: with Options.Groups empty, a node
// serving only disk, volume and filesystem v1 (the pipes a block-disk
// driver's DaemonSet mounts) gives a Client with those three; a call to
// another group fails with an error that names the group, the socket and
// the versions tried, and wraps Unavailable, as Dial's own error would.
func TestDialDefaultsConnectWhatAnswers(t *testing.T) {
	dir := shortDir(t)
	serveHealth(t, dir, "csi-proxy-disk-v1", "csi-proxy-volume-v1", "csi-proxy-filesystem-v1")
	c, err := Dial(context.Background(), Options{SocketDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, want := c.Versions(), map[string]string{"disk": "v1", "volume": "v1", "filesystem": "v1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Versions %v, want %v", got, want)
	}
	missing := c.Missing()
	var names []string
	for g := range missing {
		names = append(names, g)
	}
	if len(names) != 4 || missing["smb"] == nil || missing["iscsi"] == nil || missing["system"] == nil || missing["smbmappings"] == nil {
		t.Errorf("Missing %v, want smb, iscsi, system and smbmappings", missing)
	}
	_, err = c.SMB().RemoveSmbGlobalMapping(context.Background(), nil)
	for _, want := range []string{
		"group smb is not available on this node",
		"client supports v1, v1beta2, v1beta1, v1alpha1",
		filepath.Join(dir, "csi-proxy-smb-v1.sock"),
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a call to smb: %v; want it to contain %q", err, want)
		}
	}
	if !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("a call to smb: %v; want ErrUnavailable", err)
	}
	if !errors.Is(missing["smb"], errdefs.ErrUnavailable) {
		t.Errorf("Missing()[smb] = %v; want ErrUnavailable", missing["smb"])
	}
}

// TestDialListedGroupsRequired: a group listed in Options.Groups must
// answer, or Dial fails with that group's error.
func TestDialListedGroupsRequired(t *testing.T) {
	dir := shortDir(t)
	serveHealth(t, dir, "csi-proxy-disk-v1")
	c, err := Dial(context.Background(), Options{SocketDir: dir, Groups: []string{"disk", "smb"}})
	if err == nil {
		_ = c.Close()
		t.Fatal("Dial succeeded without the smb group listed in Options.Groups")
	}
	if !errors.Is(err, errdefs.ErrUnavailable) || !strings.HasPrefix(err.Error(), "smb: no common API version") {
		t.Errorf("Dial: %v; want Unavailable starting with the smb group's reason", err)
	}
	c, err = Dial(context.Background(), Options{SocketDir: dir, Groups: []string{"disk"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(c.Missing()) != 0 {
		t.Errorf("Missing %v with Options.Groups set; want none", c.Missing())
	}
	_, err = c.SMB().RemoveSmbGlobalMapping(context.Background(), nil)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "group smb was not dialed") {
		t.Errorf("a group not listed: %v", err)
	}
}

// TestDialDefaultsNothingAnswers: with Options.Groups empty and no
// endpoint at all, Dial fails (the daemon is not there) with every group's
// reason, wrapping Unavailable.
func TestDialDefaultsNothingAnswers(t *testing.T) {
	dir := shortDir(t)
	_, err := Dial(context.Background(), Options{SocketDir: dir})
	if err == nil || !errors.Is(err, errdefs.ErrUnavailable) || errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("Dial with nothing served: %v; want Unavailable", err)
	}
	if !strings.HasPrefix(err.Error(), "csi-node-proxy client: no group answered") {
		t.Errorf("Dial: %v", err)
	}
	for _, g := range KnownGroups() {
		if !strings.Contains(err.Error(), "\n  "+g+": no common API version") {
			t.Errorf("the error does not give %s's reason: %v", g, err)
		}
	}
}
