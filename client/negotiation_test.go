package client_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter/diskv1"
)

// TestNegotiateAllVersions: against a daemon serving every version, each
// group gets the newest, and the client holds exactly one connection per
// group, none after Close.
func TestNegotiateAllVersions(t *testing.T) {
	d := startDaemon(t, socketDir(t), "all")
	ctx := context.Background()
	if n := serverConns(t, d.dir); n != 0 {
		t.Fatalf("%d connections before Dial", n)
	}
	c, err := client.Dial(ctx, client.Options{SocketDir: d.dir})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"disk": "v1", "volume": "v2alpha1", "filesystem": "v2alpha1", "smb": "v1", "iscsi": "v1alpha2", "system": "v1alpha1", "smbmappings": "v1alpha1"}
	if got := c.Versions(); !reflect.DeepEqual(got, want) {
		t.Errorf("negotiated %v, want %v", got, want)
	}
	waitConns(t, d.dir, 7, "after Dial")
	// Calls reuse the group's connection: none is added.
	for range 3 {
		if _, err := c.Disk().ListDiskIDs(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.System().GetBIOSSerialNumber(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	waitConns(t, d.dir, 7, "after calls")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	waitConns(t, d.dir, 0, "after Close")
	_, err = c.Disk().ListDiskIDs(ctx, nil)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "closed") {
		t.Errorf("a call after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestNegotiateOldVersions: against a daemon serving one old version per
// group, negotiation falls back to it, and calls through it round-trip,
// renamed RPCs and retyped fields included.
func TestNegotiateOldVersions(t *testing.T) {
	d := startDaemon(t, socketDir(t), oldAPIs)
	ctx := context.Background()
	c, err := client.Dial(ctx, client.Options{SocketDir: d.dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := map[string]string{"disk": "v1beta1", "volume": "v1beta1", "filesystem": "v1beta1", "smb": "v1beta1", "iscsi": "v1alpha1", "system": "v1alpha1"}
	if got := c.Versions(); !reflect.DeepEqual(got, want) {
		t.Errorf("negotiated %v, want %v", got, want)
	}
	// Every probe of a version the daemon does not serve found no socket;
	// only the kept connections remain.
	waitConns(t, d.dir, 6, "after Dial")
	runFlows(t, c, want)
}

// TestNegotiateNoOverlapPinned: the daemon serves disk v1 and v1beta3 only,
// and the caller pins disk to v1beta2 and v1beta1: the error names the
// group, the versions tried and the versions served, and no connection is
// left, neither volume's (dialed first) nor the probes of disk's.
func TestNegotiateNoOverlapPinned(t *testing.T) {
	d := startDaemon(t, socketDir(t), "disk-v1,disk-v1beta3,volume")
	ctx := context.Background()
	_, err := client.Dial(ctx, client.Options{
		SocketDir: d.dir,
		Groups:    []string{"volume", "disk"},
		Versions:  map[string][]string{"disk": {"v1beta2", "v1beta1"}},
	})
	if err == nil {
		t.Fatal("Dial succeeded without a common disk version")
	}
	want := "disk: no common API version: client tried v1beta2, v1beta1 (Options.Versions; it supports v1, v1beta3, v1beta2, v1beta1, v1alpha1); server serves v1, v1beta3"
	if !strings.Contains(err.Error(), want) || !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("error %q (FailedPrecondition: %v), want FailedPrecondition containing %q", err, errors.Is(err, errdefs.ErrFailedPrecondition), want)
	}
	// volume was dialed first and disk's served versions were probed for
	// the message: Dial must have closed them all.
	waitConns(t, d.dir, 0, "after the failed Dial")
}

// TestNegotiateNoDaemon: no endpoint of the group answers at all: the error
// is Unavailable (the daemon may be starting) and says where it looked.
func TestNegotiateNoDaemon(t *testing.T) {
	requireUnixSockets(t)
	dir := socketDir(t)
	_, err := client.Dial(context.Background(), client.Options{SocketDir: dir, Groups: []string{"disk"}})
	want := fmt.Sprintf("disk: no common API version: client supports v1, v1beta3, v1beta2, v1beta1, v1alpha1; server serves none of them (no csi-proxy-disk-* endpoint answered in %s)", dir)
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("error %v, want Unavailable containing %q", err, want)
	}
	if !strings.Contains(err.Error(), "no such file or directory") {
		t.Errorf("the error does not say why the newest endpoint did not answer: %v", err)
	}
}

// TestNegotiateOnlyNewerVersions: the daemon serves disk only at a version
// this client is not built with (a daemon newer than the client): the error
// says so and is FailedPrecondition, not Unavailable.
func TestNegotiateOnlyNewerVersions(t *testing.T) {
	requireUnixSockets(t)
	dir := socketDir(t)
	serveHealthOnly(t, filepath.Join(dir, "csi-proxy-disk-v9.sock"), "v9.Disk")
	_, err := client.Dial(context.Background(), client.Options{SocketDir: dir, Groups: []string{"disk"}})
	want := "disk: no common API version: client supports v1, v1beta3, v1beta2, v1beta1, v1alpha1; server serves none of them (it has csi-proxy-disk-v9.sock, versions this client is not built with)"
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("error %v, want FailedPrecondition containing %q", err, want)
	}
}

// TestNegotiateStaleUnknownSocket: the only disk socket is a version this
// client is not built with, left behind by a daemon that died: the file is
// there but nothing listens. Nothing answered, so the error is Unavailable
// (the daemon may be restarting), not FailedPrecondition, and says the
// file accepts no connection.
func TestNegotiateStaleUnknownSocket(t *testing.T) {
	requireUnixSockets(t)
	dir := socketDir(t)
	path := filepath.Join(dir, "csi-proxy-disk-v9.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false) // as a daemon that was killed leaves it
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the stale socket file is gone: %v", err)
	}
	_, err = client.Dial(context.Background(), client.Options{SocketDir: dir, Groups: []string{"disk"}})
	want := fmt.Sprintf("disk: no common API version: client supports v1, v1beta3, v1beta2, v1beta1, v1alpha1; server serves none of them (no csi-proxy-disk-* endpoint answered in %s); csi-proxy-disk-v9.sock accepts no connection (a stale socket file)", dir)
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, errdefs.ErrUnavailable) || errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("error %v, want Unavailable containing %q", err, want)
	}
}

// TestNegotiateUpstreamWithoutHealth: upstream csi-proxy serves no health
// service; an endpoint that answers gRPC without it counts as serving.
func TestNegotiateUpstreamWithoutHealth(t *testing.T) {
	requireUnixSockets(t)
	dir := socketDir(t)
	h, err := simulated.New(simulated.DefaultConfig([]string{kubelet}))
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer() // no health service, as upstream
	diskv1.Register(gs, disk.NewService(h.Disk()))
	serve(t, gs, filepath.Join(dir, "csi-proxy-disk-v1.sock"))
	c, err := client.Dial(context.Background(), client.Options{SocketDir: dir, Groups: []string{"disk"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v := c.Versions()["disk"]; v != "v1" {
		t.Errorf("negotiated disk %s, want v1", v)
	}
	if _, err := c.Disk().ListDiskLocations(context.Background(), nil); err != nil {
		t.Errorf("a call to the upstream-like endpoint: %v", err)
	}
	_, err = c.Volume().GetVolumeStats(context.Background(), nil)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "group volume was not dialed; add it to Options.Groups") {
		t.Errorf("a group not dialed: %v", err)
	}
}

// TestServed lists what a daemon serves and leaves no connection behind.
func TestServed(t *testing.T) {
	d := startDaemon(t, socketDir(t), "disk-v1,disk-v1beta1,iscsi,system")
	got, err := client.Served(context.Background(), client.Options{SocketDir: d.dir})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, gv := range got {
		names = append(names, gv.Group+"-"+gv.Version+"="+gv.Service)
		if want := filepath.Join(d.dir, client.Endpoint(gv.Group, gv.Version)+".sock"); gv.Address != want {
			t.Errorf("%s address %s, want %s", gv.Group, gv.Address, want)
		}
	}
	want := "disk-v1=v1.Disk disk-v1beta1=v1beta1.Disk iscsi-v1alpha2=v1alpha2.Iscsi iscsi-v1alpha1=v1alpha1.Iscsi system-v1alpha1=v1alpha1.System"
	if s := strings.Join(names, " "); s != want {
		t.Errorf("Served = %s\nwant     %s", s, want)
	}
	waitConns(t, d.dir, 0, "after Served")
}

// serveHealthOnly serves only the health service, reporting service as
// serving, at a socket path.
func serveHealthOnly(t *testing.T, path, service string) {
	t.Helper()
	gs := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus(service, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	serve(t, gs, path)
}

func serve(t *testing.T, gs *grpc.Server, path string) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- gs.Serve(l) }()
	t.Cleanup(func() {
		gs.Stop()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve %s: %v", path, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("serve %s did not end", path)
		}
	})
}
