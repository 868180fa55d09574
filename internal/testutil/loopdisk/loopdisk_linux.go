package loopdisk

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Attach creates a sparse file of size bytes at file and attaches it to a
// free loop device with LOOP_CONFIGURE: LO_FLAGS_PARTSCAN (without it a
// loop device takes no partitions, not even through BLKPG),
// LO_FLAGS_AUTOCLEAR, and the file's base name as lo_file_name. It returns
// the device's kernel name (loop3) and the backing file and device, both
// open: with AUTOCLEAR the device detaches as soon as its last opener
// goes, so dev keeps it attached until the caller closes it.
func Attach(file string, size int64) (name string, backing, dev *os.File, err error) {
	if backing, err = Create(file, size); err != nil {
		return "", nil, nil, err
	}
	if name, dev, err = Configure(backing, filepath.Base(file), unix.LO_FLAGS_PARTSCAN|unix.LO_FLAGS_AUTOCLEAR); err != nil {
		_ = backing.Close()
		return "", nil, nil, err
	}
	return name, backing, dev, nil
}

// Create creates a sparse file of size bytes at file, which must not
// exist, and returns it open for reading and writing: the backing file of
// a loop disk.
func Create(file string, size int64) (*os.File, error) {
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(size); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// Configure attaches backing to a free loop device with LOOP_CONFIGURE,
// the given LO_FLAGS_* and fileName as lo_file_name, and returns the
// device's kernel name (loop3) and the device, open. Another process may
// take the free device between LOOP_CTL_GET_FREE and LOOP_CONFIGURE
// (EBUSY): it asks again, ten times at the most. Tests that model another
// user of the device (no PARTSCAN, no AUTOCLEAR) call it directly; Attach
// is the common case.
func Configure(backing *os.File, fileName string, flags uint32) (name string, dev *os.File, err error) {
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		return "", nil, err
	}
	defer ctl.Close() //nolint:errcheck // nothing was written through it
	for try := 0; ; try++ {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return "", nil, fmt.Errorf("LOOP_CTL_GET_FREE: %w", err)
		}
		name = fmt.Sprintf("loop%d", n)
		if dev, err = os.OpenFile("/dev/"+name, os.O_RDWR, 0); err != nil {
			return "", nil, err
		}
		cfg := unix.LoopConfig{Fd: uint32(backing.Fd()), Info: unix.LoopInfo64{Flags: flags}}
		copy(cfg.Info.File_name[:], fileName)
		err = unix.IoctlLoopConfigure(int(dev.Fd()), &cfg)
		if err == nil {
			return name, dev, nil
		}
		_ = dev.Close()
		if !errors.Is(err, unix.EBUSY) || try == 10 {
			return "", nil, fmt.Errorf("LOOP_CONFIGURE /dev/%s: %w", name, err)
		}
	}
}

// Partitions returns the partition numbers the kernel has for the disk
// name (loopN), from sysfs: /sys/block/loopN/loopNpM/partition.
func Partitions(name string) []int {
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

// DeletePartitions removes every partition of the disk open as dev
// (BLKPG_DEL_PARTITION). Partitions added with BLKPG can outlive the loop
// device's detach (without LO_FLAGS_PARTSCAN, or when dropping them fails
// then), and the next user of that /dev/loopN would get EBUSY adding its
// own; so they go first, and any left is an error.
func DeletePartitions(dev *os.File, name string) error {
	var errs []error
	for _, n := range Partitions(name) {
		p := unix.BlkpgPartition{Pno: int32(n)}
		arg := unix.BlkpgIoctlArg{Op: unix.BLKPG_DEL_PARTITION, Datalen: int32(unsafe.Sizeof(p)), Data: (*byte)(unsafe.Pointer(&p))}
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, dev.Fd(), unix.BLKPG, uintptr(unsafe.Pointer(&arg)))
		runtime.KeepAlive(&p)
		runtime.KeepAlive(&arg)
		if errno != 0 && errno != unix.ENXIO { // ENXIO: already gone
			errs = append(errs, fmt.Errorf("BLKPG_DEL_PARTITION %sp%d: %w", name, n, errno))
		}
	}
	if left := Partitions(name); len(left) > 0 {
		errs = append(errs, fmt.Errorf("partitions %v of %s are still there", left, name))
	}
	return errors.Join(errs...)
}

// ReadHead reads the first MiB of a device: where the partition table and
// the filesystems' superblocks are, which a refused call must leave as
// they were.
func ReadHead(tb testing.TB, dev string) []byte {
	tb.Helper()
	f, err := os.Open(dev)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read-only
	b := make([]byte, 1<<20)
	if _, err := f.ReadAt(b, 0); err != nil {
		tb.Fatal(err)
	}
	return b
}

// Copy copies one block device onto another of the same size, as a
// snapshot restore does below the node. The whole disk's page cache is not
// kept coherent with writes through its partitions' devices (readahead of
// an earlier table read may hold the old content of the partition's
// start), so it drops the source's cache (BLKFLSBUF) before reading.
func Copy(tb testing.TB, from, to string) {
	tb.Helper()
	src, err := os.Open(from)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = src.Close() }() // read-only
	if err := unix.IoctlSetInt(int(src.Fd()), unix.BLKFLSBUF, 0); err != nil {
		tb.Fatal(err)
	}
	dst, err := os.OpenFile(to, os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = dst.Close() }() // Sync below reports whether the copy reached the device
	if _, err := io.Copy(dst, src); err != nil {
		tb.Fatal(err)
	}
	if err := dst.Sync(); err != nil {
		tb.Fatal(err)
	}
}
