//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	systemv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/system/v1alpha1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/syncbuf"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// buildDaemon returns this command built once per test binary
// (daemonbin), shared by every test that starts it.
func buildDaemon(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the daemon; skipped with -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go command to build the daemon: %v", err)
	}
	return daemonbin.Binary(t)
}

// TestDaemon runs the real binary on the simulated host, talks to it over
// its sockets, and stops it the way the kubelet and systemd do.
func TestDaemon(t *testing.T) {
	apis := adapter.All()
	if len(apis) == 0 {
		t.Skip("the adapter registry is empty: nothing to serve")
	}
	bin := buildDaemon(t)
	// A short directory: socket paths must stay under 108 bytes.
	sockDir := filepath.Join(sockdir.New(t, "cnp"), "run")

	socket := func(api adapter.API) string {
		return transport.Endpoint{Name: api.Name(), Options: transport.Options{SocketDir: sockDir}}.Address()
	}
	var stderr syncbuf.Buffer
	p := daemonbin.Start(t, bin, daemonbin.Options{
		Args:   []string{"--host=simulated", "--socket-dir=" + sockDir, "-v=2", "-metrics-bind-address=127.0.0.1:0"},
		Output: &stderr, StderrOnly: true, AtEnd: daemonbin.Kill,
		Ready: func() error {
			for _, api := range apis {
				if fi, err := os.Lstat(socket(api)); err != nil || fi.Mode().Type() != os.ModeSocket {
					return fmt.Errorf("%s did not appear", socket(api))
				}
			}
			return nil
		},
		ReadyTimeout: 20 * time.Second,
	})
	for _, api := range apis {
		if fi, err := os.Lstat(socket(api)); err == nil && fi.Mode().Perm() != 0o660 {
			t.Errorf("%s has mode %#o, want 0660", socket(api), fi.Mode().Perm())
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	connect := func(name string) *grpc.ClientConn {
		for _, api := range apis {
			if api.Name() == name {
				cc, err := grpc.NewClient(transport.Target(socket(api)), transport.DialOptions()...)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cc.Close() })
				return cc
			}
		}
		t.Fatalf("%s is not in the registry", name)
		return nil
	}
	disk := connect("csi-proxy-disk-v1")
	r, err := healthpb.NewHealthClient(disk).Check(ctx, &healthpb.HealthCheckRequest{Service: "v1.Disk"})
	if err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v; want SERVING", r, err)
	}
	// Real calls through adapter, service and simulated host.
	if _, err := diskv1.NewDiskClient(disk).ListDiskLocations(ctx, &diskv1.ListDiskLocationsRequest{}); err != nil {
		t.Errorf("ListDiskLocations: %v", err)
	}
	bios, err := systemv1alpha1.NewSystemClient(connect("csi-proxy-system-v1alpha1")).GetBIOSSerialNumber(ctx, &systemv1alpha1.GetBIOSSerialNumberRequest{})
	if err != nil || bios.SerialNumber == "" {
		t.Errorf("GetBIOSSerialNumber = %v, %v", bios, err)
	}

	// SIGTERM, as the kubelet and systemd stop it: a daemon that does not
	// exit 0 within 30 s ends the test.
	failed := t.Failed()
	p.Stop(t, 30*time.Second)
	if !failed && t.Failed() {
		t.FailNow()
	}
	for _, api := range apis {
		if _, err := os.Lstat(socket(api)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind: %v", socket(api), err)
		}
	}
	logs := stderr.String()
	for _, want := range []string{`"Serving" api="csi-proxy-disk-v1"`, `"Serving metrics" address="127.0.0.1:`, `"Shutting down"`, `"Stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

// TestDaemonRefusesMissingBackend: a backend this OS cannot run, or a
// command line it cannot use, is refused at start with the reason.
func TestDaemonRefusesMissingBackend(t *testing.T) {
	bin := buildDaemon(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--host=windows"}, exitFailure, "--host=windows runs only on Windows"},
		{[]string{"-windows-service", "--host=simulated"}, exitFailure, "-windows-service is only available on Windows"},
		{[]string{"--apis=nope", "--host=simulated"}, exitUsage, `unknown API "nope"`},
	} {
		code, stderr := daemonbin.RunToExit(t, bin, tc.args...)
		if code != tc.code {
			t.Errorf("%q: exit status %d, want %d", tc.args, code, tc.code)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: stderr %q lacks %q", tc.args, stderr, tc.want)
		}
	}
}
