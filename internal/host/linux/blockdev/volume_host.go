package blockdev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// ListVolumesOnDisk implements volume.Host: the unique GUIDs of the disk's
// GPT partitions in index order (partition 0), or of partition number
// partition. Microsoft Reserved partitions carry no volume and are left
// out, as on Windows. A disk without a partition table holding an ext2/3/4,
// XFS or btrfs filesystem is one volume named by the filesystem's UUID
// (partition 0 only: it has no partition number); any other disk without
// a GPT has no volumes.
func (b *Backend) ListVolumesOnDisk(ctx context.Context, n, partition uint32) ([]string, error) {
	s, err := b.scanDisk(ctx, n, scanTables)
	if err != nil {
		return nil, err
	}
	d, err := s.Disk(n, b.cfg.DiskFilter)
	if err != nil {
		return nil, err
	}
	if d.TableErr != nil {
		return nil, tableError(d)
	}
	ids := []string{}
	for _, v := range d.Volumes() {
		// A whole-disk volume has no partition number.
		if partition == 0 || (!v.Whole() && v.Entry.Index == int(partition)) {
			ids = append(ids, v.ID)
		}
	}
	if partition != 0 && len(ids) == 0 {
		return nil, errdefs.Errorf(errdefs.ErrNotFound, "%s has no partition %d", d.Describe(), partition)
	}
	return ids, nil
}

// lookup scans and finds a volume.
func (b *Backend) lookup(ctx context.Context, id string) (*blocktopo.Snapshot, *blocktopo.Volume, error) {
	s, err := b.scan(ctx, scanTables)
	if err != nil {
		return nil, nil, err
	}
	v, err := s.Volume(id)
	if err != nil {
		return nil, nil, err
	}
	return s, v, nil
}

// writable finds a volume that may be changed: not on a disk of the host's
// own and not on an offline disk. verb names the change in the refusal
// ("format a volume of"). The volume is found by a read (which changes
// nothing); then its disk is reconciled under the disk's lock (lockDisk),
// so the partition has a kernel device where the table says: formatting,
// mounting and growing a volume need that device, and these calls change
// the disk anyway. A refused call reconciles nothing.
func (b *Backend) writable(ctx context.Context, id, verb string) (*blocktopo.Volume, error) {
	_, v, err := b.lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := refuseChange(v.Disk, verb); err != nil {
		return nil, err
	}
	if v.Whole() {
		return v, nil // its device is the disk's: nothing to reconcile
	}
	d, err := b.lockDisk(ctx, v.Disk.Number, true)
	if err != nil {
		return nil, err
	}
	d.unlock() // the lock guards the reconcile, not what the caller does next
	if err := refuseChange(d.Disk, verb); err != nil {
		return nil, err
	}
	for _, c := range d.Volumes() {
		if c.ID != v.ID || c.Whole() {
			continue
		}
		if c.Part == nil && d.reconcileErr != nil {
			return nil, errdefs.Errorf(errdefs.ErrUnavailable, "the kernel has no device for %s: %v", c.Describe(), d.reconcileErr)
		}
		return c, nil
	}
	return nil, errdefs.Errorf(errdefs.ErrNotFound, "volume %s is no longer on %s", id, d.Describe())
}

// writableProbed is writable followed by probing the volume's device: how
// the calls that act on the filesystem a volume holds (mounting it,
// growing it) begin. It returns the volume, its device node and what the
// device holds.
func (b *Backend) writableProbed(ctx context.Context, id, verb string) (*blocktopo.Volume, string, blocktopo.FSInfo, error) {
	v, err := b.writable(ctx, id, verb)
	if err != nil {
		return nil, "", blocktopo.FSInfo{}, err
	}
	dev, err := device(v, b.cfg.DevRoot)
	if err != nil {
		return nil, "", blocktopo.FSInfo{}, err
	}
	info, err := blocktopo.ProbeDevice(dev)
	return v, dev, info, err
}

// unmountBusyTries and unmountBusyDelay bound how long UnmountVolume
// waits out a busy mount: 10 tries 100 ms apart.
const (
	unmountBusyTries = 10
	unmountBusyDelay = 100 * time.Millisecond
)

// probeContent reports what a volume holds without changing the node:
// through its kernel device when the kernel has one where the table says,
// otherwise straight from the disk at the table's offsets. Reads use it,
// so a volume whose partition the kernel lacks (or has elsewhere) is
// reported as the disk says, and gets no device for the asking. The disk
// is read past its page cache (the kernel's openDevice), which is not kept
// coherent with writes through partition devices.
func (b *Backend) probeContent(v *blocktopo.Volume) (blocktopo.FSInfo, error) {
	if dev, ok := v.KernelDevice(b.cfg.DevRoot); ok {
		return blocktopo.ProbeDevice(dev)
	}
	f, err := b.k.openDevice(v.Disk.Path)
	if err != nil {
		return blocktopo.FSInfo{}, err
	}
	defer f.Close() //nolint:errcheck // read-only: a close error changes nothing
	start, length := int64(v.Entry.First)*v.Disk.LogicalBlock, v.Size()
	info, err := blocktopo.ProbeVolume(io.NewSectionReader(f, start, length), length)
	if err != nil {
		return blocktopo.FSInfo{}, fmt.Errorf("%s: %w", v.Describe(), err)
	}
	return info, nil
}

// IsVolumeFormatted implements volume.Host by reading the start and the
// end of the volume for a filesystem or other signature (see probe):
// anything found counts as formatted, so FormatVolume never erases it. It
// is a read: a partition the kernel has no device for is read through the
// disk (probeContent), not given one.
func (b *Backend) IsVolumeFormatted(ctx context.Context, id string) (bool, error) {
	_, v, err := b.lookup(ctx, id)
	if err != nil {
		return false, err
	}
	info, err := b.probeContent(v)
	if err != nil {
		return false, err
	}
	return info.Type != "", nil
}

// mkfsArgv is the command that formats dev with fs. mkfs's own check for
// existing signatures stays on (no -F / -f): if it knows a signature the
// probe does not, it refuses instead of erasing. ext4 initialises inode
// tables and journal lazily (seconds instead of minutes on large volumes)
// and reserves no blocks for root: a volume's capacity belongs to its
// workload, as on NTFS and as Kubernetes' mount-utils formats.
func mkfsArgv(fs, dev string) []string {
	if fs == "xfs" {
		return []string{"mkfs.xfs", "-q", dev}
	}
	return []string{"mkfs.ext4", "-q", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1", dev}
}

// FormatVolume implements volume.Host with mkfs.ext4 or mkfs.xfs (Config
// Filesystem). It refuses a volume of a host or offline disk, of a disk
// with anything mounted, a boot or reserved partition, and a volume already
// holding a signature, found by the built-in probe or by `blkid -p` when
// installed (TYPE or PTTYPE), whichever filesystem is asked for; XFS needs
// at least 300 MiB (errdefs.ErrOutOfRange). A volume something holds open
// exclusively (a format still running) is errdefs.ErrUnavailable.
func (b *Backend) FormatVolume(ctx context.Context, id string) error {
	v, err := b.writable(ctx, id, "format a volume of")
	if err != nil {
		return err
	}
	d := v.Disk
	switch {
	case d.InUse() != "":
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "refusing to format volume %s on %s: %s", id, d.Describe(), d.InUse())
	case !v.Whole() && (v.Entry.Type == blocktopo.TypeBIOSBoot || v.Entry.Type == blocktopo.TypeEFISystem || v.Entry.Type == blocktopo.TypeMicrosoftReserved):
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "refusing to format volume %s: partition %d of %s is a boot or reserved partition (type %s)", id, v.Entry.Index, d.Describe(), v.Entry.Type)
	}
	dev, err := device(v, b.cfg.DevRoot)
	if err != nil {
		return err
	}
	// Nothing may hold the device while a format starts: mkfs holds it
	// exclusively while it writes, and one left running by a daemon killed
	// before its tools died with it (or another program's) would have its
	// fresh filesystem overwritten once it finished unseen between the
	// checks below and this mkfs. Retrying after it ends finds its
	// filesystem instead.
	if err := b.k.claimable(dev); err != nil {
		if errors.Is(err, syscall.EBUSY) {
			return errdefs.Errorf(errdefs.ErrUnavailable, "volume %s (%s) is in use: a previous format may still be running; retry (%v)", id, dev, err)
		}
		return fmt.Errorf("open volume %s (%s) exclusively before formatting it: %w", id, dev, err)
	}
	// The Service checked this already; checking again right before mkfs
	// narrows the window for anything formatting the device meanwhile.
	info, err := blocktopo.ProbeDevice(dev)
	if err != nil {
		return err
	}
	if info.Type != "" {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "volume %s already holds %s; refusing to erase it", id, info.Type)
	}
	if b.cfg.Filesystem == "xfs" && v.Size() < xfsMinSize {
		return errdefs.Errorf(errdefs.ErrOutOfRange, "volume %s is %d MiB; XFS needs at least %d MiB (use a larger disk, or ext4)", id, v.Size()>>20, xfsMinSize>>20)
	}
	// A second opinion from libblkid, which knows some eighty formats the
	// probe does not: mke2fs checks for signatures only on a terminal.
	if sig, err := b.blkidSignature(ctx, dev); err != nil {
		return err
	} else if sig != "" {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "volume %s already holds %s (blkid -p); refusing to erase it", id, sig)
	}
	if _, err := b.exec.Run(ctx, mkfsArgv(b.cfg.Filesystem, dev)); err != nil {
		return toolError(err)
	}
	return nil
}

// blkidSignature asks `blkid -p` (low-level probing, no cache, no udev)
// what dev holds and returns its TYPE or PTTYPE ("TYPE=zfs_member"), or ""
// when blkid finds nothing (exit status 2) or is not installed, in which
// case the built-in probe has decided alone. blkid's "ambivalent result"
// (exit status 8: more than one signature) is a signature too.
func (b *Backend) blkidSignature(ctx context.Context, dev string) (string, error) {
	out, err := b.exec.Run(ctx, []string{"blkid", "-p", "-o", "export", "--", dev})
	var ee *ExitError
	switch {
	case errors.As(err, &ee) && errors.Is(ee.Err, exec.ErrNotFound):
		return "", nil
	case errors.As(err, &ee) && ee.Err == nil && ee.Code == 2:
		return "", nil
	case errors.As(err, &ee) && ee.Err == nil && ee.Code == 8:
		return "more than one signature (blkid: " + ee.Stderr + ")", nil
	case err != nil:
		return "", fmt.Errorf("check %s for signatures with blkid: %w", dev, err)
	}
	var sigs []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "TYPE=") || strings.HasPrefix(l, "PTTYPE=") {
			sigs = append(sigs, strings.TrimSpace(l))
		}
	}
	return strings.Join(sigs, " "), nil
}

// toolError maps a failed tool run: a missing tool is a host that is not
// set up (errdefs.ErrFailedPrecondition naming the Debian package); the
// rest passes through with the tool's stderr in the message.
func toolError(err error) error {
	var ee *ExitError
	if errors.Is(err, exec.ErrNotFound) && errors.As(err, &ee) && len(ee.Argv) > 0 {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%s is not installed on the host (Debian package %s)", ee.Argv[0], toolPackages[ee.Argv[0]])
	}
	return err
}

// mountError maps mount(2) failures to what a driver can act on.
func mountError(err error, dev, target, fstype string) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.EBUSY:
			return errdefs.Errorf(errdefs.ErrUnavailable, "mount %s at %s: the device or target is busy (%v)", dev, target, err)
		case syscall.ENODEV:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "mount %s at %s: the kernel has no %s filesystem driver", dev, target, fstype)
		case syscall.EROFS:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "mount %s at %s: the device is read-only (%v)", dev, target, err)
		case syscall.EACCES, syscall.EPERM:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "mount %s at %s: %v: the proxy must run as root (CAP_SYS_ADMIN), or the device is read-only", dev, target, err)
		case syscall.EINVAL:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "mount %s at %s as %s failed (%v): the filesystem may be damaged; the kernel log (dmesg) says why", dev, target, fstype, err)
		}
	}
	return fmt.Errorf("mount %s at %s as %s: %w", dev, target, fstype, err)
}

// VolumeSizes implements volume.Host. current is the partition's size, or
// the filesystem's when that is smaller, so a resize whose filesystem step
// failed is retried instead of skipped as "nothing to gain". maximum is
// how far the partition can grow: to the next partition or the end of the
// disk's usable area, 1 MiB-aligned. It is a read: the sizes are the
// table's, and the filesystem is read as IsVolumeFormatted reads it.
func (b *Backend) VolumeSizes(ctx context.Context, id string) (current, maximum int64, err error) {
	_, v, err := b.lookup(ctx, id)
	if err != nil {
		return 0, 0, err
	}
	current = v.Size()
	if info, err := b.probeContent(v); err == nil && info.Size > 0 && info.Size < current {
		current = info.Size
	}
	if v.Whole() {
		maximum = v.Disk.Size
	} else {
		lbs := v.Disk.LogicalBlock
		limit := v.Disk.Table.GrowLimit(v.Entry, uint64(v.Disk.Size/lbs))
		maximum = int64(limit-v.Entry.First+1) * lbs
	}
	if maximum < current {
		maximum = current
	}
	return current, maximum, nil
}

// ResizeVolume implements volume.Host: grow the GPT entry (rewriting the
// table, which also moves the backup GPT to the disk's new end), tell the
// kernel with BLKPG_RESIZE_PARTITION, then grow the filesystem: xfs_growfs
// on a mount (an unmounted XFS is mounted on a private temporary directory
// for it), resize2fs on a mounted ext4 (online; needs CAP_SYS_RESOURCE),
// e2fsck -f -y and resize2fs on an unmounted one. A mounted ext4 without
// CAP_SYS_RESOURCE is refused before anything changes.
func (b *Backend) ResizeVolume(ctx context.Context, id string, size int64) error {
	v, dev, info, err := b.writableProbed(ctx, id, "resize a volume of")
	if err != nil {
		return err
	}
	mp := v.MountPoint(b.cfg.DevRoot)
	switch info.Type {
	case "", "xfs":
	case "ext2", "ext3", "ext4":
		if mp != "" {
			caps, err := b.k.capabilities()
			if err != nil {
				return fmt.Errorf("read the proxy's capabilities: %w", err)
			}
			if caps&(1<<capSysResource) == 0 {
				return errdefs.Errorf(errdefs.ErrFailedPrecondition,
					"cannot grow volume %s: its ext4 filesystem is mounted at %s and online growth (EXT4_IOC_RESIZE_FS) needs CAP_SYS_RESOURCE, which the proxy lacks; unmount the volume and resize it again (offline growth works), or grant the capability. Nothing was changed", id, mp)
			}
		}
	default:
		return errdefs.Errorf(errdefs.ErrUnimplemented, "cannot grow volume %s: it holds %s; the proxy grows ext4 and XFS only", id, info.Type)
	}
	if v.Whole() {
		// A whole-disk volume grows with its disk: nothing to rewrite.
		if size > v.Disk.Size {
			return errdefs.Errorf(errdefs.ErrOutOfRange, "volume %s cannot grow to %d bytes: it is %s, which has %d", id, size, v.Describe(), v.Disk.Size)
		}
	} else if err := b.growPartition(ctx, id, size); err != nil {
		return err
	}
	switch info.Type {
	case "":
		return nil // nothing to grow but the partition
	case "xfs":
		return b.growXFS(ctx, dev, mp)
	}
	return b.growExt4(ctx, dev, mp)
}

// growPartition rewrites the volume's GPT entry to end at size bytes and
// makes the kernel's partition follow. It reads the disk again under the
// disk's lock, so the table it rewrites is the current one.
func (b *Backend) growPartition(ctx context.Context, id string, size int64) error {
	_, found, err := b.lookup(ctx, id)
	if err != nil {
		return err
	}
	d, err := b.lockDisk(ctx, found.Disk.Number, true)
	if err != nil {
		return err
	}
	defer d.unlock()
	var v *blocktopo.Volume
	for _, c := range d.Volumes() {
		if c.ID == found.ID && !c.Whole() {
			v = c
		}
	}
	if v == nil {
		return errdefs.Errorf(errdefs.ErrNotFound, "volume %s is no longer on %s", id, d.Describe())
	}
	// The entry is grown in a copy of the table: the snapshot stays as it
	// was read.
	t, lbs := d.Table.Clone(), d.LogicalBlock
	e := t.Entry(v.Entry.Index)
	diskSectors := uint64(d.Size / lbs)
	last := e.First + uint64(size/lbs) - 1
	if limit := t.GrowLimit(e, diskSectors); last > limit {
		return errdefs.Errorf(errdefs.ErrOutOfRange, "volume %s cannot grow to %d bytes: %s allows %d", id, size, d.Describe(), int64(limit-e.First+1)*lbs)
	}
	if last > e.Last {
		e.Last = last
		f, err := os.OpenFile(d.Path, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("open %s to grow partition %d: %w", d.Describe(), e.Index, err)
		}
		err = blocktopo.WriteTable(f, t, d.Size)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write the partition table of %s: %w", d.Describe(), err)
		}
	}
	start, length := int64(e.First)*lbs, int64(e.Sectors())*lbs
	if d.DMUUID != "" {
		if p := d.Part(e.Index); p == nil || p.Size != length {
			// No BLKPG on device-mapper: kpartx resizes the partition's
			// device when multipathd's udev rules see the table change.
			return errdefs.Errorf(errdefs.ErrUnavailable, "the partition table of %s now says partition %d ends at byte %d; its device-mapper device follows when kpartx runs (multipathd's udev rules, or kpartx -u /dev/mapper/%s); ResizeVolume again then grows the filesystem", d.Describe(), e.Index, start+length, d.DMName)
		}
		return nil
	}
	switch p := d.Part(e.Index); {
	case p == nil:
		err = b.k.addPartition(d.Path, e.Index, start, length)
	case p.Size < length:
		err = b.k.resizePartition(d.Path, e.Index, start, length)
	}
	if err != nil {
		return errdefs.Errorf(errdefs.ErrUnavailable, "the partition table of %s says partition %d ends at byte %d, but the kernel refused the new size: %v", d.Describe(), e.Index, start+length, err)
	}
	return nil
}

// growXFS grows an XFS filesystem to its partition. xfs_growfs works only
// on a mounted filesystem, so an unmounted one is mounted privately first.
func (b *Backend) growXFS(ctx context.Context, dev, mp string) (err error) {
	if mp == "" {
		dir, err := os.MkdirTemp("", "csi-node-proxy-growfs-")
		if err != nil {
			return err
		}
		defer os.Remove(dir) //nolint:errcheck // best effort: an empty directory left in the temp dir is harmless
		if err := b.k.mount(dev, dir, "xfs", "nouuid"); err != nil {
			return mountError(err, dev, dir, "xfs")
		}
		defer func() {
			if uerr := b.k.unmount(dir); uerr != nil && err == nil {
				err = fmt.Errorf("unmount the temporary mount %s after growing: %w", dir, uerr)
			}
		}()
		mp = dir
	}
	if _, err := b.exec.Run(ctx, []string{"xfs_growfs", "-d", mp}); err != nil {
		return toolError(err)
	}
	return nil
}

// growExt4 grows an ext2/3/4 filesystem to its partition: online with
// resize2fs when mounted, after a forced check when not (resize2fs
// refuses an unchecked offline filesystem).
func (b *Backend) growExt4(ctx context.Context, dev, mp string) error {
	if mp == "" {
		if _, err := b.exec.Run(ctx, []string{"e2fsck", "-f", "-y", dev}); !fsckPassed(err) {
			return fmt.Errorf("check %s before growing it: %w", dev, toolError(err))
		}
	}
	if _, err := b.exec.Run(ctx, []string{"resize2fs", dev}); err != nil {
		var ee *ExitError
		if mp != "" && errors.As(err, &ee) && strings.Contains(ee.Stderr, "Permission denied") {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition,
				"the partition grew, but growing the ext4 filesystem mounted at %s was refused (%v); unmount the volume and resize it again (offline growth works)", mp, err)
		}
		return toolError(err)
	}
	return nil
}

// fsckPassed tells whether e2fsck left a consistent filesystem: exit status
// 0, 1 (errors found and corrected) or 2 (corrected; a reboot is asked for,
// which only matters for a mounted root). 4 and up: errors remain, and the
// filesystem must not be resized.
func fsckPassed(err error) bool {
	var ee *ExitError
	if err == nil {
		return true
	}
	return errors.As(err, &ee) && ee.Err == nil && ee.Code > 0 && ee.Code < 4
}

// VolumeStats implements volume.Host with statfs(2) on a mount of the
// volume: total is blocks*bsize, used is (blocks-bfree)*bsize.
func (b *Backend) VolumeStats(ctx context.Context, id string) (total, used int64, err error) {
	_, v, err := b.lookup(ctx, id)
	if err != nil {
		return 0, 0, err
	}
	mp := v.MountPoint(b.cfg.DevRoot)
	if mp == "" {
		return 0, 0, errdefs.Errorf(errdefs.ErrFailedPrecondition, "volume %s is not mounted; stats need a mount (MountVolume it first)", id)
	}
	return b.k.statFS(mp)
}

// DiskNumber implements volume.Host.
func (b *Backend) DiskNumber(ctx context.Context, id string) (uint32, error) {
	_, v, err := b.lookup(ctx, id)
	if err != nil {
		return 0, err
	}
	return v.Disk.Number, nil
}

// resolvedPath is a caller's path resolved beneath its working directory
// (lookupPath, per OS): resolved is where it leads, as the mount table
// spells paths; handle names the resolved object itself for a system call
// (/proc/self/fd/N on Linux), so a link swapped in since cannot redirect
// it; release frees the handle.
type resolvedPath struct {
	resolved, handle string
	release          func()
}

// VolumeAt implements volume.Host from the mount table: the topmost mount
// at path must be of a partition of a managed disk. path is resolved
// beneath its working directory, following links that stay inside (a
// publish link to the staging path names the staging mount); a link that
// leads out is errdefs.ErrPermissionDenied, never an answer about the
// outside. Nothing mounted there is errdefs.ErrNotFound; something else
// mounted there (a tmpfs, a host disk's whole-disk filesystem) is
// errdefs.ErrFailedPrecondition, so MountVolume never stacks a volume on
// it.
func (b *Backend) VolumeAt(ctx context.Context, p string) (string, error) {
	rp, err := b.lookupPath("mounted at", p)
	if errors.Is(err, errdefs.ErrNotFound) {
		return "", errdefs.Errorf(errdefs.ErrNotFound, "no volume is mounted at %s: it does not exist", p)
	}
	if err != nil {
		return "", err
	}
	defer rp.release()
	s, err := b.scan(ctx, scanTables)
	if err != nil {
		return "", err
	}
	ms := mountinfo.At(s.Mounts, rp.resolved)
	if len(ms) == 0 {
		return "", errdefs.Errorf(errdefs.ErrNotFound, "no volume is mounted at %s: it is not a mount point", p)
	}
	top := ms[len(ms)-1]
	if _, v := s.ByDevice(blocktopo.DevNum{Major: top.Major, Minor: top.Minor}, top.Source, b.cfg.DevRoot); v != nil {
		return v.ID, nil
	}
	return "", errdefs.Errorf(errdefs.ErrFailedPrecondition, "%s is the mount point of %s (%s), which is not a volume the proxy manages", p, top.Source, top.FSType)
}

// ClosestVolume implements volume.Host: from path (or its nearest existing
// ancestor, at most 256 levels up as upstream walks, and never above its
// working directory), resolved beneath the working directory as VolumeAt
// resolves it, take the filesystem holding the result (st_dev). It must be
// a partition of a managed disk; anything else is errdefs.ErrNotFound
// naming the mount that holds the path. A link that leads out is
// errdefs.ErrPermissionDenied.
func (b *Backend) ClosestVolume(ctx context.Context, p string) (string, error) {
	cur, root, err := b.roots.Clean(p)
	if err != nil {
		return "", err
	}
	var rp *resolvedPath
	for i := 0; ; i++ {
		rp, err = b.lookupPath("holding", cur)
		if err == nil {
			break
		}
		if !errors.Is(err, errdefs.ErrNotFound) {
			return "", err
		}
		if cur == root || i == 256 {
			return "", errdefs.Errorf(errdefs.ErrNotFound, "no volume holds %s: %v", p, err)
		}
		cur = path.Dir(cur)
	}
	defer rp.release()
	dev, err := b.k.deviceOf(rp.handle)
	if err != nil {
		return "", fmt.Errorf("stat %s: %w", rp.resolved, err)
	}
	s, err := b.scan(ctx, scanTables)
	if err != nil {
		return "", err
	}
	if _, v := s.ByDevice(dev, "", b.cfg.DevRoot); v != nil {
		return v.ID, nil
	}
	holder := "an unknown filesystem"
	best := ""
	for _, m := range s.Mounts {
		if (blocktopo.DevNum{Major: m.Major, Minor: m.Minor}) == dev && blocktopo.IsWithin(rp.resolved, m.MountPoint) && len(m.MountPoint) >= len(best) {
			best = m.MountPoint
			holder = fmt.Sprintf("%s (%s at %s)", m.Source, m.FSType, m.MountPoint)
		}
	}
	return "", errdefs.Errorf(errdefs.ErrNotFound, "no volume holds %s: the nearest mount above it is %s, not a volume the proxy manages", p, holder)
}

// FlushVolume implements volume.Host: syncfs on a mount of the volume, if
// any, then fsync of the partition device, which also flushes the device's
// write cache. It writes out what is cached and changes no partition: a
// partition the kernel has no device for was written through none, so the
// disk's device is flushed instead (which flushes the write cache too);
// one the kernel has elsewhere than the table says is flushed as it is,
// since its cached pages are what there is to write.
func (b *Backend) FlushVolume(ctx context.Context, id string) error {
	_, v, err := b.lookup(ctx, id)
	if err != nil {
		return err
	}
	dev := v.Disk.Path
	if v.Part != nil {
		dev = filepath.Join(b.cfg.DevRoot, v.Part.Name)
	}
	if mp := v.MountPoint(b.cfg.DevRoot); mp != "" {
		if err := b.k.syncFS(mp); err != nil {
			return err
		}
	}
	return b.k.flushDevice(dev, false)
}
