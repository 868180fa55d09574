// Package simulated runs csi-sanity against the example driver on the
// simulated Windows host served through the daemon: the daemon's server
// code on unix sockets in this process (so the controller can attach
// disks to its simulated host with AddDisk), the driver reaching it with
// client.Dial as on a node. No root, no disk; Windows paths.
package simulated

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/examples/csi-driver/driver"
	"github.com/csi-node-proxy/csi-node-proxy/examples/csi-driver/sanity/sanitytest"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonserver"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

const kubelet = `C:\var\lib\kubelet`

func TestSanity(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the client dials named pipes on Windows; this test serves unix sockets")
	}
	dir := sockdir.New(t, "csisim")
	sim := startDaemon(t, dir)
	before := map[uint32]bool{}
	for _, dk := range sim.ListDisks() {
		before[dk.Number] = true
	}

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	node, err := client.Dial(ctx, client.Options{SocketDir: dir, Groups: []string{"disk", "volume", "filesystem"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Close() })
	d, err := driver.New(driver.Config{NodeID: "sim-node", Node: node, Allocator: driver.NewSimAllocator(sim)})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "csi.sock")
	sanitytest.Serve(t, d, sock)

	fs := node.Filesystem()
	mkdir := func(p string) (string, error) {
		_, err := fs.Mkdir(context.Background(), &filesystem.MkdirRequest{Path: p})
		return p, err
	}
	rm := func(p string) error {
		_, err := fs.Rmdir(context.Background(), &filesystem.RmdirRequest{Path: p, Force: true})
		return err
	}
	cfg := sanity.NewTestConfig()
	cfg.Address = "unix://" + sock
	cfg.TargetPath = kubelet + `\pods\sanity\volumes\kubernetes.io~csi\pv\mount`
	cfg.StagingPath = kubelet + `\plugins\kubernetes.io\csi\` + driver.DefaultName + `\sanity\globalmount`
	cfg.CreateTargetDir, cfg.CreateStagingDir = mkdir, mkdir
	cfg.RemoveTargetPath, cfg.RemoveStagingPath = rm, rm
	cfg.CheckPath = func(p string) (sanity.PathKind, error) {
		ex, err := fs.PathExists(context.Background(), &filesystem.PathExistsRequest{Path: p})
		switch {
		case err != nil:
			return "", err
		case !ex.Exists:
			return sanity.PathIsNotFound, nil
		}
		return sanity.PathIsDir, nil
	}
	cfg.TestVolumeSize = 64 << 20
	cfg.TestVolumeExpandSize = 256 << 20 // the proxy skips a gain under 100 MiB
	cfg.TestNodeVolumeAttachLimit = true
	start := time.Now()
	c := sanitytest.Run(t, "simulated host through the daemon", cfg, "")
	t.Logf("in %v", time.Since(start).Round(time.Millisecond))
	if c.Failed > 0 {
		t.Errorf("%d csi-sanity specs failed", c.Failed)
	}
	// Everything csi-sanity created is gone: no volume left mounted, no
	// disk but those the simulated host started with.
	for _, v := range sim.ListVolumes() {
		if len(v.MountPoints) > 0 && v.DriveLetter == "" {
			t.Errorf("volume %s still mounted at %v", v.ID, v.MountPoints)
		}
	}
	for _, dk := range sim.ListDisks() {
		if !before[dk.Number] {
			t.Errorf("disk %d (serial %q) left behind", dk.Number, dk.Serial)
		}
	}
}

// startDaemon serves the simulated host's six groups on unix sockets in
// dir with the daemon's server code, as csi-node-proxy --host=simulated
// does, and returns the host.
func startDaemon(t *testing.T, dir string) *simulated.Host {
	t.Helper()
	n := daemonserver.Start(t, daemonserver.Options{
		Host:          hostset.Config{Host: hostset.Simulated, WorkingDirs: []string{kubelet}, RequirePrivacy: true},
		SocketDir:     dir,
		StopTolerates: errdefs.ErrUnavailable,
	})
	return n.Sim
}
