//go:build linux

package linuxe2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

// missingVolume is a well-formed partition GUID no disk holds.
const missingVolume = "6e9c8e8c-0000-4000-8000-00000000e2e0"

// TestWrongInputs: disks that do not exist (never existed, or detached),
// the disk holding the root filesystem, malformed and unknown volume IDs,
// and paths that are relative, traversing, outside the working directory
// or leading out of it through a link. Each must fail with the documented
// code and change nothing.
func TestWrongInputs(t *testing.T) {
	n := newExt4Node(t)
	ctx := n.ctx()
	before := n.state()

	// Disks. There is no disk 0 (diskseq starts at 1), and the number of
	// a detached disk is never given to another.
	gone := n.s.Attach("csi-e2e-gone.img", 16<<20)
	stale, err := gone.Diskseq()
	n.ok("diskseq", err)
	if got := n.findDisk(gone.File, ""); got != stale {
		t.Fatalf("attached disk has number %d, want its diskseq %d", got, stale)
	}
	n.ok("detach", n.s.Detach(gone))
	for _, num := range []uint32{0, stale} {
		what := fmt.Sprintf("disk %d", num)
		_, err := n.disk.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: num})
		n.wantErr("PartitionDisk("+what+")", err, codes.NotFound, what)
		_, err = n.disk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: num, IsOnline: true})
		n.wantErr("SetDiskState("+what+")", err, codes.NotFound, what)
		_, err = n.disk.GetDiskState(ctx, &diskv1.GetDiskStateRequest{DiskNumber: num})
		n.wantErr("GetDiskState("+what+")", err, codes.NotFound, what)
		_, err = n.disk.GetDiskStats(ctx, &diskv1.GetDiskStatsRequest{DiskNumber: num})
		n.wantErr("GetDiskStats("+what+")", err, codes.NotFound, what)
		_, err = n.vol.ListVolumesOnDisk(ctx, &volumev1.ListVolumesOnDiskRequest{DiskNumber: num})
		n.wantErr("ListVolumesOnDisk("+what+")", err, codes.NotFound, what)
	}

	// The root disk is listed but never changed.
	if root, seq, err := rootDisk(); err != nil {
		t.Logf("no root disk check: %v", err)
	} else {
		ids, err := n.disk.ListDiskIDs(ctx, &diskv1.ListDiskIDsRequest{})
		n.ok("ListDiskIDs", err)
		if _, ok := ids.DiskIDs[seq]; !ok {
			t.Errorf("the root disk %s (number %d) is not listed", root, seq)
		}
		_, err = n.disk.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: seq})
		n.wantErr("PartitionDisk(root disk "+root+")", err, codes.FailedPrecondition, "belongs to the host")
		if err != nil && !strings.Contains(err.Error(), "mounted at /") {
			t.Errorf("the refusal does not say the disk holds the root filesystem: %v", err)
		}
		_, err = n.disk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: seq, IsOnline: false})
		n.wantErr("SetDiskState(root disk, offline)", err, codes.FailedPrecondition, "belongs to the host")
		if !n.online(seq) {
			t.Error("the root disk reads offline")
		}
	}

	// Volume IDs: malformed ones are InvalidArgument before anything is
	// looked up; well-formed ones no disk holds are NotFound.
	staging := n.path("plugins", "kubernetes.io", "csi", "example.csi.io", "wrong", "globalmount")
	for _, bad := range []struct{ id, substr string }{
		{"", "volume_id is empty"},
		{"bad/id", "contains '/'"},
		{"has space", "contains ' '"},
		{strings.Repeat("a", 257), "the limit is 256"},
	} {
		_, err := n.vol.IsVolumeFormatted(ctx, &volumev1.IsVolumeFormattedRequest{VolumeId: bad.id})
		n.wantErr("IsVolumeFormatted("+bad.id+")", err, codes.InvalidArgument, bad.substr)
		_, err = n.vol.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: bad.id})
		n.wantErr("FormatVolume("+bad.id+")", err, codes.InvalidArgument, bad.substr)
		_, err = n.vol.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: bad.id, TargetPath: staging})
		n.wantErr("MountVolume("+bad.id+")", err, codes.InvalidArgument, bad.substr)
		_, err = n.vol.ResizeVolume(ctx, &volumev1.ResizeVolumeRequest{VolumeId: bad.id})
		n.wantErr("ResizeVolume("+bad.id+")", err, codes.InvalidArgument, bad.substr)
	}
	_, err = n.vol.ResizeVolume(ctx, &volumev1.ResizeVolumeRequest{VolumeId: missingVolume, SizeBytes: -1})
	n.wantErr("ResizeVolume(size -1)", err, codes.InvalidArgument, "negative")
	for _, id := range []string{missingVolume, "not-a-guid"} {
		_, err := n.vol.IsVolumeFormatted(ctx, &volumev1.IsVolumeFormattedRequest{VolumeId: id})
		n.wantErr("IsVolumeFormatted("+id+")", err, codes.NotFound, "")
		_, err = n.vol.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: id})
		n.wantErr("FormatVolume("+id+")", err, codes.NotFound, "")
		_, err = n.vol.GetDiskNumberFromVolumeID(ctx, &volumev1.GetDiskNumberFromVolumeIDRequest{VolumeId: id})
		n.wantErr("GetDiskNumberFromVolumeID("+id+")", err, codes.NotFound, "")
		_, err = n.vol.GetVolumeStats(ctx, &volumev1.GetVolumeStatsRequest{VolumeId: id})
		n.wantErr("GetVolumeStats("+id+")", err, codes.NotFound, "")
	}
	n.ok("Mkdir(staging parent)", mkdir(n, filepath.Dir(staging)))
	_, err = n.vol.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: missingVolume, TargetPath: staging})
	n.wantErr("MountVolume(unknown volume)", err, codes.NotFound, "")
	if exists(staging) {
		t.Error("a failed MountVolume left its target directory")
	}

	// Paths.
	outside := filepath.Join(n.s.Dir, "outside") // outside the working directory, inside the test's
	n.ok("mkdir", os.Mkdir(outside, 0o750))
	sibling := n.s.Kubelet + "-x"
	for _, bad := range []struct {
		path   string
		code   codes.Code
		substr string
	}{
		{"", codes.InvalidArgument, "path is empty"},
		{"var/lib/kubelet/pods", codes.InvalidArgument, "is not absolute"},
		{strings.TrimPrefix(n.path("pods"), "/"), codes.InvalidArgument, "is not absolute"},
		{n.path("pods") + "/../../outside", codes.InvalidArgument, `".." element`},
		{n.path("pods") + "/\x01", codes.InvalidArgument, "control character"},
		{"/etc/csi-node-proxy-linuxe2e", codes.PermissionDenied, "is outside the working directories"},
		{outside + "/x", codes.PermissionDenied, "is outside the working directories"},
		{sibling + "/pods", codes.PermissionDenied, "is outside the working directories"},
		{"/", codes.PermissionDenied, "is outside the working directories"},
	} {
		what := fmt.Sprintf("%q", bad.path)
		n.wantErr("Mkdir("+what+")", mkdir(n, bad.path), bad.code, bad.substr)
		_, err := n.fs.Rmdir(ctx, &filesystemv1.RmdirRequest{Path: bad.path, Force: true})
		n.wantErr("Rmdir("+what+")", err, bad.code, bad.substr)
		_, err = n.fs.CreateSymlink(ctx, &filesystemv1.CreateSymlinkRequest{SourcePath: staging, TargetPath: bad.path})
		n.wantErr("CreateSymlink(target "+what+")", err, bad.code, bad.substr)
		_, err = n.fs.CreateSymlink(ctx, &filesystemv1.CreateSymlinkRequest{SourcePath: bad.path, TargetPath: n.path("pods", "link")})
		n.wantErr("CreateSymlink(source "+what+")", err, bad.code, bad.substr)
		_, err = n.fs.IsSymlink(ctx, &filesystemv1.IsSymlinkRequest{Path: bad.path})
		n.wantErr("IsSymlink("+what+")", err, bad.code, bad.substr)
		_, err = n.vol.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: missingVolume, TargetPath: bad.path})
		n.wantErr("MountVolume(target "+what+")", err, bad.code, bad.substr)
		_, err = n.vol.UnmountVolume(ctx, &volumev1.UnmountVolumeRequest{VolumeId: missingVolume, TargetPath: bad.path})
		n.wantErr("UnmountVolume(target "+what+")", err, bad.code, bad.substr)
		_, err = n.vol.GetVolumeIDFromTargetPath(ctx, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: bad.path})
		n.wantErr("GetVolumeIDFromTargetPath("+what+")", err, bad.code, bad.substr)
	}
	for _, p := range []string{"/etc/csi-node-proxy-linuxe2e", outside + "/x", sibling} {
		if exists(p) {
			t.Errorf("a refused call created %s", p)
			_ = os.RemoveAll(p)
		}
	}

	// A link planted below the working directory (by a pod, say) that
	// leads out of it: the filesystem group refuses to follow it.
	n.ok("mkdir", os.MkdirAll(n.path("pods", "evil"), 0o750))
	n.ok("symlink", os.Symlink(outside, n.path("pods", "evil", "escape")))
	n.wantErr("Mkdir(through a link out)", mkdir(n, n.path("pods", "evil", "escape", "x")), codes.PermissionDenied, "resolves outside")
	_, err = n.fs.Rmdir(ctx, &filesystemv1.RmdirRequest{Path: n.path("pods", "evil", "escape", "x"), Force: true})
	n.wantErr("Rmdir(through a link out)", err, codes.PermissionDenied, "resolves outside")
	if exists(filepath.Join(outside, "x")) {
		t.Error("Mkdir through a link created a directory outside the working directory")
	}
	_, err = n.fs.Rmdir(ctx, &filesystemv1.RmdirRequest{Path: n.path("pods", "evil"), Force: true})
	n.ok("Rmdir(force) of a tree holding a link out", err)
	if !exists(outside) {
		t.Fatal("Rmdir(force) followed a link out of the working directory")
	}

	// The planted files are gone; nothing else changed.
	n.ok("rmdir", os.Remove(outside))
	if after := n.state(); after != before {
		// Only the staging parent and the pods directory created above
		// may differ.
		for _, line := range strings.Split(diff(before, after), "\n") {
			if !strings.HasPrefix(line, "+ path "+n.path("plugins")) && !strings.HasPrefix(line, "+ path "+n.path("pods")+" ") {
				t.Errorf("wrong inputs changed the node: %s", line)
			}
		}
	}
}

// TestMountTargetThroughLink: the volume group must not mount through a
// link planted below the working directory that leads out of it, as the
// filesystem group refuses to follow one (docs/linux-filesystem-system.md,
// "Symlink safety"), nor unmount or name a volume mounted outside through
// such a link. The link here leads to a directory of the test, so nothing
// outside the test is touched either way.
func TestMountTargetThroughLink(t *testing.T) {
	n := newExt4Node(t)
	ctx := n.ctx()
	l, _, id := n.attachVolume("csi-e2e-link.img", 32<<20)

	outside := filepath.Join(n.s.Dir, "outside")
	n.ok("mkdir", os.Mkdir(outside, 0o750))
	n.ok("mkdir", os.MkdirAll(n.path("pods", "evil"), 0o750))
	n.ok("symlink", os.Symlink(outside, n.path("pods", "evil", "escape")))
	target := n.path("pods", "evil", "escape", "mnt")
	_, err := n.vol.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: id, TargetPath: target})
	escaped := false
	for _, m := range n.s.Mounts() {
		if m.MountPoint == filepath.Join(outside, "mnt") {
			escaped = true
		}
	}
	if escaped {
		// Undo it here (the cleanup would too) and say what happened.
		_ = unix.Unmount(filepath.Join(outside, "mnt"), 0)
		t.Fatalf("MountVolume(%s) followed the link %s -> %s and mounted the volume at %s (error: %v)",
			target, n.path("pods", "evil", "escape"), outside, filepath.Join(outside, "mnt"), err)
	}
	n.wantErr("MountVolume(through a link out)", err, codes.PermissionDenied, "resolves outside")
	if exists(filepath.Join(outside, "mnt")) {
		t.Error("a refused MountVolume created its target outside the working directory")
	}

	// The volume mounted outside the working directory (as a host mount
	// would be): neither unmounted nor named through the link.
	mnt := filepath.Join(outside, "mnt")
	n.ok("mkdir", os.Mkdir(mnt, 0o750))
	dev := partitionOf(t, l.Path)
	n.ok("mount outside", unix.Mount(dev, mnt, "ext4", 0, ""))
	_, err = n.vol.UnmountVolume(ctx, &volumev1.UnmountVolumeRequest{VolumeId: id, TargetPath: target})
	n.wantErr("UnmountVolume(through a link out)", err, codes.PermissionDenied, "resolves outside")
	_, err = n.vol.GetVolumeIDFromTargetPath(ctx, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: target})
	n.wantErr("GetVolumeIDFromTargetPath(through a link out)", err, codes.PermissionDenied, "resolves outside")
	still := false
	for _, m := range n.s.Mounts() {
		if m.MountPoint == mnt {
			still = true
		}
	}
	if !still {
		t.Fatalf("UnmountVolume through the link %s unmounted %s outside the working directory", n.path("pods", "evil", "escape"), mnt)
	}
	n.ok("unmount outside", unix.Unmount(mnt, 0))
}

// partitionOf returns the device node of the first partition of the loop
// disk at disk (/dev/loopN -> /dev/loopNp1).
func partitionOf(t *testing.T, disk string) string {
	t.Helper()
	p := disk + "p1"
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no partition device for %s: %v", disk, err)
	}
	return p
}

// mkdir calls filesystem Mkdir.
func mkdir(n *node, p string) error {
	_, err := n.fs.Mkdir(n.ctx(), &filesystemv1.MkdirRequest{Path: p})
	return err
}

// rootDisk returns the kernel name and diskseq of the whole disk holding
// "/".
func rootDisk() (string, uint32, error) {
	name, err := linuxnode.RootDisk()
	if err != nil {
		return "", 0, err
	}
	b, err := os.ReadFile("/sys/block/" + name + "/diskseq")
	if err != nil {
		return "", 0, err
	}
	seq, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	return name, uint32(seq), err
}
