package linuxnode

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/loopdisk"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/poll"
)

// Scratch is one test's area on the node: a short root directory with the
// daemon's working directory and socket directories in it, the backing
// files of its loop disks, and the loop disks themselves. New registers the
// cleanup; everything a test attaches or mounts below Dir is undone by it.
type Scratch struct {
	tb testing.TB
	// Dir is the test's root directory, in os.TempDir and short, because
	// the daemon's socket paths must fit in 108 bytes.
	Dir string
	// Kubelet is the daemon's -kubelet-path (its working directory),
	// Dir/kubelet. Volumes are mounted below it.
	Kubelet string
	// files holds the loop disks' backing files.
	files string

	mu      sync.Mutex
	loops   []*Loop
	daemons int
	// isolated are the daemons that see only the area's disks
	// (OwnDisks); shared tells whether Dir is a shared bind mount.
	isolated []*Daemon
	shared   bool
}

// Loop is a loop device attached to a sparse file of the scratch area.
type Loop struct {
	// Name is the kernel name (loop3), Path the device node (/dev/loop3).
	Name, Path string
	// File is the backing file: the loop device's SerialNumber in
	// ListDiskIDs.
	File string

	backing *os.File
	// dev is held open: with AUTOCLEAR the device detaches as soon as
	// its last opener goes, so this fd keeps it attached until the test
	// (or Detach) closes it.
	dev      *os.File
	detached bool
}

// New creates a scratch area and registers its cleanup on tb: unmount
// everything of the test (deepest first), detach its loop devices, check
// that /proc/self/mountinfo and the attached loop devices hold nothing of
// it, then remove the directory. Daemons started on the area later stop
// before that (cleanups run last-in first-out).
func New(tb testing.TB) *Scratch {
	tb.Helper()
	dir, err := os.MkdirTemp("", "lnx")
	if err != nil {
		tb.Fatal(err)
	}
	s := &Scratch{tb: tb, Dir: dir, Kubelet: filepath.Join(dir, "kubelet"), files: filepath.Join(dir, "files")}
	tb.Cleanup(s.cleanup)
	for _, d := range []string{s.Kubelet, s.files} {
		if err := os.Mkdir(d, 0o750); err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

// Attach creates a sparse file of size bytes named name and attaches it to
// a free loop device with LOOP_CONFIGURE, in pure Go: LO_FLAGS_PARTSCAN
// (without it a loop device takes no partitions, not even through BLKPG),
// LO_FLAGS_AUTOCLEAR, and the file name as lo_file_name.
func (s *Scratch) Attach(name string, size int64) *Loop {
	s.tb.Helper()
	l, err := s.attach(name, size)
	if err != nil {
		s.tb.Fatal(err)
	}
	return l
}

func (s *Scratch) attach(name string, size int64) (*Loop, error) {
	l := &Loop{File: filepath.Join(s.files, name)}
	var err error
	if l.Name, l.backing, l.dev, err = loopdisk.Attach(l.File, size); err != nil {
		return nil, err
	}
	l.Path = "/dev/" + l.Name
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loops = append(s.loops, l)
	for _, d := range s.isolated {
		if err := d.expose(l.Name); err != nil {
			return nil, fmt.Errorf("show %s to the daemon: %w", l.Name, err)
		}
	}
	return l, nil
}

// loopNames returns the kernel names of the attached loop disks.
func (s *Scratch) loopNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.loops {
		if !l.detached {
			out = append(out, l.Name)
		}
	}
	return out
}

// share makes Dir a shared bind mount of itself (once), so mounts made
// below it in a daemon's own mount namespace appear in the test's too.
func (s *Scratch) share() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shared {
		return nil
	}
	if err := unix.Mount(s.Dir, s.Dir, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind-mount %s: %w", s.Dir, err)
	}
	s.shared = true // the cleanup unmounts it with the rest
	// A bind mount of a directory on a shared mount joins that mount's
	// peer group: where / is shared (systemd), Dir would be a peer of /,
	// and every volume mounted below Dir would be mounted a second time
	// on / under the bind mount (a hidden duplicate in the mount table,
	// which no path reaches: "unmount ...: invalid argument" for the
	// second of the two, and propagation of the area's mounts to every
	// namespace holding a peer of /). Leaving the group first (private)
	// gives Dir a peer group of its own: the test's and its daemons'.
	if err := unix.Mount("", s.Dir, "", unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make %s a private mount: %w", s.Dir, err)
	}
	if err := unix.Mount("", s.Dir, "", unix.MS_SHARED, ""); err != nil {
		return fmt.Errorf("make %s a shared mount: %w", s.Dir, err)
	}
	return nil
}

// RootDisk returns the kernel name of the whole disk holding "/".
func RootDisk() (string, error) {
	var st unix.Stat_t
	if err := unix.Stat("/", &st); err != nil {
		return "", err
	}
	dir, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev)))
	if err != nil {
		return "", fmt.Errorf("the root filesystem is not on a block device: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		dir = filepath.Dir(dir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	return filepath.Base(dir), nil
}

// Grow enlarges the backing file to size bytes and tells the loop driver
// (LOOP_SET_CAPACITY), as a cloud provider grows a disk.
func (l *Loop) Grow(tb testing.TB, size int64) {
	tb.Helper()
	if err := l.backing.Truncate(size); err != nil {
		tb.Fatal(err)
	}
	if err := unix.IoctlSetInt(int(l.dev.Fd()), unix.LOOP_SET_CAPACITY, 0); err != nil {
		tb.Fatalf("LOOP_SET_CAPACITY %s: %v", l.Path, err)
	}
}

// Diskseq is the kernel's sequence number of the disk: the proxy's disk
// number on Linux.
func (l *Loop) Diskseq() (uint32, error) {
	b, err := os.ReadFile("/sys/block/" + l.Name + "/diskseq")
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	return uint32(n), err
}

// Attr reads a sysfs attribute of the disk, such as "ro", "size" or
// "loop3p1/size".
func (l *Loop) Attr(name string) string {
	b, err := os.ReadFile("/sys/block/" + l.Name + "/" + name)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return strings.TrimSpace(string(b))
}

// Detach unmounts whatever of the loop device is mounted, detaches it and
// removes its backing file, waiting until the kernel has let go of it.
// Benchmarks use it between iterations; tests leave it to the cleanup.
func (s *Scratch) Detach(l *Loop) error {
	mounts, err := mountinfo.Read()
	if err != nil {
		return err
	}
	var mine []string
	for _, m := range mounts {
		if l.source(m.Source) {
			mine = append(mine, m.MountPoint)
		}
	}
	unmountDeepestFirst(s.tb, mine)
	s.mu.Lock()
	for _, d := range s.isolated {
		if err := d.hide(l.Name); err != nil {
			s.mu.Unlock()
			return fmt.Errorf("hide %s from the daemon: %w", l.Name, err)
		}
	}
	s.mu.Unlock()
	if err := l.clear(); err != nil {
		return err
	}
	if !poll.Until(5*time.Second, 10*time.Millisecond, func() bool { return !attached(l.Name, l.File) }) {
		return fmt.Errorf("%s still attached to %s: gave up after 5s", l.Name, l.File)
	}
	return os.Remove(l.File)
}

// source tells whether a mount source is the loop device or one of its
// partitions.
func (l *Loop) source(src string) bool {
	return src == l.Path || (strings.HasPrefix(src, l.Path+"p") && l.Path != "")
}

// clear makes the device writable again, removes its partitions, detaches
// it (LOOP_CLR_FD; with
// AUTOCLEAR the kernel does it once the last opener closes) and closes the
// test's descriptors.
func (l *Loop) clear() error {
	if l.detached {
		return nil
	}
	l.detached = true
	var errs []error
	// SetDiskState(offline) sets the kernel's read-only flag (BLKROSET),
	// which belongs to the device node and outlives the attachment: the
	// next user of /dev/loopN would get a read-only disk. Clear it.
	if err := unix.IoctlSetPointerInt(int(l.dev.Fd()), unix.BLKROSET, 0); err != nil {
		errs = append(errs, fmt.Errorf("BLKROSET 0 %s: %w", l.Path, err))
	}
	// Its partitions next: they may outlive the detach
	// (loopdisk.DeletePartitions).
	if err := loopdisk.DeletePartitions(l.dev, l.Name); err != nil {
		errs = append(errs, err)
	}
	if err := unix.IoctlSetInt(int(l.dev.Fd()), unix.LOOP_CLR_FD, 0); err != nil && !errors.Is(err, unix.ENXIO) {
		errs = append(errs, fmt.Errorf("LOOP_CLR_FD %s: %w", l.Path, err))
	}
	errs = append(errs, l.dev.Close(), l.backing.Close())
	return errors.Join(errs...)
}

// attached tells whether loop device name is attached to file.
func attached(name, file string) bool {
	b, err := os.ReadFile("/sys/block/" + name + "/loop/backing_file")
	if err != nil {
		return false
	}
	return strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)") == file
}

// unmountDeepestFirst unmounts each mount point, longest path first so a
// mount below another goes first; a busy one is detached lazily rather than
// left on the machine (the leftover check then still sees its loop device).
func unmountDeepestFirst(tb testing.TB, mps []string) {
	sort.SliceStable(mps, func(i, j int) bool { return len(mps[i]) > len(mps[j]) })
	for _, mp := range mps {
		err := unix.Unmount(mp, 0)
		if err == nil || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
			continue
		}
		tb.Logf("cleanup: unmount %s: %v; detaching it lazily", mp, err)
		if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			tb.Errorf("cleanup: lazy unmount %s: %v", mp, err)
		}
	}
}

// ours tells whether a mount belongs to the test: below its directory, or
// of one of its loop devices wherever it is (the daemon mounts an
// unmounted XFS on a private temporary directory to grow it).
func (s *Scratch) ours(m mountinfo.Mount) bool {
	if m.MountPoint == s.Dir || strings.HasPrefix(m.MountPoint, s.Dir+"/") {
		return true
	}
	for _, l := range s.loops {
		// A detached device's name may already be another test's.
		if !l.detached && l.source(m.Source) {
			return true
		}
	}
	return false
}

// Mounts returns the test's mounts, in mount table order.
func (s *Scratch) Mounts() []mountinfo.Mount {
	s.tb.Helper()
	mounts, err := mountinfo.Read()
	if err != nil {
		s.tb.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []mountinfo.Mount
	for _, m := range mounts {
		if s.ours(m) {
			out = append(out, m)
		}
	}
	return out
}

// Leftovers lists the test's mounts (from /proc/self/mountinfo), the
// loop devices still attached to its backing files (from sysfs, what
// `losetup -a` reads, and from `losetup -a` itself when it is installed)
// and partitions left on its loop devices once detached.
func (s *Scratch) Leftovers() []string {
	var out []string
	mounts, err := mountinfo.Read()
	if err != nil {
		out = append(out, "cannot read the mount table: "+err.Error())
	}
	s.mu.Lock()
	for _, m := range mounts {
		if s.ours(m) {
			out = append(out, fmt.Sprintf("mount %s (%s %s)", m.MountPoint, m.FSType, m.Source))
		}
	}
	s.mu.Unlock()
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if strings.HasPrefix(strings.TrimSpace(string(b)), s.files+"/") {
			out = append(out, fmt.Sprintf("loop %s -> %s", filepath.Base(filepath.Dir(filepath.Dir(f))), strings.TrimSpace(string(b))))
		}
	}
	s.mu.Lock()
	for _, l := range s.loops {
		// Once detached the device may be another test's, with its own
		// partitions; partitions of a device nobody has attached are
		// left over.
		if _, err := os.Stat("/sys/block/" + l.Name + "/loop/backing_file"); err == nil {
			continue
		}
		if parts := loopdisk.Partitions(l.Name); len(parts) > 0 {
			out = append(out, fmt.Sprintf("partitions %v of %s (was %s)", parts, l.Name, l.File))
		}
	}
	s.mu.Unlock()
	if _, err := exec.LookPath("losetup"); err == nil {
		list, err := exec.Command("losetup", "-a").Output()
		if err != nil {
			out = append(out, "losetup -a: "+err.Error())
		}
		for _, line := range bytes.Split(list, []byte("\n")) {
			if bytes.Contains(line, []byte(s.files+"/")) {
				out = append(out, "losetup -a: "+string(line))
			}
		}
	}
	return out
}

func (s *Scratch) cleanup() {
	tb := s.tb
	// The volumes first, deepest first; the shared bind mount of Dir
	// itself last, once the loop devices have let go of their backing
	// files below it.
	var mine []string
	for _, m := range s.Mounts() {
		if m.MountPoint != s.Dir {
			mine = append(mine, m.MountPoint)
		}
	}
	unmountDeepestFirst(tb, mine)
	s.mu.Lock()
	for _, l := range s.loops {
		if err := l.clear(); err != nil {
			tb.Errorf("cleanup: %v", err)
		}
	}
	s.mu.Unlock()
	if s.shared {
		// The kernel detaches loop devices asynchronously once the last
		// opener is gone; until then their backing files keep Dir busy.
		_ = poll.Until(5*time.Second, 10*time.Millisecond, func() bool { return unix.Unmount(s.Dir, 0) == nil })
	}
	var left []string
	_ = poll.Until(5*time.Second, 10*time.Millisecond, func() bool {
		left = s.Leftovers()
		return len(left) == 0
	})
	if len(left) > 0 {
		// Never RemoveAll across a mount: keep the directory and say so.
		tb.Errorf("cleanup: left behind (kept %s):\n  %s", s.Dir, strings.Join(left, "\n  "))
		if s.shared {
			// The bind mount of Dir onto itself holds nothing of its
			// own: detach it rather than leave it in the mount table.
			_ = unix.Unmount(s.Dir, unix.MNT_DETACH)
		}
		return
	}
	if err := os.RemoveAll(s.Dir); err != nil {
		tb.Errorf("cleanup: %v", err)
	}
}
