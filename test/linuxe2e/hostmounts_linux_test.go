//go:build linux

package linuxe2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

// TestHostMountTableFlag: --linux-host-mount-table names the table the
// daemon reads as the host's. A partition mounted only in the test's
// namespace, outside the working directory, makes its disk the host's
// when the flag names a copy of that namespace's table taken after the
// mount, and does not with --linux-host-mount-table=none (the daemon's
// own namespace does not show the mount): PartitionDisk of the
// partitioned disk is refused in the first case and a no-op OK in the
// second. (TestHostOnlyMountOverTheWire covers the default,
// /proc/1/mountinfo.)
func TestHostMountTableFlag(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "e2fsprogs", "mkfs.ext4")
	hostDir := privateDir(t, "lnxhost")
	table := filepath.Join(hostDir, "mountinfo")
	// The daemon refuses to start on a table it cannot read: write one
	// now, the copy comes after the mount.
	if err := os.WriteFile(table, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	first := newNode(t, "ext4", "--linux-host-mount-table="+table)
	l := first.attach("csi-e2e-hosttable.img", 64<<20)
	num := first.findDisk(l.File, "")
	first.ok("PartitionDisk", first.partition(num))
	if out, err := exec.Command("mkfs.ext4", "-q", l.Path+"p1").CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v\n%s", err, out)
	}
	mnt := filepath.Join(hostDir, "mnt")
	first.ok("mkdir", os.Mkdir(mnt, 0o750))
	first.ok("mount on the host only", unix.Mount(l.Path+"p1", mnt, "ext4", 0, ""))
	t.Cleanup(func() { _ = unix.Unmount(mnt, 0) }) // before the scratch area's cleanup detaches the disk
	b, err := os.ReadFile("/proc/self/mountinfo")
	first.ok("read the mount table", err)
	first.ok("copy the mount table", os.WriteFile(table, b, 0o600))

	_, err = first.disk.PartitionDisk(first.ctx(), &diskv1.PartitionDiskRequest{DiskNumber: num})
	first.wantErr("PartitionDisk of a disk the named table shows mounted", err, codes.FailedPrecondition, "mounted at "+mnt+" in the host's mount namespace")

	// The same node served by a daemon told to read no host table: it
	// sees the disk as its own, and PartitionDisk of the partitioned
	// disk is a no-op.
	first.d.Stop(t)
	none := nodeOn(t, first.s, "ext4", "--linux-host-mount-table=none")
	none.loops = first.loops
	before := none.state()
	_, err = none.disk.PartitionDisk(none.ctx(), &diskv1.PartitionDiskRequest{DiskNumber: num})
	none.ok("PartitionDisk with --linux-host-mount-table=none", err)
	if after := none.state(); after != before {
		t.Fatalf("PartitionDisk of a partitioned disk changed the node:\n%s", diff(before, after))
	}
}
