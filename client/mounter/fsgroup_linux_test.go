//go:build linux

package mounter_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/client/mounter"
	"github.com/csi-node-proxy/csi-node-proxy/examples/driver/nodeops"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

// TestMain removes the daemon linuxnode built for the Linux test below.
func TestMain(m *testing.M) {
	code := m.Run()
	linuxnode.RemoveDaemonBinary()
	os.Exit(code)
}

// The pod of the fsGroup test: a non-root user whose supplementary group
// is the pod's fsGroup, as the container runtime starts it.
const (
	podUID     = 1000
	podGID     = 1000
	podFSGroup = 4321
)

// TestFSGroupReachesPublishedVolume stages a real ext4 loop disk through
// the daemon (--host=linux) with the mounter, publishes it the way the
// example driver does, runs kubelet's fsGroup walk on the publish path and
// writes into the volume as the pod's non-root user. A publish link (what
// Windows drivers do, PublishLink) is the control: kubelet's walk does not
// descend into a link at the volume's root, so the pod gets EACCES; the
// Linux default (PublishMount, a second mount of the volume) lets it
// write.
func TestFSGroupReachesPublishedVolume(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "e2fsprogs", "mkfs.ext4")
	s := linuxnode.New(t)
	d := linuxnode.StartDaemon(t, s, linuxnode.OwnDisks)
	l := s.Attach("fsgroup-disk", 64<<20)
	ctx := t.Context()
	node, err := client.Dial(ctx, client.Options{SocketDir: d.SocketDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Close() })

	m := mounter.New(node, mounter.Options{}) // PublishAuto: a Linux node, so mounts
	n, err := m.FindDiskBySerial(ctx, l.File)
	if err != nil {
		t.Fatal(err)
	}
	staging := filepath.Join(s.Kubelet, "plugins", "kubernetes.io", "csi", "example.csi.io", "pv-1", "globalmount")
	if _, err := m.FormatAndMount(ctx, n, staging); err != nil {
		t.Fatalf("stage: %v", err)
	}
	podVolumes := filepath.Join(s.Kubelet, "pods", "0f1e2d3c", "volumes", "kubernetes.io~csi")

	t.Run("publish by link: the walk stops at the link", func(t *testing.T) {
		linked := mounter.New(node, mounter.Options{Publish: mounter.PublishLink})
		target := filepath.Join(podVolumes, "pv-link", "mount")
		if err := nodeops.NodePublishVolume(linked, staging, target); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(target); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("publish path: %v, %v; want a link", fi, err)
		}
		setVolumeOwnership(t, target, podFSGroup)
		err := writeAsPod(t, target, "by-link")
		if err == nil || !strings.Contains(err.Error(), "Permission denied") {
			t.Errorf("the pod wrote through a linked publish path (%v); the control should fail with EACCES", err)
		}
		if err := nodeops.NodeUnpublishVolume(linked, target); err != nil {
			t.Fatal(err)
		}
	})

	target := filepath.Join(podVolumes, "pv-1", "mount")
	if err := os.MkdirAll(target, 0o750); err != nil {
		t.Fatal(err) // kubelet's part: the pod's volume directory
	}
	for range 2 { // kubelet retries
		if err := nodeops.NodePublishVolume(m, staging, target); err != nil {
			t.Fatalf("publish: %v", err)
		}
	}
	if fi, err := os.Lstat(target); err != nil || !fi.IsDir() {
		t.Fatalf("publish path: %v, %v; want a directory", fi, err)
	}
	if notMnt, err := m.IsLikelyNotMountPoint(target); err != nil || notMnt {
		t.Errorf("IsLikelyNotMountPoint(publish path) = %v, %v; want a mount point", notMnt, err)
	}
	if got := mountsAt(t, s, target); got != 1 {
		t.Fatalf("%d mounts at the publish path, want 1", got)
	}
	setVolumeOwnership(t, target, podFSGroup)
	if err := writeAsPod(t, target, "by-mount"); err != nil {
		t.Fatalf("the pod cannot write into the published volume after kubelet's fsGroup walk: %v", err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(staging, "by-mount"), &st); err != nil {
		t.Fatalf("the pod's file is not on the staged volume: %v", err)
	}
	if st.Uid != podUID || st.Gid != podFSGroup {
		t.Errorf("the pod's file is %d:%d, want %d:%d (setgid directory of the fsGroup)", st.Uid, st.Gid, podUID, podFSGroup)
	}

	for range 2 {
		if err := nodeops.NodeUnpublishVolume(m, target); err != nil {
			t.Fatalf("unpublish: %v", err)
		}
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("publish path after unpublish: %v; want gone", err)
	}
	if _, err := os.Stat(filepath.Join(staging, "by-mount")); err != nil {
		t.Errorf("the staged volume lost the pod's file: %v", err)
	}
	if err := nodeops.NodeUnstageVolume(ctx, m, staging); err != nil {
		t.Fatalf("unstage: %v", err)
	}
	if got := mountsAt(t, s, staging); got != 0 {
		t.Errorf("%d mounts left at the staging path", got)
	}
}

// mountsAt counts the mounts at exactly mp.
func mountsAt(t *testing.T, s *linuxnode.Scratch, mp string) int {
	t.Helper()
	c := 0
	for _, m := range s.Mounts() {
		if m.MountPoint == mp {
			c++
		}
	}
	return c
}

// setVolumeOwnership does what kubelet's volume.SetVolumeOwnership does
// for fsGroupChangePolicy Always (kubernetes/kubernetes
// pkg/volume/volume_linux.go, walkDeep and changeFilePermission): a
// filepath.Walk from the publish path, which lstat()s its root and so
// does not descend when the root is a link; every entry gets group fsGroup
// (lchown), and every entry that is not a link gets rw for the group, and
// directories also x and setgid.
func setVolumeOwnership(t *testing.T, dir string, fsGroup int) {
	t.Helper()
	err := filepath.Walk(dir, func(path string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(path, -1, fsGroup); err != nil {
			return err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return nil
		}
		mode := info.Mode() | 0o660
		if info.IsDir() {
			mode |= fs.ModeSetgid | 0o110
		}
		return os.Chmod(path, mode)
	})
	if err != nil {
		t.Fatalf("kubelet's fsGroup walk of %s: %v", dir, err)
	}
}

// writeAsPod creates name in dir as the pod's user (uid podUID, groups
// podGID and podFSGroup), reaching dir through an inherited descriptor as
// a container reaches its volume at its own mount point: the node's
// directories above it are not the pod's concern.
func writeAsPod(t *testing.T, dir, name string) error {
	t.Helper()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cmd := exec.Command("/bin/sh", "-c", `echo pod > "/proc/self/fd/3/$1"`, "sh", name)
	cmd.ExtraFiles = []*os.File{d}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: podUID, Gid: podGID, Groups: []uint32{podFSGroup}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return errors.New(strings.TrimSpace(string(out)) + ": " + err.Error())
	}
	return nil
}
