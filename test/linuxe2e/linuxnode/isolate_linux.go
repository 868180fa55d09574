package linuxnode

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// isolateEnv, when set, makes a test binary importing this package start
// an OwnDisks daemon instead of running tests: its arguments are the
// daemon's command line.
const isolateEnv = "LINUXNODE_ISOLATED_DAEMON"

// keepBelowEnv names the daemon's scratch directory: the mounts below it
// are the daemon's own (volumes an earlier process of it mounted, before a
// Kill or Restart) and stay in its namespace.
const keepBelowEnv = "LINUXNODE_KEEP_MOUNTS_BELOW"

func init() {
	if os.Getenv(isolateEnv) == "" {
		return
	}
	err := isolate(os.Args[1:])
	fmt.Fprintf(os.Stderr, "linuxnode: cannot start the isolated daemon: %v\n", err)
	os.Exit(125)
}

// isolate gives this process a mount namespace of its own with a /sys/block
// showing no disk (the test then links in the disks the daemon may see)
// and execs the daemon, argv[0], in it.
//
// A new mount namespace starts as a copy of the machine's mounts. Copies of
// other tests' loop-disk mounts would pin those filesystems for as long as
// the daemon runs (after their unmount the device would stay busy: e2fsck,
// mkfs and loop detach fail), so they are detached at once, microseconds
// after the copy; not those below the daemon's own scratch directory
// (keepBelowEnv), which are its own volumes, mounted by an earlier process
// of it before Kill or Restart, and peers of the test's mounts (unmounting
// them would unmount the test's too). Copies of shared mounts are peers of
// the originals, and an unmount propagates to peers: so every mount outside
// the scratch directory is made private before anything is detached, or
// the detach would unmount other tests' volumes under them. Then /sys
// becomes private in the namespace, recursively, so the tmpfs over
// /sys/block can never propagate to the machine's. Everything runs on the
// main thread (package init is locked to it), which exec turns into the
// daemon with its namespace.
func isolate(argv []string) error {
	if len(argv) == 0 {
		return fmt.Errorf("no daemon to run")
	}
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare(CLONE_NEWNS): %w", err)
	}
	f, err := os.Open("/proc/thread-self/mountinfo")
	if err != nil {
		return err
	}
	mounts, err := mountinfo.Parse(f)
	_ = f.Close()
	if err != nil {
		return err
	}
	// The scratch directory is a shared mount: a copy below it is a peer
	// of the test's mount, and unmounting it here would unmount the
	// test's too. Those are the daemon's own volumes anyway.
	keep := os.Getenv(keepBelowEnv)
	below := func(mp string) bool { return keep != "" && (mp == keep || strings.HasPrefix(mp, keep+"/")) }
	// The copies of shared mounts are peers of the originals too: of other
	// tests' scratch areas (shared bind mounts, in any test process) and,
	// on a host whose / is shared (systemd), of / itself. An unmount here
	// propagates to every peer of the unmounted mount's parent, so
	// detaching the copy of another test's volume would unmount the
	// volume itself, in that test's namespace and its daemon's, under a
	// running flow. Every mount outside the daemon's own area becomes
	// private first, before anything is unmounted: nothing done in this
	// namespace leaves it, and nothing mounted elsewhere later arrives.
	// A loop mount below is unmounted through its path, so its parent is
	// the topmost mount at the parent's mount point: one of those made
	// private here.
	for _, m := range mounts {
		if below(m.MountPoint) {
			continue
		}
		// ENOENT, EINVAL: the path no longer leads to a mount (hidden by
		// another, or gone); nothing below it can be unmounted through it.
		if err := unix.Mount("", m.MountPoint, "", unix.MS_PRIVATE, ""); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("make %s private: %w", m.MountPoint, err)
		}
	}
	var loops []string
	for _, m := range mounts {
		if below(m.MountPoint) {
			continue
		}
		if strings.HasPrefix(m.Source, "/dev/loop") {
			loops = append(loops, m.MountPoint)
		}
	}
	sort.Slice(loops, func(i, j int) bool { return len(loops[i]) > len(loops[j]) })
	for _, mp := range loops {
		_ = unix.Unmount(mp, unix.MNT_DETACH) // gone already (a parent went first) is fine
	}
	if err := unix.Mount("", "/sys", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make /sys private: %w", err)
	}
	if err := unix.Mount("csi-node-proxy-test-sysblock", "/sys/block", "tmpfs", 0, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("mount a tmpfs on /sys/block: %w", err)
	}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, isolateEnv+"=") && !strings.HasPrefix(e, keepBelowEnv+"=") {
			env = append(env, e)
		}
	}
	return syscall.Exec(argv[0], argv, env)
}
