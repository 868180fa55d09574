package blockdev

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/blockfixture"
)

// fixture is a private copy of blocktopo's sysfs fixture tree
// (fixtureSysfs) plus a /dev of sparse files, with a fake kernel that keeps
// both consistent the way Linux would.
type fixture struct {
	sysfs, dev string
	k          *fakeKernel
	exec       *FakeExec
}

// fixtureSysfs is the sysfs tree of six kinds of disk that blocktopo's
// reader is tested against (its testdata/README.md describes it); the
// backend's tests run on the same disks.
var fixtureSysfs = filepath.Join("..", "blocktopo", "testdata", "sysfs")

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	fx := &fixture{sysfs: filepath.Join(root, "sys"), dev: filepath.Join(root, "dev"), exec: &FakeExec{}}
	if err := blockfixture.CopyTree(fixtureSysfs, fx.sysfs); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(fx.dev, 0o755); err != nil {
		t.Fatal(err)
	}
	// A device file per disk and partition, as large as sysfs says.
	for _, name := range []string{"sda", "sdb", "vdb", "nvme0n1", "loop3", "sda/sda1"} {
		size, err := blocktopo.ReadSectors(filepath.Join(fx.sysfs, "block", filepath.FromSlash(name)), "size")
		if err != nil {
			t.Fatal(err)
		}
		makeSparse(t, filepath.Join(fx.dev, filepath.Base(name)), size)
	}
	fx.k = &fakeKernel{sysfs: fx.sysfs, dev: fx.dev, caps: ^uint64(0), nextMinor: 100}
	return fx
}

func (fx *fixture) backend(t *testing.T, cfg Config) *Backend {
	t.Helper()
	cfg.SysfsRoot, cfg.DevRoot = fx.sysfs, fx.dev
	if cfg.Exec == nil {
		cfg.Exec = fx.exec
	}
	if cfg.MountRoots == nil {
		cfg.MountRoots = []string{"/var/lib/kubelet"}
	}
	if cfg.HostMountTable == "" {
		// Not the machine's /proc/1/mountinfo: its devices are not the
		// fixture's.
		cfg.HostMountTable = "none"
	}
	b, err := newBackend(cfg, fx.k)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func makeSparse(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

// fakeKernel acts on the fixture the way Linux acts on sysfs and /dev.
type fakeKernel struct {
	sysfs, dev string

	mu         sync.Mutex
	mountTable []mountinfo.Mount
	swaps      []blocktopo.DevNum
	caps       uint64
	calls      []string
	nextMinor  uint32
	failAdd    error
	// busy holds device names an O_EXCL open finds in use (EBUSY).
	busy map[string]bool
	// hang holds device names whose reads block until the channel is
	// closed (then fail with EIO), as reads of a passive ALUA path do.
	hang map[string]chan struct{}
	// unmountBusy is how many unmounts answer EBUSY before they work.
	unmountBusy int
	// setReadOnlyHook runs after BLKROSET, to model a device whose own
	// read-only state keeps the flag set.
	setReadOnlyHook func(name string)
}

func (k *fakeKernel) record(format string, args ...any) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls = append(k.calls, fmt.Sprintf(format, args...))
}

// Calls returns the recorded calls and forgets them.
func (k *fakeKernel) takeCalls() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	c := k.calls
	k.calls = nil
	return c
}

func partName(disk string, n int) string {
	if c := disk[len(disk)-1]; c >= '0' && c <= '9' {
		return fmt.Sprintf("%sp%d", disk, n)
	}
	return fmt.Sprintf("%s%d", disk, n)
}

func (k *fakeKernel) addPartition(diskPath string, n int, start, length int64) error {
	k.record("add %s %d %d %d", filepath.Base(diskPath), n, start, length)
	if k.failAdd != nil {
		return k.failAdd
	}
	disk := filepath.Base(diskPath)
	name := partName(disk, n)
	dir := filepath.Join(k.sysfs, "block", disk, name)
	if _, err := os.Stat(dir); err == nil {
		return syscall.EBUSY
	}
	k.mu.Lock()
	minor := k.nextMinor
	k.nextMinor++
	k.mu.Unlock()
	for attr, v := range map[string]string{
		"partition": strconv.Itoa(n), "start": strconv.FormatInt(start/512, 10),
		"size": strconv.FormatInt(length/512, 10), "dev": fmt.Sprintf("259:%d", minor), "ro": "0",
	} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, attr), []byte(v+"\n"), 0o644); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(k.dev, name))
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Truncate(length)
}

func (k *fakeKernel) resizePartition(diskPath string, n int, start, length int64) error {
	k.record("resize %s %d %d %d", filepath.Base(diskPath), n, start, length)
	disk := filepath.Base(diskPath)
	name := partName(disk, n)
	if err := os.WriteFile(filepath.Join(k.sysfs, "block", disk, name, "size"), []byte(strconv.FormatInt(length/512, 10)), 0o644); err != nil {
		return err
	}
	return os.Truncate(filepath.Join(k.dev, name), length)
}

func (k *fakeKernel) deletePartition(diskPath string, n int) error {
	k.record("delete %s %d", filepath.Base(diskPath), n)
	disk := filepath.Base(diskPath)
	name := partName(disk, n)
	if err := os.RemoveAll(filepath.Join(k.sysfs, "block", disk, name)); err != nil {
		return err
	}
	return os.Remove(filepath.Join(k.dev, name))
}

func (k *fakeKernel) claimable(devPath string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.busy[filepath.Base(devPath)] {
		return syscall.EBUSY
	}
	return nil
}

func (k *fakeKernel) openDevice(devPath string) (deviceReader, error) {
	f, err := os.Open(devPath)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	release := k.hang[filepath.Base(devPath)]
	k.mu.Unlock()
	if release != nil {
		return &hungReader{f: f, release: release}, nil
	}
	return f, nil
}

// hungReader is a device whose reads do not return until released.
type hungReader struct {
	f       *os.File
	release chan struct{}
}

func (r *hungReader) ReadAt(p []byte, off int64) (int, error) {
	<-r.release
	return 0, syscall.EIO
}

func (r *hungReader) Close() error { return r.f.Close() }

func (k *fakeKernel) setReadOnly(devPath string, ro bool) error {
	k.record("ro %s %v", filepath.Base(devPath), ro)
	v := "0"
	if ro {
		v = "1"
	}
	if err := os.WriteFile(filepath.Join(k.sysfs, "block", filepath.Base(devPath), "ro"), []byte(v), 0o644); err != nil {
		return err
	}
	if k.setReadOnlyHook != nil {
		k.setReadOnlyHook(filepath.Base(devPath))
	}
	return nil
}

func (k *fakeKernel) flushDevice(devPath string, drop bool) error {
	k.record("flush %s %v", filepath.Base(devPath), drop)
	return nil
}

// devOf finds a device's number in the fixture sysfs.
func (k *fakeKernel) devOf(name string) blocktopo.DevNum {
	ms, _ := filepath.Glob(filepath.Join(k.sysfs, "block", "*", name, "dev"))
	ms2, _ := filepath.Glob(filepath.Join(k.sysfs, "block", name, "dev"))
	for _, m := range append(ms, ms2...) {
		b, _ := os.ReadFile(m)
		if d, err := blocktopo.ParseDevNum(string(b)); err == nil {
			return d
		}
	}
	return blocktopo.DevNum{}
}

// fdTarget turns a /proc/self/fd/N[/name] path, as the backend hands the
// kernel a target it resolved beneath its working directory, into the path
// it names, so recorded calls and the fake mount table read like paths.
// Other paths come back unchanged.
func fdTarget(p string) string {
	const prefix = "/proc/self/fd/"
	if !strings.HasPrefix(p, prefix) {
		return p
	}
	n, rest, _ := strings.Cut(strings.TrimPrefix(p, prefix), "/")
	dir, err := os.Readlink(prefix + n)
	if err != nil {
		return p
	}
	if rest == "" {
		return dir
	}
	return dir + "/" + rest
}

func (k *fakeKernel) mount(source, target, fstype, data string) error {
	target = fdTarget(target)
	k.record("mount %s %s %s %s", filepath.Base(source), target, fstype, data)
	d := k.devOf(filepath.Base(source))
	// The kernel records resolved paths (macOS temp dirs are symlinked).
	if r, err := filepath.EvalSymlinks(target); err == nil {
		target = r
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.mountTable = append(k.mountTable, mountinfo.Mount{
		ID: 100 + len(k.mountTable), Major: d.Major, Minor: d.Minor, Root: "/",
		MountPoint: filepath.ToSlash(target), FSType: fstype, Source: source,
	})
	return nil
}

func (k *fakeKernel) unmount(target string) error {
	target = fdTarget(target)
	k.record("unmount %s", target)
	if r, err := filepath.EvalSymlinks(target); err == nil {
		target = r
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.unmountBusy > 0 {
		k.unmountBusy--
		return syscall.EBUSY
	}
	for i := len(k.mountTable) - 1; i >= 0; i-- {
		if k.mountTable[i].MountPoint == filepath.ToSlash(target) {
			k.mountTable = append(k.mountTable[:i], k.mountTable[i+1:]...)
			return nil
		}
	}
	return syscall.EINVAL
}

func (k *fakeKernel) syncFS(dir string) error {
	dir = fdTarget(dir)
	k.record("syncfs %s", dir)
	return nil
}

func (k *fakeKernel) statFS(dir string) (int64, int64, error) {
	k.record("statfs %s", dir)
	return 1 << 30, 1 << 20, nil
}

func (k *fakeKernel) mounts() ([]mountinfo.Mount, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]mountinfo.Mount(nil), k.mountTable...), nil
}

func (k *fakeKernel) swapDevices() ([]blocktopo.DevNum, error) { return k.swaps, nil }

func (k *fakeKernel) deviceOf(path string) (blocktopo.DevNum, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	ms := append([]mountinfo.Mount(nil), k.mountTable...)
	sort.SliceStable(ms, func(i, j int) bool { return len(ms[i].MountPoint) > len(ms[j].MountPoint) })
	p := filepath.ToSlash(fdTarget(path))
	for _, m := range ms {
		if blocktopo.IsWithin(p, m.MountPoint) {
			return blocktopo.DevNum{Major: m.Major, Minor: m.Minor}, nil
		}
	}
	return blocktopo.DevNum{}, errors.New("fake: no mount holds " + path)
}

// blockDevice answers for the fixture's /dev: a node (or a link to one)
// there is the device sysfs numbers under its name.
func (k *fakeKernel) blockDevice(path string) (blocktopo.DevNum, error) {
	k.record("stat %s", path)
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		return blocktopo.DevNum{}, err
	}
	dev, err := filepath.EvalSymlinks(k.dev)
	if err != nil {
		return blocktopo.DevNum{}, err
	}
	if filepath.Dir(p) != dev {
		return blocktopo.DevNum{}, errors.New("fake: not a block device: " + path)
	}
	d := k.devOf(filepath.Base(p))
	if d == (blocktopo.DevNum{}) {
		return blocktopo.DevNum{}, errors.New("fake: no such device: " + path)
	}
	return d, nil
}

func (k *fakeKernel) capabilities() (uint64, error) { return k.caps, nil }
