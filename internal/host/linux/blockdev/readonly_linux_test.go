//go:build linux

// This test is in package blockdev_test, not blockdev, so that it can ask
// the object host's questions through objecthost itself (which imports
// hostset, which imports this package).
package blockdev_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blockdev"
	"github.com/csi-node-proxy/csi-node-proxy/internal/objecthost"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/loopdisk"
)

const mib = 1 << 20

// skewedLoop is a loop disk for TestReadsLeaveTheNodeAlone.
type skewedLoop struct {
	name, path string
	dev        *os.File
}

// blkpgOp issues one BLKPG operation on the loop disk, as partx or
// another program would behind the proxy's back.
func (l *skewedLoop) blkpgOp(t *testing.T, op int32, n int, start, length int64) {
	t.Helper()
	p := unix.BlkpgPartition{Start: start, Length: length, Pno: int32(n)}
	arg := unix.BlkpgIoctlArg{Op: op, Datalen: int32(unsafe.Sizeof(p)), Data: (*byte)(unsafe.Pointer(&p))}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, l.dev.Fd(), unix.BLKPG, uintptr(unsafe.Pointer(&arg)))
	runtime.KeepAlive(&p)
	runtime.KeepAlive(&arg)
	if errno != 0 {
		t.Fatalf("BLKPG op %d on %s partition %d: %v", op, l.path, n, errno)
	}
}

// kernelView describes what the kernel shows of the disk's partitions:
// every entry of /sys/block/<loop>/ by name and, for each partition, its
// number, start, size and device number (which changes when a partition
// is deleted and added again, even at the same place).
func (l *skewedLoop) kernelView(t *testing.T) string {
	t.Helper()
	dir := "/sys/block/" + l.name
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		b.WriteString(e.Name())
		if num, err := os.ReadFile(filepath.Join(dir, e.Name(), "partition")); err == nil {
			fmt.Fprintf(&b, "{partition %s", strings.TrimSpace(string(num)))
			for _, attr := range []string{"start", "size", "dev"} {
				v, err := os.ReadFile(filepath.Join(dir, e.Name(), attr))
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, " %s %s", attr, strings.TrimSpace(string(v)))
			}
			b.WriteString("}")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// tableBytes reads the first and the last MiB of the disk: the protective
// MBR, the primary GPT and the backup GPT.
func (l *skewedLoop) tableBytes(t *testing.T, size int64) []byte {
	t.Helper()
	out := make([]byte, 2*mib)
	if _, err := l.dev.ReadAt(out[:mib], 0); err != nil {
		t.Fatal(err)
	}
	if _, err := l.dev.ReadAt(out[mib:], size-mib); err != nil {
		t.Fatal(err)
	}
	return out
}

// kernelPartition reads partition n's start and size in bytes from sysfs.
func (l *skewedLoop) kernelPartition(t *testing.T, n int) (start, size int64, ok bool) {
	t.Helper()
	dir := fmt.Sprintf("/sys/block/%s/%sp%d", l.name, l.name, n)
	read := func(attr string) int64 {
		b, err := os.ReadFile(filepath.Join(dir, attr))
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v * 512
	}
	if _, err := os.Stat(dir); err != nil {
		return 0, 0, false
	}
	return read("start"), read("size"), true
}

// TestReadsLeaveTheNodeAlone (issue 22 item 6): on a loop disk whose
// partition table on the disk and the kernel's partitions disagree, every
// read of the disk and volume hosts, the iSCSI backend's disk numbering,
// the object host's questions and FlushVolume leave the kernel's partitions and the
// table as they were: a read reports what the table on the disk says
// (the volume, whether it is formatted, its size) without adding,
// deleting or resizing a kernel partition. Only a call that changes the
// node (here Rescan) makes the kernel's view the table's.
func TestReadsLeaveTheNodeAlone(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "e2fsprogs", "mkfs.ext4")
	const size = 64 * mib
	for _, tc := range []struct {
		name string
		// skew makes the kernel's partitions differ from the table,
		// whose one partition is at start, length bytes.
		skew func(t *testing.T, l *skewedLoop, start, length int64)
	}{
		{"the kernel lacks the table's partition", func(t *testing.T, l *skewedLoop, _, _ int64) {
			l.blkpgOp(t, unix.BLKPG_DEL_PARTITION, 1, 0, 0)
		}},
		{"the kernel has a partition the table lacks", func(t *testing.T, l *skewedLoop, start, length int64) {
			l.blkpgOp(t, unix.BLKPG_ADD_PARTITION, 2, start+length, 256<<10)
		}},
		{"the kernel's partition is smaller than the table's", func(t *testing.T, l *skewedLoop, start, length int64) {
			l.blkpgOp(t, unix.BLKPG_DEL_PARTITION, 1, 0, 0)
			l.blkpgOp(t, unix.BLKPG_ADD_PARTITION, 1, start, length/2)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			root, files := t.TempDir(), t.TempDir()
			name, backing, dev, err := loopdisk.Attach(filepath.Join(files, "csi-readonly.img"), size)
			if err != nil {
				t.Fatal(err)
			}
			l := &skewedLoop{name: name, path: "/dev/" + name, dev: dev}
			t.Cleanup(func() {
				if err := loopdisk.DeletePartitions(dev, name); err != nil {
					t.Errorf("cleanup: %v", err)
				}
				if err := unix.IoctlSetInt(int(dev.Fd()), unix.LOOP_CLR_FD, 0); err != nil && !errors.Is(err, unix.ENXIO) {
					t.Errorf("cleanup: LOOP_CLR_FD %s: %v", l.path, err)
				}
				_ = dev.Close()
				_ = backing.Close()
			})
			b, err := blockdev.New(blockdev.Config{DiskFilter: []string{name}, MountRoots: []string{root}, HostMountTable: "none"})
			if err != nil {
				t.Fatal(err)
			}
			n, err := b.DiskNumberOf(name)
			if err != nil {
				t.Fatal(err)
			}
			// The disk as a driver leaves it: partitioned and formatted,
			// through the backend.
			if err := b.PartitionDisk(ctx, n); err != nil {
				t.Fatal(err)
			}
			ids, err := b.ListVolumesOnDisk(ctx, n, 0)
			if err != nil || len(ids) != 1 {
				t.Fatalf("ListVolumesOnDisk = %v, %v", ids, err)
			}
			id := ids[0]
			if err := b.FormatVolume(ctx, id); err != nil {
				t.Fatal(err)
			}
			start, length, ok := l.kernelPartition(t, 1)
			if !ok {
				t.Fatal("PartitionDisk left no kernel partition 1")
			}

			tc.skew(t, l, start, length)
			view, table := l.kernelView(t), l.tableBytes(t, size)
			objects := objecthost.NewHostObjects(b.Volume(), b.Disk(), nil)

			// Every read, with what it must answer from the table on the
			// disk. Errors are only allowed where the question has no
			// answer on an unmounted volume.
			reads := []struct {
				what string
				run  func() (any, error)
				want string // fmt of the answer; "" when only the error matters
				err  error  // the error kind wanted; nil for none
			}{
				{"ListDiskLocations", func() (any, error) { return b.ListDiskLocations(ctx) }, "map[]", nil},
				{"ListDiskIDs", func() (any, error) {
					m, err := b.ListDiskIDs(ctx)
					return len(m), err
				}, "1", nil},
				{"DiskSize", func() (any, error) { return b.DiskSize(ctx, n) }, fmt.Sprint(size), nil},
				{"IsDiskOnline", func() (any, error) { return b.IsDiskOnline(ctx, n) }, "true", nil},
				{"DiskNumberOf", func() (any, error) { return b.DiskNumberOf(name) }, fmt.Sprint(n), nil},
				{"ListVolumesOnDisk", func() (any, error) { return b.ListVolumesOnDisk(ctx, n, 0) }, fmt.Sprint([]string{id}), nil},
				{"ListVolumesOnDisk partition 1", func() (any, error) { return b.ListVolumesOnDisk(ctx, n, 1) }, fmt.Sprint([]string{id}), nil},
				{"IsVolumeFormatted", func() (any, error) { return b.IsVolumeFormatted(ctx, id) }, "true", nil},
				{"VolumeSizes", func() (any, error) {
					cur, max, err := b.VolumeSizes(ctx, id)
					return [2]int64{cur, max}, err
				}, fmt.Sprint([2]int64{length, length}), nil},
				{"VolumeStats", func() (any, error) {
					total, used, err := b.VolumeStats(ctx, id)
					return [2]int64{total, used}, err
				}, "", errdefs.ErrFailedPrecondition},
				{"DiskNumber", func() (any, error) { return b.DiskNumber(ctx, id) }, fmt.Sprint(n), nil},
				{"VolumeAt", func() (any, error) { return b.VolumeAt(ctx, root) }, "", errdefs.ErrNotFound},
				{"ClosestVolume", func() (any, error) { return b.ClosestVolume(ctx, filepath.Join(root, "x")) }, "", errdefs.ErrNotFound},
				{"VolumeMounts", func() (any, error) { return b.VolumeMounts(ctx, id) }, "[]", nil},
				// Not a read, but it only writes out caches: it must not
				// give the partition a device either.
				{"FlushVolume", func() (any, error) { return nil, b.FlushVolume(ctx, id) }, "", nil},
				{"objecthost VolumeDisk", func() (any, error) { return objects.VolumeDisk(ctx, id) }, fmt.Sprint(n), nil},
				{"objecthost DiskVolumes", func() (any, error) { return objects.DiskVolumes(ctx, n) }, fmt.Sprint([]string{id}), nil},
				{"objecthost DiskFacts", func() (any, error) {
					f, err := objects.DiskFacts(ctx, n)
					return f.Serial != "", err
				}, "true", nil},
				{"objecthost VolumeMounts", func() (any, error) { return objects.VolumeMounts(ctx, id) }, "[]", nil},
			}
			for _, r := range reads {
				got, err := r.run()
				switch {
				case r.err == nil && err != nil:
					t.Errorf("%s: %v", r.what, err)
				case r.err != nil && !errors.Is(err, r.err):
					t.Errorf("%s: error %v, want one wrapping %q", r.what, err, r.err)
				case r.want != "" && fmt.Sprint(got) != r.want:
					t.Errorf("%s = %v, want %s (what the table on the disk says)", r.what, got, r.want)
				}
				if now := l.kernelView(t); now != view {
					t.Fatalf("%s changed the kernel's partitions of %s:\nbefore:\n%s\nafter:\n%s", r.what, l.path, view, now)
				}
				if !bytes.Equal(l.tableBytes(t, size), table) {
					t.Fatalf("%s changed the partition table of %s", r.what, l.path)
				}
			}

			// A call that changes the node makes the kernel's view the
			// table's again.
			if err := b.Rescan(ctx); err != nil {
				t.Fatal(err)
			}
			if s, z, ok := l.kernelPartition(t, 1); !ok || s != start || z != length {
				t.Errorf("after Rescan, kernel partition 1 = %d+%d (present %v), the table says %d+%d", s, z, ok, start, length)
			}
			if got := loopdisk.Partitions(name); !slices.Equal(got, []int{1}) {
				t.Errorf("after Rescan the kernel has partitions %v, the table only 1", got)
			}
		})
	}
}
