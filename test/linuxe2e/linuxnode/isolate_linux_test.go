package linuxnode

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

// sharedRootEnv, when set, tells this test binary (started by
// TestShareOnSharedRoot in a mount namespace of its own) to make / shared,
// as systemd makes it on a CI machine, and run the test for real.
const sharedRootEnv = "LINUXNODE_TEST_SHARED_ROOT"

// TestIsolateLeavesOtherAreasMounted: an isolated daemon starting while
// another test's volume is mounted below that test's scratch area (a
// shared bind mount) must leave the volume mounted. isolate detaches its
// copies of other tests' loop-disk mounts, and the copy of a shared mount
// is a peer of the original: unless the copies are made private first,
// the detach propagates and unmounts the other test's volume, which its
// daemon then finds gone ("not a mount point") in the middle of a flow.
func TestIsolateLeavesOtherAreasMounted(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "e2fsprogs", "mkfs.ext4")
	other := New(t)
	if err := other.share(); err != nil {
		t.Fatal(err)
	}
	l := other.Attach("vol.img", 16<<20)
	if out, err := exec.Command("mkfs.ext4", "-q", l.Path).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v\n%s", err, out)
	}
	mp := filepath.Join(other.Kubelet, "globalmount")
	if err := os.Mkdir(mp, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(l.Path, mp, "ext4", 0, ""); err != nil {
		t.Fatal(err)
	}
	// The other side: a daemon of another scratch area starts (this test
	// binary isolates itself in init, then execs itself running no test).
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, self, "-test.run=^$")
	cmd.Env = append(os.Environ(), isolateEnv+"=1", keepBelowEnv+"="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("isolated process: %v\n%s", err, out)
	}
	mounts, err := mountinfo.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(mountinfo.At(mounts, mp)) == 0 {
		t.Fatalf("another area's isolated daemon unmounted %s (%s) from this test's namespace", mp, l.Path)
	}
}

// TestShareOnSharedRoot: on a machine whose / is shared (systemd), a mount
// below the scratch area appears once in the mount table. A bind mount of
// a directory on a shared mount joins that mount's peer group; unless
// share takes the area out of it, every mount below the area is mounted a
// second time on / under the bind mount, a duplicate no path reaches
// (unmounting the path twice fails with EINVAL the second time).
func TestShareOnSharedRoot(t *testing.T) {
	testutil.RequireRoot(t)
	if os.Getenv(sharedRootEnv) == "" {
		// Run this test again in a mount namespace of its own, where /
		// can be made shared without touching the machine's.
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(self, "-test.run=^TestShareOnSharedRoot$", "-test.v")
		cmd.Env = append(os.Environ(), sharedRootEnv+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("in a namespace with / shared: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "--- PASS: TestShareOnSharedRoot") {
			t.Fatalf("in a namespace with / shared, the test did not pass:\n%s", out)
		}
		return
	}
	// The namespace is a copy of the machine's mounts (made private by
	// syscall's Unshareflags handling), other test packages' loop-disk volumes
	// among them: a copy pins its filesystem, so that package's unmount
	// would leave the partition busy while this test runs. Detached here
	// first, as isolate does for the daemon.
	copies, err := mountinfo.Read()
	if err != nil {
		t.Fatal(err)
	}
	for i := len(copies) - 1; i >= 0; i-- { // the later mounted first
		if strings.HasPrefix(copies[i].Source, "/dev/loop") {
			_ = unix.Unmount(copies[i].MountPoint, unix.MNT_DETACH) // gone with a parent is fine
		}
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SHARED, ""); err != nil {
		t.Fatalf("make / shared: %v", err)
	}
	s := New(t)
	if err := s.share(); err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(s.Kubelet, "globalmount")
	if err := os.Mkdir(mp, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("linuxnode-test", mp, "tmpfs", 0, "size=64k"); err != nil {
		t.Fatal(err)
	}
	mounts, err := mountinfo.Read()
	if err != nil {
		t.Fatal(err)
	}
	if at := mountinfo.At(mounts, mp); len(at) != 1 {
		t.Errorf("%s is in the mount table %d times, want once: %+v", mp, len(at), at)
	}
}
