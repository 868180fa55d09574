//go:build linux

package blockdev

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/loopdisk"
)

// harness owns a test's scratch directory and loop devices and cleans up
// after it, failed or not: first every mount below the directory (deepest
// first), then the loop devices (LOOP_CLR_FD, close), then it checks that
// nothing of the test is left in the mount table or attached to a loop.
type harness struct {
	t     *testing.T
	root  string // mount root: volumes are mounted below it
	files string // backing files
	loops []*loopDisk
}

// loopDisk is a loop device attached to a sparse file.
type loopDisk struct {
	name    string // loopN
	path    string // /dev/loopN
	file    string // backing file
	backing *os.File
	dev     *os.File // held open: with AUTOCLEAR the device detaches when the last opener goes
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	// TempDir first: its removal is registered before our cleanup, so it
	// runs after it (cleanups run last-in first-out).
	h := &harness{t: t, root: t.TempDir(), files: t.TempDir()}
	t.Cleanup(h.cleanup)
	return h
}

// attach creates a sparse file of size bytes and attaches it to a free
// loop device with LOOP_CONFIGURE, in pure Go (loopdisk.Attach).
func (h *harness) attach(name string, size int64) *loopDisk {
	t := h.t
	t.Helper()
	l := &loopDisk{file: filepath.Join(h.files, name)}
	var err error
	if l.name, l.backing, l.dev, err = loopdisk.Attach(l.file, size); err != nil {
		t.Fatal(err)
	}
	l.path = "/dev/" + l.name
	h.loops = append(h.loops, l)
	return l
}

// grow enlarges the backing file and tells the loop driver
// (LOOP_SET_CAPACITY), as a cloud disk grows.
func (h *harness) grow(l *loopDisk, size int64) {
	h.t.Helper()
	if err := l.backing.Truncate(size); err != nil {
		h.t.Fatal(err)
	}
	if err := unix.IoctlSetInt(int(l.dev.Fd()), unix.LOOP_SET_CAPACITY, 0); err != nil {
		h.t.Fatalf("LOOP_SET_CAPACITY: %v", err)
	}
}

// ours tells whether a mount belongs to the test: below its directories or
// from one of its loop devices.
func (h *harness) ours(m mountinfo.Mount) bool {
	for _, dir := range []string{h.root, h.files} {
		if m.MountPoint == dir || strings.HasPrefix(m.MountPoint, dir+"/") {
			return true
		}
	}
	for _, l := range h.loops {
		if m.Source == l.path || strings.HasPrefix(m.Source, l.path+"p") {
			return true
		}
	}
	return false
}

func (h *harness) cleanup() {
	t := h.t
	mounts, err := mountinfo.Read()
	if err != nil {
		t.Errorf("cleanup: %v", err)
	}
	var mine []string
	for _, m := range mounts {
		if h.ours(m) {
			mine = append(mine, m.MountPoint)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return len(mine[i]) > len(mine[j]) })
	for _, mp := range mine {
		if err := unix.Unmount(mp, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			// Detach lazily rather than leave the machine with a mount.
			_ = unix.Unmount(mp, unix.MNT_DETACH)
		}
	}
	for _, l := range h.loops {
		// SetDiskState(offline) sets the kernel's read-only flag, which
		// belongs to the device node and outlives the attachment: undo it.
		if err := unix.IoctlSetPointerInt(int(l.dev.Fd()), unix.BLKROSET, 0); err != nil {
			t.Errorf("cleanup: BLKROSET 0 %s: %v", l.path, err)
		}
		// Partitions added with BLKPG can outlive the detach (without
		// LO_FLAGS_PARTSCAN, or when dropping them fails then), and the
		// next user of this /dev/loopN would get EBUSY adding its own.
		if err := loopdisk.DeletePartitions(l.dev, l.name); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		if err := unix.IoctlSetInt(int(l.dev.Fd()), unix.LOOP_CLR_FD, 0); err != nil && !errors.Is(err, unix.ENXIO) {
			t.Errorf("cleanup: LOOP_CLR_FD %s: %v", l.path, err)
		}
		l.dev.Close()
		l.backing.Close()
	}
	// The kernel detaches asynchronously once the last opener is gone.
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := h.leftovers()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("cleanup: left behind: %v", left)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// leftovers lists this test's mounts and attached loop devices.
func (h *harness) leftovers() []string {
	var out []string
	mounts, _ := mountinfo.Read()
	for _, m := range mounts {
		if h.ours(m) {
			out = append(out, "mount "+m.MountPoint)
		}
	}
	bf, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range bf {
		b, _ := os.ReadFile(f)
		if strings.HasPrefix(strings.TrimSpace(string(b)), h.files+"/") {
			out = append(out, "loop "+f)
		}
	}
	return out
}
