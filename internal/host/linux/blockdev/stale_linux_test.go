//go:build linux

package blockdev

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/loopdisk"
)

// attachReused models a /dev/loopN handed on by a previous user: the loop
// device is attached WITHOUT LO_FLAGS_PARTSCAN to a first file, given
// kernel partitions with BLKPG (as the proxy or partx would), detached,
// and attached again, still without PARTSCAN, to a new blank file. The
// kernel drops partitions on detach only for PARTSCAN devices, so the
// stale partitions survive and describe nothing on the new medium.
func (h *harness) attachReused(name string, size int64, stale ...[3]int64) *loopDisk {
	t := h.t
	t.Helper()
	l := &loopDisk{file: filepath.Join(h.files, name)}
	first := filepath.Join(h.files, name+".previous-user")
	prev, err := loopdisk.Create(first, size)
	if err != nil {
		t.Fatal(err)
	}
	defer prev.Close()
	if l.backing, err = loopdisk.Create(l.file, size); err != nil {
		t.Fatal(err)
	}
	// No PARTSCAN, no AUTOCLEAR: the previous user's way.
	if l.name, l.dev, err = loopdisk.Configure(prev, name+".previous-user", 0); err != nil {
		t.Fatal(err)
	}
	l.path = "/dev/" + l.name
	// From here the harness cleans the device up (partitions included).
	h.loops = append(h.loops, l)
	for _, p := range stale {
		if err := blkpg(l.path, unix.BLKPG_ADD_PARTITION, int(p[0]), p[1], p[2]); err != nil {
			t.Fatalf("add the previous user's partition %d: %v", p[0], err)
		}
	}
	// The kernel detaches on the last close after LOOP_CLR_FD.
	if err := unix.IoctlSetInt(int(l.dev.Fd()), unix.LOOP_CLR_FD, 0); err != nil {
		t.Fatalf("detach the previous user's file: %v", err)
	}
	l.dev.Close()
	for try := 0; ; try++ {
		if _, err := os.Stat("/sys/block/" + l.name + "/loop/backing_file"); errors.Is(err, os.ErrNotExist) {
			break
		}
		if try == 250 {
			t.Fatalf("%s did not detach", l.path)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if l.dev, err = os.OpenFile(l.path, os.O_RDWR, 0); err != nil {
		t.Fatal(err)
	}
	cfg := unix.LoopConfig{Fd: uint32(l.backing.Fd()), Info: unix.LoopInfo64{Flags: unix.LO_FLAGS_AUTOCLEAR}}
	copy(cfg.Info.File_name[:], name)
	if err := unix.IoctlLoopConfigure(int(l.dev.Fd()), &cfg); err != nil {
		t.Fatalf("LOOP_CONFIGURE %s again: %v", l.path, err)
	}
	if got := loopdisk.Partitions(l.name); len(got) != len(stale) {
		t.Fatalf("the stale partitions did not survive the detach (kernel has %v): the test models nothing", got)
	}
	return l
}

// kernelPart reads a loop partition's start and size in bytes from sysfs.
func kernelPart(t *testing.T, l *loopDisk, n int) (start, size int64, ok bool) {
	t.Helper()
	dir := fmt.Sprintf("/sys/block/%s/%sp%d", l.name, l.name, n)
	if _, err := os.Stat(dir); err != nil {
		return 0, 0, false
	}
	start, err := blocktopo.ReadSectors(dir, "start")
	if err != nil {
		t.Fatal(err)
	}
	if size, err = blocktopo.ReadSectors(dir, "size"); err != nil {
		t.Fatal(err)
	}
	return start, size, true
}

func loopNumber(t *testing.T, l *loopDisk) uint32 {
	t.Helper()
	s, err := blocktopo.ReadAttr("/sys/block/"+l.name, "diskseq")
	if err != nil {
		t.Fatal(err)
	}
	var n uint32
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStalePartitionsOfReusedLoop (issue 15 item 3): a reused /dev/loopN
// carries kernel partitions its blank medium does not list. PartitionDisk
// used to write a fresh GPT and then fail BLKPG_ADD of partition 1 with
// EBUSY, and every retry the same way. Now the stale partitions are
// deleted first (they are not in use), and the kernel's partitions are the
// table's. A stale partition in use (held open O_EXCL) is refused with
// FailedPrecondition naming it, before anything is written. A stale
// partition next to the table's is dropped by the next call that changes
// the disk, never by a read.
func TestStalePartitionsOfReusedLoop(t *testing.T) {
	testutil.RequireRoot(t)
	ctx := context.Background()
	const mib = 1 << 20

	t.Run("not in use: deleted, then partitioned", func(t *testing.T) {
		h := newHarness(t)
		// Partition 1 where the new table will not put it, and a
		// partition 3 the new table has no entry for.
		l := h.attachReused("csi-stale-free.img", 64*mib, [3]int64{1, 4 * mib, 8 * mib}, [3]int64{3, 40 * mib, 8 * mib})
		b, err := New(Config{DiskFilter: []string{l.name}, MountRoots: []string{h.root}})
		if err != nil {
			t.Fatal(err)
		}
		n := loopNumber(t, l)
		if err := b.PartitionDisk(ctx, n); err != nil {
			t.Fatalf("PartitionDisk on a reused loop device with stale partitions: %v", err)
		}
		f, err := os.Open(l.path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		table, err := blocktopo.ReadGPT(f, 512, 64*mib)
		if err != nil || len(table.Entries) != 1 {
			t.Fatalf("table after PartitionDisk: %+v, %v", table, err)
		}
		e := table.Entries[0]
		start, size, ok := kernelPart(t, l, 1)
		if !ok || start != int64(e.First)*512 || size != int64(e.Sectors())*512 {
			t.Fatalf("kernel partition 1 = %d+%d (present %v), the table says %d+%d", start, size, ok, int64(e.First)*512, int64(e.Sectors())*512)
		}
		if _, _, ok := kernelPart(t, l, 3); ok {
			t.Fatal("stale partition 3 is still there")
		}
		vols, err := b.ListVolumesOnDisk(ctx, n, 0)
		if err != nil || len(vols) != 1 || vols[0] != blocktopo.VolumeID(&e) {
			t.Fatalf("ListVolumesOnDisk = %v, %v", vols, err)
		}

		// A stale partition 2 appears in the free space after partition 1 (a
		// previous user's BLKPG on a reused, already partitioned medium):
		// a listing leaves it (reads change nothing); the next call that
		// changes the disk reconciles it away and keeps partition 1.
		if err := blkpg(l.path, unix.BLKPG_ADD_PARTITION, 2, 63*mib, 256<<10); err != nil {
			t.Fatal(err)
		}
		if _, err := b.ListVolumesOnDisk(ctx, n, 0); err != nil {
			t.Fatal(err)
		}
		if _, _, ok := kernelPart(t, l, 2); !ok {
			t.Fatal("ListVolumesOnDisk deleted the stale partition 2: a read changed the node")
		}
		if err := b.PartitionDisk(ctx, n); err != nil {
			t.Fatal(err)
		}
		if _, _, ok := kernelPart(t, l, 2); ok {
			t.Fatal("PartitionDisk left the stale partition 2 the table does not list")
		}
		if s2, z2, ok := kernelPart(t, l, 1); !ok || s2 != start || z2 != size {
			t.Fatalf("partition 1 changed: %d+%d (present %v)", s2, z2, ok)
		}
	})

	t.Run("in use: refused, nothing written", func(t *testing.T) {
		h := newHarness(t)
		l := h.attachReused("csi-stale-busy.img", 64*mib, [3]int64{1, 4 * mib, 8 * mib})
		b, err := New(Config{DiskFilter: []string{l.name}, MountRoots: []string{h.root}})
		if err != nil {
			t.Fatal(err)
		}
		holder, err := os.OpenFile(l.path+"p1", os.O_RDONLY|unix.O_EXCL, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close()
		wantErr(t, b.PartitionDisk(ctx, loopNumber(t, l)), errdefs.ErrFailedPrecondition, l.name+"p1")
		head := make([]byte, 2*512)
		if _, err := l.backing.ReadAt(head, 0); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(head, make([]byte, len(head))) {
			t.Fatal("PartitionDisk wrote a table although it refused")
		}
		if start, _, ok := kernelPart(t, l, 1); !ok || start != 4*mib {
			t.Fatal("the partition in use was changed")
		}
	})
}
