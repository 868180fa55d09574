//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// serveInProcess runs serve on cfg until the test ends and returns once
// the endpoints serve.
func serveInProcess(t *testing.T, cfg Config) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	n := &startNotifier{started: make(chan struct{})}
	served := make(chan error, 1)
	go func() { served <- serve(ctx, cfg, n) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case <-n.started:
	case err := <-served:
		served <- nil // for the cleanup
		t.Fatalf("serve ended before serving: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}
}

// TestDaemonConfinesObjects: the daemon answers object confinement from
// its host. Under a rule confining a driver to the disks mounted nowhere
// or beneath its plugin directory, it may partition a fresh data disk
// (which a daemon that cannot tell where volumes are mounted refuses, fail
// closed) and is refused taking the system disk, mounted at C:\, offline.
func TestDaemonConfinesObjects(t *testing.T) {
	if len(adapter.All()) == 0 {
		t.Skip("the adapter registry is empty: nothing to serve")
	}
	resetKlog(t)
	dir := sockdir.New(t, "cnp") // short: socket paths stay under 108 bytes
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte(`
rules:
- name: driver-a
  callers: [{any: true}]
  allow: [{groups: [disk], methods: ["*"]}]
  pathRoots: ['C:\var\lib\kubelet\plugins\a']
  objects: {onlyMountedBeneathPathRoots: true}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	sockDir := filepath.Join(dir, "run")
	cfg, err := parseFlags([]string{"--host=simulated", "--socket-dir=" + sockDir, "--policy=" + pol, "--cri-endpoint=", "--apis=disk-v1"})
	if err != nil {
		t.Fatal(err)
	}
	serveInProcess(t, cfg)

	addr := transport.Endpoint{Name: transport.EndpointName("", "disk", "v1"), Options: transport.Options{SocketDir: sockDir}}.Address()
	cc, err := grpc.NewClient(transport.Target(addr), transport.DialOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	dc := diskv1.NewDiskClient(cc)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := dc.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: 1}); err != nil {
		t.Errorf("PartitionDisk of a fresh data disk: %v", err)
	}
	_, err = dc.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: 0, IsOnline: false})
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(status.Convert(err).Message(), "outside the path roots") {
		t.Errorf("SetDiskState of the system disk: %v, want PermissionDenied naming the path roots", err)
	}
}
