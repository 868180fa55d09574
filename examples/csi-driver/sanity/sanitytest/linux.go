//go:build linux

package sanitytest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"

	"github.com/csi-node-proxy/csi-node-proxy/examples/csi-driver/driver"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

// Volume sizes on Linux: mkfs.xfs wants more than 300 MB, and the proxy
// skips a growth under 100 MiB. The files are sparse: a volume costs what
// XFS writes (tens of MB), not its size.
const (
	linuxVolumeSize = 512 << 20
	linuxExpandSize = 1 << 30
)

// RequireLinuxNode skips t, saying why, unless it can run the driver on
// real loop disks: root, and the XFS tools (the volumes are XFS because
// online ext4 growth needs CAP_SYS_RESOURCE, which CI's machines lack;
// docs/linux.md).
func RequireLinuxNode(t *testing.T) {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "xfsprogs", "mkfs.xfs", "xfs_growfs")
}

// RunLinux serves the driver over node (the daemon's client or library
// mode on the Linux backend) with a LoopAllocator whose files are in the
// scratch area s, and runs all of csi-sanity against it with the paths in
// s's kubelet directory. Its cleanup, which runs before s's own (that
// fails the test for any mount or loop device left), unmounts what is left
// and deletes every volume's disk through the allocator, partitions
// included.
func RunLinux(t *testing.T, name string, s *linuxnode.Scratch, node groups.Node) Counts {
	t.Helper()
	a, err := driver.NewLoopAllocator(filepath.Join(s.Dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAll(t, s, a) })
	d, err := driver.New(driver.Config{NodeID: "linux-node", Node: node, Allocator: a})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(s.Dir, "csi.sock")
	Serve(t, d, sock)

	cfg := sanity.NewTestConfig()
	cfg.Address = "unix://" + sock
	cfg.TargetPath = filepath.Join(s.Kubelet, "pods", "sanity", "volumes", "kubernetes.io~csi", "pv", "mount")
	cfg.StagingPath = filepath.Join(s.Kubelet, "plugins", "kubernetes.io", "csi", driver.DefaultName, "sanity", "globalmount")
	// csi-sanity makes the two directories themselves (os.Mkdir), as
	// kubelet does; their parents are the kubelet's.
	for _, p := range []string{cfg.TargetPath, cfg.StagingPath} {
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	cfg.TestVolumeSize = linuxVolumeSize
	cfg.TestVolumeExpandSize = linuxExpandSize
	cfg.TestNodeVolumeAttachLimit = true
	start := time.Now()
	c := Run(t, name, cfg, "")
	t.Logf("in %v", time.Since(start).Round(time.Millisecond))
	if c.Failed > 0 {
		t.Errorf("%d csi-sanity specs failed", c.Failed)
	}
	return c
}

// deleteAll unmounts what is left mounted in the scratch area (a failed
// spec may leave a volume staged) and deletes every volume the allocator
// has. A volume csi-sanity left (it deletes what it creates) is an error.
func deleteAll(t *testing.T, s *linuxnode.Scratch, a *driver.LoopAllocator) {
	var mps []string
	for _, m := range s.Mounts() {
		if m.MountPoint != s.Dir { // linuxnode's own bind mount of the area
			mps = append(mps, m.MountPoint)
		}
	}
	if len(mps) > 0 {
		t.Errorf("cleanup: still mounted after csi-sanity: %v", mps)
	}
	for i := len(mps) - 1; i >= 0; i-- { // mount table order: deepest last
		if err := unmount(mps[i]); err != nil {
			t.Errorf("cleanup: unmount %s: %v", mps[i], err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(a.Dir, "*.img"))
	for _, f := range files {
		id := strings.TrimSuffix(filepath.Base(f), ".img")
		t.Errorf("cleanup: volume %s left by csi-sanity", id)
		if err := a.Delete(context.Background(), id); err != nil {
			t.Errorf("cleanup: delete volume %s: %v", id, err)
		}
	}
	if left, _ := os.ReadDir(a.Dir); len(left) > 0 {
		t.Errorf("cleanup: %d files left in %s", len(left), a.Dir)
	}
}
