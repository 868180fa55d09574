package driver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// LoopAllocator allocates each volume's disk as a sparse file in Dir
// attached to a loop device: what a cloud disk is to a cloud driver, on
// one node. It needs root (loop-control, LOOP_CONFIGURE).
//
// The loop devices are attached without autoclear, so they outlive a
// restart of the driver like a cloud disk outlives its driver; Get and
// Create attach a file again when it has no loop device (after a reboot).
// Delete removes the partitions the proxy added (BLKPG), detaches the
// device and removes the file.
type LoopAllocator struct {
	// Dir holds the backing files, <volume ID>.img.
	Dir string

	mu sync.Mutex
}

// NewLoopAllocator returns a LoopAllocator keeping its files in dir,
// which it creates. dir is made absolute and free of symlinks, because
// the kernel reports a loop device's backing file that way and that is
// the disk's serial number.
func NewLoopAllocator(dir string) (*LoopAllocator, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	return &LoopAllocator{Dir: real}, nil
}

func (a *LoopAllocator) file(id string) string { return filepath.Join(a.Dir, id+".img") }

// Create implements Allocator.
func (a *LoopAllocator) Create(ctx context.Context, id string, size int64) (Disk, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	path := a.file(id)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, fs.ErrExist):
		return a.get(id)
	case err != nil:
		return Disk{}, err
	}
	err = f.Truncate(size) // sparse: no block is written
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		_, err = attach(path)
	}
	if err != nil {
		_ = os.Remove(path) // nothing attached it: the error that matters is err
		return Disk{}, fmt.Errorf("create the disk of volume %s: %w", id, err)
	}
	return a.get(id)
}

// Get implements Allocator.
func (a *LoopAllocator) Get(ctx context.Context, id string) (Disk, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.get(id)
}

// get returns the disk of id, attaching its file if no loop device has it.
func (a *LoopAllocator) get(id string) (Disk, error) {
	path := a.file(id)
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Disk{}, errdefs.Errorf(errdefs.ErrNotFound, "no volume %q", id)
	} else if err != nil {
		return Disk{}, err
	}
	if _, ok := loopOf(path); !ok {
		if _, err := attach(path); err != nil {
			return Disk{}, fmt.Errorf("attach the disk of volume %s: %w", id, err)
		}
	}
	return Disk{ID: id, Size: st.Size(), Serial: path}, nil
}

// Expand implements Allocator: the file grows, and LOOP_SET_CAPACITY
// tells the kernel, as a cloud grows a disk under a running node.
func (a *LoopAllocator) Expand(ctx context.Context, id string, size int64) (Disk, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	d, err := a.get(id)
	if err != nil || size <= d.Size {
		return d, err
	}
	if err := os.Truncate(d.Serial, size); err != nil {
		return Disk{}, err
	}
	name, ok := loopOf(d.Serial)
	if !ok {
		return Disk{}, fmt.Errorf("the disk of volume %s lost its loop device", id)
	}
	dev, err := os.OpenFile("/dev/"+name, os.O_RDWR, 0)
	if err != nil {
		return Disk{}, err
	}
	defer dev.Close() //nolint:errcheck // only an ioctl went through it
	if err := unix.IoctlSetInt(int(dev.Fd()), unix.LOOP_SET_CAPACITY, 0); err != nil {
		return Disk{}, fmt.Errorf("LOOP_SET_CAPACITY /dev/%s: %w", name, err)
	}
	return a.get(id)
}

// Delete implements Allocator.
func (a *LoopAllocator) Delete(ctx context.Context, id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	path := a.file(id)
	if name, ok := loopOf(path); ok {
		if err := detach(name); err != nil {
			return fmt.Errorf("volume %s: %w", id, err)
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// attach attaches path to a free loop device with partition support (the
// proxy partitions the disk with BLKPG, which a loop device without
// LO_FLAGS_PARTSCAN refuses) and returns its name (loop3).
func attach(path string) (string, error) {
	backing, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return "", err
	}
	defer backing.Close() //nolint:errcheck // the loop device holds its own reference
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		return "", err
	}
	defer ctl.Close() //nolint:errcheck // only ioctls went through it
	// Another process may take the free device between GET_FREE and
	// CONFIGURE (EBUSY): ask again.
	for try := 0; ; try++ {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return "", fmt.Errorf("LOOP_CTL_GET_FREE: %w", err)
		}
		name := "loop" + strconv.Itoa(n)
		dev, err := os.OpenFile("/dev/"+name, os.O_RDWR, 0)
		if err != nil {
			return "", err
		}
		cfg := unix.LoopConfig{Fd: uint32(backing.Fd()), Info: unix.LoopInfo64{Flags: unix.LO_FLAGS_PARTSCAN}}
		copy(cfg.Info.File_name[:len(cfg.Info.File_name)-1], path)
		err = unix.IoctlLoopConfigure(int(dev.Fd()), &cfg)
		_ = dev.Close() // without autoclear the device stays attached
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, unix.EBUSY) || try == 10 {
			return "", fmt.Errorf("LOOP_CONFIGURE /dev/%s: %w", name, err)
		}
	}
}

// loopOf returns the loop device attached to path, from sysfs (what
// losetup -j reads).
func loopOf(path string) (string, bool) {
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // detached meanwhile
		}
		if strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)") == path {
			return filepath.Base(filepath.Dir(filepath.Dir(f))), true
		}
	}
	return "", false
}

// detach removes the partitions of loop device name (BLKPG: they are the
// kernel's, added by the proxy, and must not be left for the next user of
// the device), clears its read-only flag (an offline disk on the Linux
// backend is a read-only one, and the flag outlives the attachment) and
// detaches it. A mounted partition is busy: the volume is in use.
func detach(name string) error {
	dev, err := os.OpenFile("/dev/"+name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer dev.Close() //nolint:errcheck // only ioctls went through it
	parts, _ := filepath.Glob("/sys/block/" + name + "/" + name + "p*/partition")
	for _, p := range parts {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		part := unix.BlkpgPartition{Pno: int32(n)}
		arg := unix.BlkpgIoctlArg{Op: unix.BLKPG_DEL_PARTITION, Datalen: int32(unsafe.Sizeof(part)), Data: (*byte)(unsafe.Pointer(&part))}
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, dev.Fd(), unix.BLKPG, uintptr(unsafe.Pointer(&arg)))
		runtime.KeepAlive(&part)
		switch {
		case errno == unix.EBUSY:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "partition %d of /dev/%s is in use (mounted?)", n, name)
		case errno != 0 && errno != unix.ENXIO: // ENXIO: gone already
			return fmt.Errorf("BLKPG_DEL_PARTITION /dev/%sp%d: %w", name, n, errno)
		}
	}
	if err := unix.IoctlSetPointerInt(int(dev.Fd()), unix.BLKROSET, 0); err != nil {
		return fmt.Errorf("BLKROSET 0 /dev/%s: %w", name, err)
	}
	if err := unix.IoctlSetInt(int(dev.Fd()), unix.LOOP_CLR_FD, 0); err != nil && !errors.Is(err, unix.ENXIO) {
		if errors.Is(err, unix.EBUSY) {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "/dev/%s is in use", name)
		}
		return fmt.Errorf("LOOP_CLR_FD /dev/%s: %w", name, err)
	}
	return nil
}
