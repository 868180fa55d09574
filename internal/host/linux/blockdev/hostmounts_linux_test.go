//go:build linux

package blockdev

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

// TestHostOnlyMount: a disk mounted only in another mount namespace (the
// host's, seen from a DaemonSet without it: an Azure resource disk at
// /mnt) is the host's when that namespace's table is Config.HostMountTable:
// it cannot be taken offline, partitioned, formatted, mounted or resized.
// The other namespace is made with unshare(1) and holds the mount; its
// mountinfo is /proc/<pid>/mountinfo of the process in it.
func TestHostOnlyMount(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "util-linux", "unshare")
	testutil.RequireTool(t, "mount", "mount")
	ctx := context.Background()
	v := newLoopVolume(t, "csi-hostonly.img", 64<<20)
	v.format(t)
	h, l, n, id := v.h, v.l, v.n, v.id
	// The "host": a private mount namespace with the partition mounted
	// outside the proxy's working directory.
	mnt := filepath.Join(h.files, "mnt")
	pid := mountElsewhere(t, l.path+"p1", mnt)

	b, err := New(Config{DiskFilter: []string{l.name}, MountRoots: []string{h.root}, HostMountTable: fmt.Sprintf("/proc/%d/mountinfo", pid)})
	if err != nil {
		t.Fatal(err)
	}
	host := "mounted at " + mnt
	wantErr(t, b.SetDiskOnline(ctx, n, false), errdefs.ErrFailedPrecondition, host)
	if online, err := b.IsDiskOnline(ctx, n); err != nil || !online {
		t.Fatalf("IsDiskOnline = %v, %v; the refused offline changed the disk", online, err)
	}
	wantErr(t, b.PartitionDisk(ctx, n), errdefs.ErrFailedPrecondition, host)
	wantErr(t, b.FormatVolume(ctx, id), errdefs.ErrFailedPrecondition, host)
	wantErr(t, b.MountVolume(ctx, id, filepath.Join(h.root, "stage")), errdefs.ErrFailedPrecondition, host)
	wantErr(t, b.ResizeVolume(ctx, id, 64<<20), errdefs.ErrFailedPrecondition, host)
	// Listing still works, as for every host disk.
	if ids, err := b.ListVolumesOnDisk(ctx, n, 0); err != nil || len(ids) != 1 || ids[0] != id {
		t.Fatalf("ListVolumesOnDisk = %v, %v", ids, err)
	}
	// A table that cannot be read is refused at start when set explicitly.
	if _, err := New(Config{HostMountTable: filepath.Join(h.files, "missing")}); !strings.Contains(fmt.Sprint(err), "missing") {
		t.Fatalf("New with a missing host mount table = %v", err)
	}
}

// mountElsewhere mounts dev at dir in a new private mount namespace made
// by unshare(1) and returns the PID of the process holding it; the
// namespace, and so the mount, ends when the test's cleanup kills it.
//
// The namespace starts as a copy of the machine's mounts, other test
// packages' loop-disk volumes among them (make unit runs packages side by
// side), and a copy pins its filesystem: that package's unmount succeeds
// but its partition stays busy (BLKPG_DEL_PARTITION failed with EBUSY on
// every disk of test/drivers in one CI run). So the copies of loop-disk
// mounts are detached first, in the namespace only (its mounts are
// private), as test/linuxe2e/linuxnode's isolated daemon does.
func mountElsewhere(t *testing.T, dev, dir string) int {
	t.Helper()
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c",
		`for mp in $(awk '$1 ~ "^/dev/loop" { print $2 }' /proc/self/mounts | sort -r); do umount -l "$mp" 2>/dev/null; done
mkdir -p "$1" && mount "$2" "$1" && echo ready && exec sleep 600`, "sh", dir, dev)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Registered after the harness: runs before its cleanup, so the
	// namespace is gone before the loop device is detached.
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ready := make(chan bool, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- strings.TrimSpace(line) == "ready"
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("unshare: mount %s at %s failed: %s", dev, dir, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("unshare: no mount after 10 s: %s", stderr.String())
	}
	return cmd.Process.Pid
}
