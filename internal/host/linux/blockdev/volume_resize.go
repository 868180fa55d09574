package blockdev

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
)

// This file answers how large a volume is and may grow (VolumeSizes) and
// grows it: the GPT entry, the kernel's partition, then the filesystem.

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
// disk's lock, so the table it rewrites is the current one, and
// reconciles it: growing changes the disk's partitions anyway, and a
// stale partition in the way would make the BLKPG below fail.
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
