package blockdev

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// kernel is every privileged system call the backend makes. The Linux
// implementation (kernel_linux.go) issues them; tests substitute a fake so
// the decision logic runs without root, and on any OS.
type kernel interface {
	// addPartition, resizePartition and deletePartition change the kernel's
	// view of the partitions of the disk at diskPath with the BLKPG ioctl;
	// start and length are in bytes. The partition table on disk is not
	// touched.
	addPartition(diskPath string, number int, start, length int64) error
	resizePartition(diskPath string, number int, start, length int64) error
	deletePartition(diskPath string, number int) error
	// claimable opens a block device exclusively (O_EXCL) and closes it
	// again: it fails with EBUSY while anything holds the device (a mount,
	// a device-mapper table, another program's O_EXCL open).
	claimable(devPath string) error
	// openDevice opens a disk read-only to read its partition table or
	// signatures, or a partition's content at the table's offsets, past
	// the page cache (O_DIRECT) where the device allows it. On a path that
	// does not answer (a passive ALUA path, a failed transport) its reads
	// can block for minutes.
	openDevice(devPath string) (deviceReader, error)
	// setReadOnly sets or clears the kernel's read-only flag of a block
	// device (BLKROSET); the partitions of a disk follow the disk's flag.
	setReadOnly(devPath string, readOnly bool) error
	// flushDevice writes a block device's dirty pages and asks the device
	// to flush its write cache (fsync); with dropCache it also drops the
	// device's clean cached pages (BLKFLSBUF).
	flushDevice(devPath string, dropCache bool) error
	// mount mounts source at target with mount(2), no flags.
	mount(source, target, fstype, data string) error
	// unmount unmounts target with umount2(2) and UMOUNT_NOFOLLOW, so a
	// last element swapped for a link is not followed (it is not a mount
	// point: EINVAL).
	unmount(target string) error
	// syncFS flushes the filesystem holding dir (syncfs(2)).
	syncFS(dir string) error
	// statFS returns the size and used bytes of the filesystem holding dir.
	statFS(dir string) (total, used int64, err error)
	// mounts returns the calling process's mount table.
	mounts() ([]mountinfo.Mount, error)
	// swapDevices returns the block devices in use as swap.
	swapDevices() ([]blocktopo.DevNum, error)
	// deviceOf returns the device number of the filesystem holding path
	// (st_dev), following symlinks.
	deviceOf(path string) (blocktopo.DevNum, error)
	// blockDevice returns the device number of the block device node at
	// path (st_rdev), following symlinks (/dev/disk/by-uuid/...); a path
	// that is not a block device node is an error.
	blockDevice(path string) (blocktopo.DevNum, error)
	// capabilities returns the effective capability set of the process.
	capabilities() (uint64, error)
}

// deviceReader is a block device open for reading.
type deviceReader interface {
	io.ReaderAt
	io.Closer
}

// capSysResource is CAP_SYS_RESOURCE's bit: ext4 online resize
// (EXT4_IOC_RESIZE_FS) needs it.
const capSysResource = 24

// parseCapEff reads the CapEff line of /proc/self/status.
func parseCapEff(status []byte) (uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, fmt.Errorf("no CapEff line in /proc/self/status")
}

// parseSwaps returns the file names of /proc/swaps (the first column,
// unescaped like mountinfo's octal escapes).
func parseSwaps(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	first := true
	for sc.Scan() {
		if first { // header line
			first = false
			continue
		}
		if f := strings.Fields(sc.Text()); len(f) > 0 {
			out = append(out, unescapeOctal(f[0]))
		}
	}
	return out
}

// unescapeOctal undoes the kernel's \040-style escapes.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
