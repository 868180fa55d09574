package linuxnode

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

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
