//go:build linux

package blockdev

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
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
// loop device with LOOP_CONFIGURE, in pure Go (this-machine.md §2).
func (h *harness) attach(name string, size int64) *loopDisk {
	t := h.t
	t.Helper()
	l := &loopDisk{file: filepath.Join(h.files, name)}
	var err error
	if l.backing, err = os.OpenFile(l.file, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.backing.Truncate(size); err != nil {
		t.Fatal(err)
	}
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	// Another process may take the free device between GET_FREE and
	// CONFIGURE (EBUSY): ask again.
	for try := 0; ; try++ {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			t.Fatalf("LOOP_CTL_GET_FREE: %v", err)
		}
		l.name = fmt.Sprintf("loop%d", n)
		l.path = "/dev/" + l.name
		if l.dev, err = os.OpenFile(l.path, os.O_RDWR, 0); err != nil {
			t.Fatal(err)
		}
		cfg := unix.LoopConfig{Fd: uint32(l.backing.Fd()), Info: unix.LoopInfo64{Flags: unix.LO_FLAGS_PARTSCAN | unix.LO_FLAGS_AUTOCLEAR}}
		copy(cfg.Info.File_name[:], name)
		err = unix.IoctlLoopConfigure(int(l.dev.Fd()), &cfg)
		if err == nil {
			break
		}
		l.dev.Close()
		if !errors.Is(err, unix.EBUSY) || try == 10 {
			t.Fatalf("LOOP_CONFIGURE %s: %v", l.path, err)
		}
	}
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
		for _, n := range loopPartitions(l.name) {
			if err := blkpg(l.path, unix.BLKPG_DEL_PARTITION, n, 0, 0); err != nil && !errors.Is(err, unix.ENXIO) {
				t.Errorf("cleanup: %v", err)
			}
		}
		if left := loopPartitions(l.name); len(left) > 0 {
			t.Errorf("cleanup: partitions %v of %s are still there", left, l.name)
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

// loopPartitions returns the partition numbers the kernel has for the
// disk name (loopN), from sysfs: /sys/block/loopN/loopNpM/partition.
func loopPartitions(name string) []int {
	paths, _ := filepath.Glob("/sys/block/" + name + "/" + name + "p*/partition")
	var out []int
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			out = append(out, n)
		}
	}
	return out
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
