//go:build linux

package blockdev

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// linuxKernel issues the system calls for real.
type linuxKernel struct{}

func newKernel() (kernel, error) { return linuxKernel{}, nil }

func (linuxKernel) addPartition(diskPath string, number int, start, length int64) error {
	return blkpg(diskPath, unix.BLKPG_ADD_PARTITION, number, start, length)
}

func (linuxKernel) resizePartition(diskPath string, number int, start, length int64) error {
	return blkpg(diskPath, unix.BLKPG_RESIZE_PARTITION, number, start, length)
}

func (linuxKernel) deletePartition(diskPath string, number int) error {
	return blkpg(diskPath, unix.BLKPG_DEL_PARTITION, number, 0, 0)
}

func (linuxKernel) claimable(devPath string) error {
	f, err := os.OpenFile(devPath, os.O_RDONLY|unix.O_EXCL|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

func (linuxKernel) openDevice(devPath string) (deviceReader, error) {
	f, err := os.OpenFile(devPath, os.O_RDONLY|unix.O_CLOEXEC|unix.O_DIRECT, 0)
	if errors.Is(err, unix.EINVAL) { // a device without direct I/O
		return os.OpenFile(devPath, os.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, err
	}
	return directReader{f}, nil
}

// directAlign is what O_DIRECT reads are aligned to, in memory, offset
// and length: the largest logical block size.
const directAlign = 4096

// directReader reads a block device opened with O_DIRECT, past the page
// cache. A disk's page cache is not kept coherent with writes through its
// partitions' devices (a table read's readahead can hold the old content
// of a partition's start), and a read of a partition's content through
// the disk, for a partition the kernel has no device for, must see what is
// on the medium. Reading so also leaves the cache as it was.
type directReader struct{ f *os.File }

// ReadAt implements io.ReaderAt: it reads the aligned blocks around
// p's range and copies p's part out.
func (r directReader) ReadAt(p []byte, off int64) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	start := off &^ (directAlign - 1)
	end := (off + int64(len(p)) + directAlign - 1) &^ (directAlign - 1)
	buf := alignedBuffer(int(end - start))
	n, err := r.f.ReadAt(buf, start)
	skip := int(off - start)
	c := 0
	if n > skip {
		c = copy(p, buf[skip:n])
	}
	if c < len(p) {
		if err == nil {
			err = io.EOF
		}
		return c, err
	}
	return c, nil
}

// Close closes the device.
func (r directReader) Close() error { return r.f.Close() }

// alignedBuffer returns n bytes whose start is aligned to directAlign.
func alignedBuffer(n int) []byte {
	b := make([]byte, n+directAlign)
	skip := (directAlign - int(uintptr(unsafe.Pointer(&b[0]))&(directAlign-1))) % directAlign
	return b[skip : skip+n]
}

// blkpg issues one BLKPG operation. x/sys has the types but no wrapper, so
// the ioctl goes through Syscall; the argument structs stay alive until it
// returns.
func blkpg(diskPath string, op int32, number int, start, length int64) error {
	f, err := os.OpenFile(diskPath, os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // opened read-only for the ioctl: a close error changes nothing
	p := unix.BlkpgPartition{Start: start, Length: length, Pno: int32(number)}
	arg := unix.BlkpgIoctlArg{Op: op, Datalen: int32(unsafe.Sizeof(p)), Data: (*byte)(unsafe.Pointer(&p))}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), unix.BLKPG, uintptr(unsafe.Pointer(&arg)))
	runtime.KeepAlive(&p)
	runtime.KeepAlive(&arg)
	if errno != 0 {
		return fmt.Errorf("BLKPG on %s: %w", diskPath, errno)
	}
	return nil
}

func (linuxKernel) setReadOnly(devPath string, readOnly bool) error {
	f, err := os.OpenFile(devPath, os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // opened read-only for the ioctl: a close error changes nothing
	v := 0
	if readOnly {
		v = 1
	}
	if err := unix.IoctlSetPointerInt(int(f.Fd()), unix.BLKROSET, v); err != nil {
		return fmt.Errorf("BLKROSET on %s: %w", devPath, err)
	}
	return nil
}

func (linuxKernel) flushDevice(devPath string, dropCache bool) error {
	f, err := os.OpenFile(devPath, os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // opened read-only for the ioctl: a close error changes nothing
	// fsync on a block device writes its dirty pages and sends a cache
	// flush to the device: the Linux counterpart of Windows' volume flush.
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", devPath, err)
	}
	if dropCache {
		if err := unix.IoctlSetInt(int(f.Fd()), unix.BLKFLSBUF, 0); err != nil {
			return fmt.Errorf("BLKFLSBUF on %s: %w", devPath, err)
		}
	}
	return nil
}

func (linuxKernel) mount(source, target, fstype, data string) error {
	return unix.Mount(source, target, fstype, 0, data)
}

func (linuxKernel) unmount(target string) error { return unix.Unmount(target, unix.UMOUNT_NOFOLLOW) }

func (linuxKernel) syncFS(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer unix.Close(fd) //nolint:errcheck // a directory opened read-only: a close error changes nothing
	if err := unix.Syncfs(fd); err != nil {
		return fmt.Errorf("syncfs %s: %w", dir, err)
	}
	return nil
}

func (linuxKernel) statFS(dir string) (total, used int64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	bs := int64(st.Bsize) //nolint:unconvert // Statfs_t field types differ between architectures
	return int64(st.Blocks) * bs, int64(st.Blocks-st.Bfree) * bs, nil
}

func (linuxKernel) mounts() ([]mountinfo.Mount, error) { return mountinfo.Read() }

func (linuxKernel) swapDevices() ([]blocktopo.DevNum, error) {
	b, err := os.ReadFile("/proc/swaps")
	if err != nil {
		return nil, err
	}
	var out []blocktopo.DevNum
	for _, name := range parseSwaps(b) {
		if d, err := (linuxKernel{}).blockDevice(name); err == nil {
			out = append(out, d)
		}
	}
	return out, nil
}

func (linuxKernel) blockDevice(path string) (blocktopo.DevNum, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return blocktopo.DevNum{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return blocktopo.DevNum{}, fmt.Errorf("%s is not a block device", path)
	}
	rdev := uint64(st.Rdev) //nolint:unconvert // Stat_t field types differ between architectures
	return blocktopo.DevNum{Major: unix.Major(rdev), Minor: unix.Minor(rdev)}, nil
}

func (linuxKernel) deviceOf(path string) (blocktopo.DevNum, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return blocktopo.DevNum{}, err
	}
	dev := uint64(st.Dev) //nolint:unconvert // Stat_t field types differ between architectures
	return blocktopo.DevNum{Major: unix.Major(dev), Minor: unix.Minor(dev)}, nil
}

func (linuxKernel) capabilities() (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	return parseCapEff(b)
}
