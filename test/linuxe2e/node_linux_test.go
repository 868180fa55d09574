//go:build linux

package linuxe2e

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

// callTimeout bounds every RPC.
const callTimeout = 30 * time.Second

// node is one daemon on the test's scratch area, with clients of the three
// endpoints a block-storage CSI node plugin uses.
type node struct {
	t      *testing.T
	s      *linuxnode.Scratch
	d      *linuxnode.Daemon
	fsType string
	disk   diskv1.DiskClient
	vol    volumev1.VolumeClient
	fs     filesystemv1.FilesystemClient
	// loops are the test's disks, whose state the idempotency check
	// compares.
	loops []*linuxnode.Loop
	// twiceCalls counts the mutating calls made twice.
	twiceCalls int
}

// newNode starts the daemon with --linux-filesystem=fsType (and extra
// flags) on a fresh scratch area and dials it.
func newNode(t *testing.T, fsType string, extra ...string) *node {
	t.Helper()
	s := linuxnode.New(t)
	// The daemon sees only the root disk and the test's loop disks: see
	// linuxnode.OwnDisks.
	return nodeOn(t, s, fsType, extra...)
}

// newExt4Node is newNode for the tests that are about something other
// than the filesystem: it skips the test unless it runs as root with
// mkfs.ext4 installed, and starts the daemon with
// --linux-filesystem=ext4.
func newExt4Node(t *testing.T) *node {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "e2fsprogs", "mkfs.ext4")
	return newNode(t, "ext4")
}

// nodeOn starts a daemon on the scratch area s, as newNode does.
func nodeOn(t *testing.T, s *linuxnode.Scratch, fsType string, extra ...string) *node {
	t.Helper()
	d := linuxnode.StartDaemon(t, s, linuxnode.OwnDisks, append([]string{"--linux-filesystem=" + fsType, "-v=2"}, extra...)...)
	icpt := grpc.WithUnaryInterceptor(calls.intercept)
	return &node{
		t: t, s: s, d: d, fsType: fsType,
		disk: diskv1.NewDiskClient(d.Dial(t, "disk-v1", icpt)),
		vol:  volumev1.NewVolumeClient(d.Dial(t, "volume-v1", icpt)),
		fs:   filesystemv1.NewFilesystemClient(d.Dial(t, "filesystem-v1", icpt)),
	}
}

// attach attaches a loop disk whose state the idempotency check watches.
func (n *node) attach(name string, size int64) *linuxnode.Loop {
	n.t.Helper()
	l := n.s.Attach(name, size)
	n.loops = append(n.loops, l)
	return l
}

// ctx is a context for one call.
func (n *node) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	n.t.Cleanup(cancel)
	return ctx
}

// path is a path below the daemon's working directory.
func (n *node) path(elems ...string) string {
	return filepath.Join(append([]string{n.s.Kubelet}, elems...)...)
}

// ok fails the test now if err is not nil.
func (n *node) ok(what string, err error) {
	n.t.Helper()
	if err != nil {
		n.t.Fatalf("%s: %v", what, err)
	}
}

// twice makes a mutating call twice, as kubelet's retries do: both calls
// must succeed, and the second must change nothing on the node (see
// state).
func (n *node) twice(what string, call func() error) {
	n.t.Helper()
	if err := call(); err != nil {
		n.t.Fatalf("%s: %v", what, err)
	}
	before := n.state()
	if err := call(); err != nil {
		n.t.Fatalf("%s, second call: %v", what, err)
	}
	if after := n.state(); after != before {
		n.t.Fatalf("%s: the second call changed the node:\n%s", what, diff(before, after))
	}
	n.twiceCalls++
}

// twiceRemove is twice for Rmdir without force, which answers NotFound once
// the path is gone, as upstream's os.Remove does (with force a missing path
// is success, as upstream's os.RemoveAll, and twice applies). The second
// call must either succeed or say NotFound, and change nothing.
func (n *node) twiceRemove(what string, call func() error) {
	n.t.Helper()
	if err := call(); err != nil {
		n.t.Fatalf("%s: %v", what, err)
	}
	before := n.state()
	err := call()
	if err != nil && status.Code(err) != codes.NotFound {
		n.t.Fatalf("%s, second call: %v; want success or NotFound", what, err)
	}
	if after := n.state(); after != before {
		n.t.Fatalf("%s: the second call changed the node:\n%s", what, diff(before, after))
	}
	n.twiceCalls++
}

// wantErr checks that err is a status with code whose message contains
// substr.
func (n *node) wantErr(what string, err error, code codes.Code, substr string) {
	n.t.Helper()
	if err == nil {
		n.t.Errorf("%s: succeeded, want %v (%q)", what, code, substr)
		return
	}
	st, _ := status.FromError(err)
	if st.Code() != code || !strings.Contains(st.Message(), substr) {
		n.t.Errorf("%s: got %v %q, want %v with a message containing %q", what, st.Code(), st.Message(), code, substr)
	}
}

// state describes everything of the test a call could change: its mounts
// (with their IDs, so a second mount shows) and filesystem sizes, the tree
// below the working directory (types and link targets), and for each loop
// disk its size, read-only flag, kernel partitions (with device numbers,
// so a re-added partition shows) and a digest of its GPT.
func (n *node) state() string {
	n.t.Helper()
	var lines []string
	for _, m := range n.s.Mounts() {
		line := fmt.Sprintf("mount %d %s %s %s %s", m.ID, m.MountPoint, m.FSType, m.Source, m.Options)
		var st unix.Statfs_t
		// Sizes of the test's volumes only (not of the root filesystem
		// the scratch directory lives on).
		if n.ownSource(m.Source) && unix.Statfs(m.MountPoint, &st) == nil {
			line += fmt.Sprintf(" blocks=%d bsize=%d bfree=%d files=%d", st.Blocks, st.Bsize, st.Bfree, st.Files)
		}
		lines = append(lines, line)
	}
	_ = filepath.WalkDir(n.s.Kubelet, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			lines = append(lines, "walk "+p+": "+err.Error())
			return nil
		}
		line := "path " + p + " " + e.Type().String()
		if e.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			line += " -> " + target
		}
		lines = append(lines, line)
		return nil
	})
	for _, l := range n.loops {
		line := fmt.Sprintf("disk %s size=%s ro=%s", l.Name, l.Attr("size"), l.Attr("ro"))
		parts, _ := filepath.Glob("/sys/block/" + l.Name + "/" + l.Name + "p*")
		for _, p := range parts {
			name := filepath.Base(p)
			line += fmt.Sprintf(" %s(dev=%s start=%s size=%s ro=%s)", name, l.Attr(name+"/dev"), l.Attr(name+"/start"), l.Attr(name+"/size"), l.Attr(name+"/ro"))
		}
		if g, err := linuxnode.ReadGPT(l.Path); err == nil {
			line += " gpt=" + g.Digest
		}
		lines = append(lines, line)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// ownSource tells whether a mount source is a partition of the test's
// loop disks.
func (n *node) ownSource(src string) bool {
	for _, l := range n.loops {
		if strings.HasPrefix(src, l.Path+"p") {
			return true
		}
	}
	return false
}

// diff lists the lines only in a and only in b.
func diff(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if !mb[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if !ma[l] {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// partition calls PartitionDisk, once more if the kernel refused the new
// partition as busy: another process that reconciles every disk's
// partitions (a daemon of another test package, which sees all disks) may
// have added it between the table write and the proxy's BLKPG. The
// backend documents that case as Unavailable, "PartitionDisk again
// retries", and kubelet retries NodeStage.
func (n *node) partition(num uint32) error {
	n.t.Helper()
	_, err := n.disk.PartitionDisk(n.ctx(), &diskv1.PartitionDiskRequest{DiskNumber: num})
	if status.Code(err) == codes.Unavailable && strings.Contains(status.Convert(err).Message(), "kernel refused partition") {
		n.t.Logf("PartitionDisk(%d): %v; retrying as documented", num, err)
		_, err = n.disk.PartitionDisk(n.ctx(), &diskv1.PartitionDiskRequest{DiskNumber: num})
	}
	return err
}

// formattedVolume partitions disk num (PartitionDisk makes one partition
// of it), formats that volume and returns its ID: the start of every test
// that needs a volume and is about something else.
func (n *node) formattedVolume(num uint32) string {
	n.t.Helper()
	n.ok("PartitionDisk", n.partition(num))
	vols, err := n.vol.ListVolumesOnDisk(n.ctx(), &volumev1.ListVolumesOnDiskRequest{DiskNumber: num})
	n.ok("ListVolumesOnDisk", err)
	id := vols.VolumeIds[0]
	_, err = n.vol.FormatVolume(n.ctx(), &volumev1.FormatVolumeRequest{VolumeId: id})
	n.ok("FormatVolume", err)
	return id
}

// attachVolume attaches a loop disk of size bytes backed by the file
// named name, finds it by its serial as a driver does, and makes it one
// formatted volume (formattedVolume). It returns the disk, its number and
// the volume's ID.
func (n *node) attachVolume(name string, size int64) (*linuxnode.Loop, uint32, string) {
	n.t.Helper()
	l := n.attach(name, size)
	num := n.findDisk(l.File, "")
	return l, num, n.formattedVolume(num)
}

// publishPath is where kubelet publishes CSI volume pvc into pod podUID
// (pods/<uid>/volumes/kubernetes.io~csi/<pvc>/mount). It makes the path's
// parent through the filesystem group, twice, as a driver's NodePublish
// does (and again on kubelet's retry); the caller links the path.
func (n *node) publishPath(podUID, pvc string) string {
	n.t.Helper()
	publish := n.path("pods", podUID, "volumes", "kubernetes.io~csi", pvc, "mount")
	n.twice("Mkdir(publish parent)", func() error {
		_, err := n.fs.Mkdir(n.ctx(), &filesystemv1.MkdirRequest{Path: filepath.Dir(publish)})
		return err
	})
	return publish
}

// findDisk returns the number of the disk ListDiskIDs reports with the
// given serial number or page 0x83 ID.
func (n *node) findDisk(serial, page83 string) uint32 {
	n.t.Helper()
	r, err := n.disk.ListDiskIDs(n.ctx(), &diskv1.ListDiskIDsRequest{})
	n.ok("ListDiskIDs", err)
	var found []uint32
	for num, ids := range r.DiskIDs {
		if (serial != "" && ids.SerialNumber == serial) || (page83 != "" && ids.Page83 == page83) {
			found = append(found, num)
		}
	}
	if len(found) != 1 {
		n.t.Fatalf("ListDiskIDs: want one disk with serial %q / page83 %q, found %v in %v", serial, page83, found, r.DiskIDs)
	}
	return found[0]
}

// mountsAt returns the test's mounts at exactly mp.
func (n *node) mountsAt(mp string) int {
	c := 0
	for _, m := range n.s.Mounts() {
		if m.MountPoint == mp {
			c++
		}
	}
	return c
}

// statfsBytes is what GetVolumeStats must report for a mount: total =
// blocks × bsize, used = (blocks − bfree) × bsize.
func statfsBytes(t *testing.T, mp string) (total, used int64) {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(mp, &st); err != nil {
		t.Fatal(err)
	}
	bs := int64(st.Bsize) //nolint:unconvert // Statfs_t field types differ between architectures
	return int64(st.Blocks) * bs, int64(st.Blocks-st.Bfree) * bs
}

// volumeStats calls GetVolumeStats and checks it against statfs(2) of the
// mount, taken just before and just after the call.
func (n *node) volumeStats(id, mp string) (total, used int64) {
	n.t.Helper()
	t0, u0 := statfsBytes(n.t, mp)
	r, err := n.vol.GetVolumeStats(n.ctx(), &volumev1.GetVolumeStatsRequest{VolumeId: id})
	n.ok("GetVolumeStats", err)
	t1, u1 := statfsBytes(n.t, mp)
	if (r.TotalBytes != t0 || r.UsedBytes != u0) && (r.TotalBytes != t1 || r.UsedBytes != u1) {
		n.t.Fatalf("GetVolumeStats = total %d used %d; statfs(%s) says total %d used %d (before) / %d %d (after)", r.TotalBytes, r.UsedBytes, mp, t0, u0, t1, u1)
	}
	return r.TotalBytes, r.UsedBytes
}

// diskSize calls GetDiskStats.
func (n *node) diskSize(num uint32) int64 {
	n.t.Helper()
	r, err := n.disk.GetDiskStats(n.ctx(), &diskv1.GetDiskStatsRequest{DiskNumber: num})
	n.ok("GetDiskStats", err)
	return r.TotalBytes
}

// online calls GetDiskState.
func (n *node) online(num uint32) bool {
	n.t.Helper()
	r, err := n.disk.GetDiskState(n.ctx(), &diskv1.GetDiskStateRequest{DiskNumber: num})
	n.ok("GetDiskState", err)
	return r.IsOnline
}

// exists tells whether p exists (lstat).
func exists(p string) bool {
	_, err := os.Lstat(p)
	return !errors.Is(err, fs.ErrNotExist)
}
