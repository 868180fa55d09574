package blockdev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
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
// a GPT has no volumes. It is a read (the policy asks it too): the
// volumes are the table's, whether or not the kernel has partitions for
// them, and none is given one.
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
