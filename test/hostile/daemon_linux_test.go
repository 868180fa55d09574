package hostile

import (
	"context"
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
	"google.golang.org/grpc"

	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/loopdisk"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// buildDaemon returns cmd/csi-node-proxy built once per test binary
// (daemonbin), with the race detector when the test itself runs with it.
func buildDaemon(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go command to build the daemon: %v", err)
	}
	return daemonbin.BinaryRace(t)
}

// toolsDir makes a directory with links to the tools the suite's own setup
// needs from the daemon (mkfs for FormatVolume) and nothing else: the
// daemon runs with it as its PATH, so an iSCSI request a validator wrongly
// accepts ends at "iscsiadm is not installed" instead of writing node
// records into /etc/iscsi. The snapshot covers /etc/iscsi anyway.
func toolsDir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"mkfs.ext4", "mke2fs", "e2fsck", "resize2fs", "mkfs.xfs", "xfs_growfs"} {
		if p, err := exec.LookPath(tool); err == nil {
			if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// daemon is the csi-node-proxy process under test and a client connection
// to each of its endpoints.
type daemon struct {
	p     *daemonbin.Process
	conns map[string]*grpc.ClientConn
	once  sync.Once
}

// startDaemon runs bin with --host=linux on the sandbox and dials every
// endpoint. The daemon is stopped (SIGTERM, then SIGKILL) in t.Cleanup.
func startDaemon(t *testing.T, bin string, s sandbox, workingDirs []string, sockDir, path string) *daemon {
	t.Helper()
	args := []string{"--host=linux", "--socket-dir=" + sockDir, "-kubelet-path=" + s.Kubelet}
	for _, wd := range workingDirs {
		args = append(args, "-working-dir="+wd)
	}
	args = append(args, "--allowed-service="+allowedService, "-v=2")
	// The daemon sees only the PATH of the sandbox's tools (see toolsDir).
	env := []string{"PATH=" + path, "LC_ALL=C"}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}
	apis := adapter.All()
	socks := make([]string, len(apis))
	for i, api := range apis {
		socks[i] = transport.SocketPath(sockDir, api.Name())
	}
	d := &daemon{conns: map[string]*grpc.ClientConn{}}
	d.p = daemonbin.Start(t, bin, daemonbin.Options{
		Args: args, Env: env, CleanEnv: true,
		Ready: func() error {
			for _, sock := range socks {
				fi, err := os.Lstat(sock)
				if err != nil {
					return err
				}
				if fi.Mode().Type() != os.ModeSocket {
					return fmt.Errorf("%s is not a socket", sock)
				}
			}
			return nil
		},
		ReadyTimeout: 30 * time.Second,
	})
	// Registered after Start's cleanup, so it runs first: the
	// connections close before the daemon gets SIGTERM.
	t.Cleanup(func() { d.stop(t) })
	for i, api := range apis {
		cc, err := grpc.NewClient(transport.Target(socks[i]), transport.DialOptions()...)
		if err != nil {
			t.Fatal(err)
		}
		d.conns[api.Name()] = cc
	}
	return d
}

// conn returns the connection to an endpoint (csi-proxy-<group>-<version>).
func (d *daemon) conn(t *testing.T, name string) *grpc.ClientConn {
	t.Helper()
	cc, ok := d.conns[name]
	if !ok {
		t.Fatalf("the daemon serves no endpoint %s", name)
	}
	return cc
}

// stop closes the connections and stops the daemon as systemd would:
// SIGTERM, then SIGKILL after 15 s. Only the first call does anything.
func (d *daemon) stop(t *testing.T) {
	d.once.Do(func() {
		for _, cc := range d.conns {
			_ = cc.Close()
		}
		d.p.Stop(t, 15*time.Second)
	})
}

// loopDisk is a loop device attached to a sparse file of the sandbox.
type loopDisk struct {
	name, dev, file string
	backing, fd     *os.File
	detached        bool
}

// attachLoop creates a sparse file and attaches it to a free loop device
// with loopdisk.Attach (LOOP_CTL_GET_FREE + LOOP_CONFIGURE with PARTSCAN, so BLKPG
// partitions work, and AUTOCLEAR, so the device goes with its last
// opener). The test holds the device open until detachLoop.
func attachLoop(file string, size int64) (*loopDisk, error) {
	l := &loopDisk{file: file}
	var err error
	if l.name, l.backing, l.fd, err = loopdisk.Attach(file, size); err != nil {
		return nil, err
	}
	l.dev = "/dev/" + l.name
	return l, nil
}

// source tells whether a mount source is the device or one of its
// partitions.
func (l *loopDisk) source(src string) bool {
	return src == l.dev || strings.HasPrefix(src, l.dev+"p")
}

// detach removes the device's partitions (loopdisk.DeletePartitions), clears the
// device and closes the test's descriptors.
func (l *loopDisk) detach() error {
	if l.detached {
		return nil
	}
	l.detached = true
	var errs []error
	if err := loopdisk.DeletePartitions(l.fd, l.name); err != nil {
		errs = append(errs, err)
	}
	if err := unix.IoctlSetInt(int(l.fd.Fd()), unix.LOOP_CLR_FD, 0); err != nil && !errors.Is(err, unix.ENXIO) {
		errs = append(errs, fmt.Errorf("LOOP_CLR_FD %s: %w", l.dev, err))
	}
	return errors.Join(append(errs, l.fd.Close(), l.backing.Close())...)
}

// attachedTo tells whether the loop device is still attached to its file.
func (l *loopDisk) attachedTo() bool {
	b, err := os.ReadFile("/sys/block/" + l.name + "/loop/backing_file")
	return err == nil && strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)") == l.file
}

// diskseq reads a block device's diskseq: the Linux backend's disk number.
func diskseq(name string) (uint32, error) {
	b, err := os.ReadFile("/sys/block/" + name + "/diskseq")
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	return uint32(n), err
}

// rootDisk returns the kernel name of the disk holding "/" (the disk of
// the partition, for a partitioned disk) and its device path.
func rootDisk() (name, dev string, err error) {
	mounts, err := mountinfo.Read()
	if err != nil {
		return "", "", err
	}
	for _, m := range mounts {
		if m.MountPoint != "/" {
			continue
		}
		p, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/dev/block/%d:%d", m.Major, m.Minor))
		if err != nil {
			return "", "", fmt.Errorf("the root filesystem (%s) is not on a block device: %w", m.Source, err)
		}
		if _, err := os.Stat(filepath.Join(p, "partition")); err == nil {
			p = filepath.Dir(p)
		}
		return filepath.Base(p), "/dev/" + filepath.Base(p), nil
	}
	return "", "", errors.New("no mount at / in /proc/self/mountinfo")
}

// unmountBelow unmounts every mount whose mount point lies in dir or whose
// source is one of the loop disks, deepest first; a busy one is detached
// lazily rather than left on the machine. It returns what it unmounted.
func unmountBelow(dir string, loops []*loopDisk) ([]string, error) {
	mounts, err := mountinfo.Read()
	if err != nil {
		return nil, err
	}
	var mps []string
	for _, m := range mounts {
		mine := m.MountPoint == dir || strings.HasPrefix(m.MountPoint, dir+"/")
		for _, l := range loops {
			mine = mine || l.source(m.Source)
		}
		if mine {
			mps = append(mps, m.MountPoint)
		}
	}
	sort.SliceStable(mps, func(i, j int) bool { return len(mps[i]) > len(mps[j]) })
	var errs []error
	for _, mp := range mps {
		err := unix.Unmount(mp, unix.UMOUNT_NOFOLLOW)
		if err == nil || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
			continue
		}
		if err := unix.Unmount(mp, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil && !errors.Is(err, unix.EINVAL) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", mp, err))
		}
	}
	return mps, errors.Join(errs...)
}

// mountedBelow lists the mount points in dir.
func mountedBelow(dir string) []string {
	mounts, err := mountinfo.Read()
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, m := range mounts {
		if m.MountPoint == dir || strings.HasPrefix(m.MountPoint, dir+"/") {
			out = append(out, m.MountPoint)
		}
	}
	return out
}

// callTimeout bounds one call: a validator that lets an input through
// may send the backend to the network.
const callTimeout = 10 * time.Second

func callCtx(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), callTimeout)
}
