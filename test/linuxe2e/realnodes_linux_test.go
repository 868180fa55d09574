//go:build linux

package linuxe2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/loopdisk"
)

// This file holds the layouts real Linux nodes have (issue 17), over the
// daemon's sockets: disks formatted whole by Linux drivers, cloned disks,
// and disks mounted only in the host's mount namespace.

// TestWholeDiskStageFlow: aws-ebs, gce-pd and azuredisk on Linux run mkfs
// on the whole device, without a partition table. Such a disk, made by
// mkfs on the loop device, is one volume named by its filesystem UUID; it
// stages, publishes, expands, unstages, goes offline and stages again,
// and PartitionDisk never writes to it.
func TestWholeDiskStageFlow(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "util-linux", "blkid")
	for _, tc := range loopdisk.WholeDisk {
		t.Run(tc.Name, func(t *testing.T) {
			testutil.RequireTool(t, tc.Package, tc.Mkfs[0])
			// The daemon creates ext4 either way: a whole-disk volume
			// mounts as what it holds.
			n := newNode(t, "ext4")
			wholeDiskFlow(t, n, tc.Name, tc.Mkfs, tc.Size)
		})
	}
}

func wholeDiskFlow(t *testing.T, n *node, fs string, mkfs []string, size int64) {
	ctx := n.ctx()
	l := n.attach("csi-e2e-whole-"+fs+".img", size)
	if out, err := exec.Command(mkfs[0], append(mkfs[1:], l.Path)...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v: %s", mkfs, err, out)
	}
	uuid, err := exec.Command("blkid", "-p", "-s", "UUID", "-o", "value", l.Path).Output()
	n.ok("blkid UUID", err)
	id := strings.TrimSpace(string(uuid))
	num := n.findDisk(l.File, "")

	n.twice("SetDiskState(online)", func() error {
		_, err := n.disk.SetDiskState(n.ctx(), &diskv1.SetDiskStateRequest{DiskNumber: num, IsOnline: true})
		return err
	})
	head := loopdisk.ReadHead(t, l.Path)
	n.twice("PartitionDisk(whole-disk filesystem)", func() error { return n.partition(num) })
	if !bytes.Equal(head, loopdisk.ReadHead(t, l.Path)) {
		t.Fatal("PartitionDisk wrote to a disk holding a whole-disk filesystem")
	}
	vols, err := n.vol.ListVolumesOnDisk(ctx, &volumev1.ListVolumesOnDiskRequest{DiskNumber: num})
	if err != nil || len(vols.VolumeIds) != 1 || vols.VolumeIds[0] != id {
		t.Fatalf("ListVolumesOnDisk = %v, %v; want the filesystem UUID %s", vols, err, id)
	}
	f, err := n.vol.IsVolumeFormatted(ctx, &volumev1.IsVolumeFormattedRequest{VolumeId: id})
	if err != nil || !f.Formatted {
		t.Fatalf("IsVolumeFormatted = %v, %v", f, err)
	}
	_, err = n.vol.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: id})
	n.wantErr("FormatVolume(whole-disk filesystem)", err, codes.FailedPrecondition, "already formatted")

	// Stage.
	staging := n.path("plugins", "kubernetes.io", "csi", "ebs.csi.aws.com", "whole", "globalmount")
	n.twice("Mkdir(staging parent)", func() error {
		_, err := n.fs.Mkdir(n.ctx(), &filesystemv1.MkdirRequest{Path: filepath.Dir(staging)})
		return err
	})
	stage := func() error {
		_, err := n.vol.MountVolume(n.ctx(), &volumev1.MountVolumeRequest{VolumeId: id, TargetPath: staging})
		return err
	}
	n.twice("MountVolume(staging)", stage)
	for _, m := range n.s.Mounts() {
		if m.MountPoint == staging && (m.Source != l.Path || m.FSType != fs) {
			t.Fatalf("staging mount is %s %s, want %s %s", m.Source, m.FSType, l.Path, fs)
		}
	}
	payload := bytes.Repeat([]byte("whole disk "), 4<<10)
	n.ok("write", os.WriteFile(filepath.Join(staging, "data"), payload, 0o600))
	_, err = n.vol.WriteVolumeCache(ctx, &volumev1.WriteVolumeCacheRequest{VolumeId: id})
	n.ok("WriteVolumeCache", err)

	// Publish: a link to the staging path, as upstream's drivers do.
	publish := n.publishPath("9a8b7c6d-0000-4000-8000-000000000001", "pvc-whole")
	n.twice("CreateSymlink(publish -> staging)", func() error {
		_, err := n.fs.CreateSymlink(n.ctx(), &filesystemv1.CreateSymlinkRequest{SourcePath: staging, TargetPath: publish})
		if err != nil && exists(publish) {
			return nil // the second call: the link is there
		}
		return err
	})
	at, err := n.vol.GetVolumeIDFromTargetPath(ctx, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: publish})
	if err != nil || at.VolumeId != id {
		t.Fatalf("GetVolumeIDFromTargetPath(publish) = %v, %v; want %s", at, err, id)
	}
	total0, _ := n.volumeStats(id, staging)

	// Expand: the disk grows, the volume (the whole disk) follows.
	l.Grow(t, 2*size)
	_, err = n.disk.Rescan(ctx, &diskv1.RescanRequest{})
	n.ok("Rescan", err)
	_, err = n.vol.ResizeVolume(ctx, &volumev1.ResizeVolumeRequest{VolumeId: id})
	onlineGrown := err == nil
	if !onlineGrown {
		// ext4 online growth needs CAP_SYS_RESOURCE (this-machine.md).
		if fs != "ext4" {
			t.Fatalf("ResizeVolume(mounted %s): %v", fs, err)
		}
		n.wantErr("ResizeVolume(mounted ext4)", err, codes.FailedPrecondition, "CAP_SYS_RESOURCE")
	}

	// Unpublish, unstage.
	_, err = n.fs.Rmdir(ctx, &filesystemv1.RmdirRequest{Path: publish})
	n.ok("Rmdir(publish)", err)
	n.twice("UnmountVolume(staging)", func() error {
		_, err := n.vol.UnmountVolume(n.ctx(), &volumev1.UnmountVolumeRequest{VolumeId: id, TargetPath: staging})
		return err
	})
	if !onlineGrown {
		_, err = n.vol.ResizeVolume(ctx, &volumev1.ResizeVolumeRequest{VolumeId: id})
		n.ok("ResizeVolume(unmounted ext4)", err)
	}
	// Offline, then stage again: PartitionDisk reads the offline disk and
	// leaves it alone; SetDiskState(online); MountVolume.
	_, err = n.disk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: num, IsOnline: false})
	n.ok("SetDiskState(offline)", err)
	n.ok("PartitionDisk(offline whole-disk volume)", n.partition(num))
	if n.online(num) {
		t.Fatal("PartitionDisk brought the offline whole-disk volume online")
	}
	_, err = n.disk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: num, IsOnline: true})
	n.ok("SetDiskState(online)", err)
	n.ok("MountVolume(staging) again", stage())
	if got, err := os.ReadFile(filepath.Join(staging, "data")); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("data after re-staging: %d bytes, %v", len(got), err)
	}
	if total, _ := n.volumeStats(id, staging); total < total0+size/2 {
		t.Fatalf("after expansion GetVolumeStats total = %d, was %d; the disk grew by %d", total, total0, size)
	}
	_, err = n.vol.UnmountVolume(ctx, &volumev1.UnmountVolumeRequest{VolumeId: id, TargetPath: staging})
	n.ok("UnmountVolume(staging)", err)
}

// TestClonedDiskOverTheWire: with a byte copy of a staged disk attached
// (a snapshot restore, a PVC clone), the live volume's stats and unmount
// keep working, and SetDiskState(online) gives the clone new identities,
// so it stages beside the original under a volume ID of its own.
func TestClonedDiskOverTheWire(t *testing.T) {
	n := newExt4Node(t)
	ctx := n.ctx()
	const size = 64 << 20
	a := n.attach("csi-e2e-original.img", size)
	c := n.attach("csi-e2e-clone.img", size)
	na, nc := n.findDisk(a.File, ""), n.findDisk(c.File, "")
	id := n.formattedVolume(na)
	staging := n.path("original")
	_, err := n.vol.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: id, TargetPath: staging})
	n.ok("MountVolume(original)", err)
	n.ok("write", os.WriteFile(filepath.Join(staging, "data"), []byte("original"), 0o600))
	_, err = n.vol.WriteVolumeCache(ctx, &volumev1.WriteVolumeCacheRequest{VolumeId: id})
	n.ok("WriteVolumeCache", err)
	loopdisk.Copy(t, a.Path, c.Path)

	cv, err := n.vol.ListVolumesOnDisk(ctx, &volumev1.ListVolumesOnDiskRequest{DiskNumber: nc})
	if err != nil || len(cv.VolumeIds) != 1 || cv.VolumeIds[0] != id {
		t.Fatalf("clone's volumes = %v, %v; want the original's %s", cv, err, id)
	}
	n.volumeStats(id, staging)
	dn, err := n.vol.GetDiskNumberFromVolumeID(ctx, &volumev1.GetDiskNumberFromVolumeIDRequest{VolumeId: id})
	if err != nil || dn.DiskNumber != na {
		t.Fatalf("GetDiskNumberFromVolumeID = %v, %v; want the mounted original %d", dn, err, na)
	}
	n.twice("SetDiskState(clone online)", func() error {
		_, err := n.disk.SetDiskState(n.ctx(), &diskv1.SetDiskStateRequest{DiskNumber: nc, IsOnline: true})
		return err
	})
	cv, err = n.vol.ListVolumesOnDisk(ctx, &volumev1.ListVolumesOnDiskRequest{DiskNumber: nc})
	if err != nil || len(cv.VolumeIds) != 1 || cv.VolumeIds[0] == id {
		t.Fatalf("clone's volumes after SetDiskState(online) = %v, %v; want a new ID", cv, err)
	}
	cloneStaging := n.path("clone")
	_, err = n.vol.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: cv.VolumeIds[0], TargetPath: cloneStaging})
	n.ok("MountVolume(clone)", err)
	if b, err := os.ReadFile(filepath.Join(cloneStaging, "data")); err != nil || string(b) != "original" {
		t.Fatalf("clone data = %q, %v", b, err)
	}
	_, err = n.vol.UnmountVolume(ctx, &volumev1.UnmountVolumeRequest{VolumeId: id, TargetPath: staging})
	n.ok("UnmountVolume(original)", err)
	_, err = n.vol.UnmountVolume(ctx, &volumev1.UnmountVolumeRequest{VolumeId: cv.VolumeIds[0], TargetPath: cloneStaging})
	n.ok("UnmountVolume(clone)", err)
}

// TestHostOnlyMountOverTheWire: the daemon runs in a mount namespace of
// its own (linuxnode.OwnDisks), as a DaemonSet does. A partition mounted
// only in the host's namespace (the test's, PID 1's) outside the working
// directory, like an Azure resource disk at /mnt, makes its disk the
// host's: the daemon reads /proc/1/mountinfo and refuses to take it
// offline, partition, format or mount it.
func TestHostOnlyMountOverTheWire(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "e2fsprogs", "mkfs.ext4")
	// A private directory outside the scratch area (which the daemon
	// shares): mounts below it stay in the host's namespace.
	hostDir := privateDir(t, "lnxhost")
	n := newNode(t, "ext4")
	ctx := n.ctx()
	l, num, id := n.attachVolume("csi-e2e-hostonly.img", 64<<20)

	mnt := filepath.Join(hostDir, "mnt")
	n.ok("mkdir", os.Mkdir(mnt, 0o750))
	n.ok("mount on the host only", unix.Mount(l.Path+"p1", mnt, "ext4", 0, ""))
	before := n.state()
	host := "mounted at " + mnt + " in the host's mount namespace"
	_, err := n.disk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: num, IsOnline: false})
	n.wantErr("SetDiskState(offline) of a disk mounted on the host", err, codes.FailedPrecondition, host)
	if !n.online(num) || l.Attr("ro") != "0" {
		t.Fatal("the refused SetDiskState(offline) took the disk offline")
	}
	_, err = n.disk.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: num})
	n.wantErr("PartitionDisk", err, codes.FailedPrecondition, host)
	_, err = n.vol.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: id, TargetPath: n.path("stage")})
	n.wantErr("MountVolume", err, codes.FailedPrecondition, host)
	if after := n.state(); after != before {
		t.Fatalf("refused calls changed the node:\n%s", diff(before, after))
	}
	// Unmounted on the host, the disk is the proxy's again.
	n.ok("unmount on the host", unix.Unmount(mnt, 0))
	_, err = n.disk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: num, IsOnline: false})
	n.ok("SetDiskState(offline) after the host unmounted", err)
}

// privateDir makes a directory in os.TempDir, outside the scratch area
// (which the daemon shares), and bind-mounts it onto itself with private
// propagation, so mounts below it are not copied into the daemon's
// namespace (started after it). It registers the directory's removal,
// which runs after the scratch area's cleanup has unmounted the test's
// loop partitions wherever they are (cleanups run last-in first-out).
func privateDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			t.Errorf("cleanup: unmount %s: %v", dir, err)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	if err := unix.Mount("", dir, "", unix.MS_PRIVATE, ""); err != nil {
		t.Fatal(err)
	}
	return dir
}
