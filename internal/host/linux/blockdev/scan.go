package blockdev

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// This file reads the node for the backend's calls: package blocktopo
// builds the snapshot; what is the backend's is where the mount tables
// come from, the per-disk locks a read of a partition table takes, the
// bounded wait for a disk that does not answer, and, for calls that change
// a disk, reconciling the kernel's partitions under the lock
// (reconcile.go).

// scanMode says how much a scan reads, and whether it may change the
// kernel's partitions.
type scanMode int

const (
	// scanSysfs reads sysfs and the mount table only.
	scanSysfs scanMode = iota
	// scanTables also reads each disk's partition table (or whole-disk
	// signature) and changes nothing: every read (a listing, a lookup by
	// ID, a policy question) scans so. A disk whose kernel partitions
	// differ from its table is reported as the table says; what needs a
	// partition's content then reads the disk at the table's offsets (see
	// Backend.probeContent).
	scanTables
	// scanReconcile reads the tables as scanTables does and gives every
	// GPT partition of a disk that is not the host's a kernel device
	// (BLKPG, see reconcile): this kernel scans no partition tables
	// itself, and a disk partitioned before the proxy started, or whose
	// BLKPG partitions were dropped, must still work. Only Rescan scans
	// every disk so; the other calls that change a disk reconcile that
	// disk alone under its lock (lockDisk).
	scanReconcile
)

// scan reads the state of every disk: sysfs and the mount tables, and
// with scanTables every disk's partition table (see lockedReader).
func (b *Backend) scan(ctx context.Context, mode scanMode) (*blocktopo.Snapshot, error) {
	return b.read(ctx, mode, nil)
}

// scanDisk is scan for a call about disk n: only its partition table is
// read, so a disk that does not answer affects only the calls about it.
func (b *Backend) scanDisk(ctx context.Context, n uint32, mode scanMode) (*blocktopo.Snapshot, error) {
	return b.read(ctx, mode, func(d *blocktopo.Disk) bool { return d.Number == n })
}

// read reads sysfs and the mount tables, and with scanTables or
// scanReconcile the partition tables of the disks tables selects (nil:
// all), each under its disk's lock with a bounded wait (lockedReader).
func (b *Backend) read(ctx context.Context, mode scanMode, tables func(*blocktopo.Disk) bool) (*blocktopo.Snapshot, error) {
	src, err := b.source()
	if err != nil {
		return nil, err
	}
	if mode != scanSysfs {
		src.Devices = &lockedReader{b: b, reconcile: mode == scanReconcile}
		src.Tables = tables
	}
	return blocktopo.Read(ctx, src)
}

// source gathers what blocktopo.Read needs besides sysfs and the devices:
// the configuration, the mount tables, swap, and the backend's numbering
// and memory of disks read-only by themselves.
func (b *Backend) source() (blocktopo.Source, error) {
	mounts, err := b.k.mounts()
	if err != nil {
		return blocktopo.Source{}, fmt.Errorf("read the mount table: %w", err)
	}
	swaps, err := b.k.swapDevices()
	if err != nil {
		return blocktopo.Source{}, fmt.Errorf("read the swap devices: %w", err)
	}
	hostMounts, err := b.hostMountTable()
	if err != nil {
		return blocktopo.Source{}, err
	}
	b.mu.Lock()
	readOnly := maps.Clone(b.deviceReadOnly)
	b.mu.Unlock()
	return blocktopo.Source{
		SysfsRoot:      b.cfg.SysfsRoot,
		DevRoot:        b.cfg.DevRoot,
		DiskFilter:     b.cfg.DiskFilter,
		MountRoots:     b.cfg.MountRoots,
		Mounts:         mounts,
		HostMounts:     hostMounts,
		Swaps:          swaps,
		Numbers:        b.numbers,
		DeviceReadOnly: readOnly,
	}, nil
}

// hostMountTable reads Config.HostMountTable (blocktopo.Read keeps the
// mounts in it the proxy's own table does not have). The default table
// that cannot be read (no such process view, no permission) counts as
// empty; an explicit one is an error.
func (b *Backend) hostMountTable() ([]mountinfo.Mount, error) {
	if b.cfg.HostMountTable == "none" {
		return nil, nil
	}
	ms, err := mountinfo.ReadFile(b.cfg.HostMountTable)
	if err != nil {
		if b.cfg.HostMountTable == DefaultHostMountTable {
			return nil, nil
		}
		return nil, fmt.Errorf("read the host's mount table: %w", err)
	}
	return ms, nil
}

// lockedReader is the backend's blocktopo.DeviceReader. It reads the
// partition tables of the disks, each in its own goroutine under the
// disk's lock, and waits at most Config.DiskReadTimeout for them. A disk
// that has not answered by then (a passive ALUA path whose reads hang, or
// a long operation holding its lock) gets a layout error wrapping
// errdefs.ErrUnavailable and the call goes on without it; while a read of
// it is stuck past the timeout, later scans do not start another and do
// not wait, so a disk that does not answer costs each call at most one
// timeout, and only calls that need every disk.
type lockedReader struct {
	b *Backend
	// reconcile also gives each disk's partitions kernel devices, under
	// the lock, once its table is read: Rescan's scan (scanReconcile).
	reconcile bool
}

// ReadLayouts implements blocktopo.DeviceReader.
func (r *lockedReader) ReadLayouts(ctx context.Context, ds []*blocktopo.Disk) (map[string]blocktopo.Layout, error) {
	b := r.b
	timeout := b.cfg.DiskReadTimeout
	type result struct {
		name string
		l    blocktopo.Layout
	}
	out := map[string]blocktopo.Layout{}
	results := make(chan result, len(ds))
	// Cancelled when the wait ends: reads still queued for a disk's lock
	// give up instead of piling up behind one that does not return.
	readCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pending := map[string]*blocktopo.Disk{}
	for _, d := range ds {
		lk := b.diskLock(d.Name)
		if held := lk.heldFor(); held > timeout {
			out[d.Name] = blocktopo.Layout{Err: notAnswering(d, held)}
			continue
		}
		pending[d.Name] = d
		c := *d // the goroutine's own copy: Read may give up on it and go on
		go func() {
			if err := lk.lock(readCtx); err != nil {
				return
			}
			defer lk.unlock()
			l := b.opener().ReadLayout(&c)
			if r.reconcile && l.Table != nil && c.Host == "" && c.DMUUID == "" {
				c.Table = l.Table // the disk with its table, for reconcile alone
				// Rescan answers for the buses' scans, not for each
				// disk's partitions: a disk whose BLKPG fails is
				// reported by the calls that need its partitions.
				_, _ = b.reconcile(&c)
			}
			results <- result{c.Name, l}
		}()
	}
	if len(pending) == 0 {
		return out, nil
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for len(pending) > 0 {
		select {
		case res := <-results:
			out[res.name] = res.l
			delete(pending, res.name)
		case <-timer.C:
			for name, d := range pending {
				out[name] = blocktopo.Layout{Err: notAnswering(d, timeout)}
			}
			return out, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return out, nil
}

// opener reads disks through the kernel seam, in the calling goroutine.
func (b *Backend) opener() blocktopo.DeviceOpener {
	return func(path string) (blocktopo.Device, error) { return b.k.openDevice(path) }
}

// notAnswering explains a disk whose partition table could not be read in
// time.
func notAnswering(d *blocktopo.Disk, waited time.Duration) error {
	return errdefs.Errorf(errdefs.ErrUnavailable,
		"%s did not answer a read of its partition table within %s (a passive or failed path, or a long operation on it); calls about other disks are not held up by it, try again later",
		d.Describe(), waited.Round(time.Millisecond))
}

// knownLayouts is a blocktopo.DeviceReader that answers from layouts read
// before: a disk read again under its lock after BLKPG changed its
// kernel partitions, whose table the lock kept as it was.
type knownLayouts map[string]blocktopo.Layout

// ReadLayouts implements blocktopo.DeviceReader.
func (k knownLayouts) ReadLayouts(context.Context, []*blocktopo.Disk) (map[string]blocktopo.Layout, error) {
	return k, nil
}

// lockedDisk is a disk read under its lock (lockDisk).
type lockedDisk struct {
	*blocktopo.Disk
	// s is the snapshot the disk was read in; only this disk's table was
	// read.
	s *blocktopo.Snapshot
	// reconcileErr is why some GPT partition has no kernel device where
	// the table says: BLKPG refused it, or kpartx has not made a
	// multipath map's (blocktopo.Disk.PartsErr).
	reconcileErr error
	// unlock releases the disk's lock.
	unlock func()
}

// readDiskLocked reads disk n again, table included, in the calling
// goroutine, and with reconcile gives its partitions kernel devices: the
// caller holds the disk's lock (named name), so nothing changes the table
// meanwhile. The disk must still have that name.
func (b *Backend) readDiskLocked(n uint32, name string, reconcile bool) (*lockedDisk, error) {
	read := func(devices blocktopo.DeviceReader) (*blocktopo.Snapshot, *blocktopo.Disk, error) {
		src, err := b.source()
		if err != nil {
			return nil, nil, err
		}
		src.Devices = devices
		src.Tables = func(d *blocktopo.Disk) bool { return d.Number == n }
		s, err := blocktopo.Read(context.Background(), src)
		if err != nil {
			return nil, nil, err
		}
		d, err := s.Disk(n, b.cfg.DiskFilter)
		if err != nil {
			return nil, nil, err
		}
		if d.Name != name {
			return nil, nil, errdefs.Errorf(errdefs.ErrNotFound, "disk %d is gone (it was %s)", n, name)
		}
		return s, d, nil
	}
	s, d, err := read(b.opener())
	if err != nil {
		return nil, err
	}
	ld := &lockedDisk{Disk: d, s: s, reconcileErr: d.PartsErr}
	if !reconcile || d.Table == nil || d.Host != "" || d.DMUUID != "" {
		return ld, nil
	}
	changed, err := b.reconcile(d)
	ld.reconcileErr = err
	if changed {
		// The kernel's partitions changed; the table did not.
		known := knownLayouts{name: {Table: d.Table, Err: d.TableErr, Content: d.Content, MBR: d.MBR}}
		if ld.s, ld.Disk, err = read(known); err != nil {
			return nil, fmt.Errorf("read %s again after giving its partitions kernel devices: %w", name, err)
		}
	}
	return ld, nil
}

// sysfsDisk finds disk n (among those the disk filter admits) in a scan
// of sysfs alone: what the calls that need only the disk's sysfs facts
// (size, online, read-only) and lockDisk's first look read.
func (b *Backend) sysfsDisk(ctx context.Context, n uint32) (*blocktopo.Disk, error) {
	s, err := b.scan(ctx, scanSysfs)
	if err != nil {
		return nil, err
	}
	return s.Disk(n, b.cfg.DiskFilter)
}

// lockDisk finds disk n by sysfs alone, takes its lock (giving up when ctx
// ends), and reads it again under the lock, with reconcile giving its
// partitions kernel devices (see reconcile); the caller releases the lock
// with the result's unlock. Only calls that change the disk lock it.
func (b *Backend) lockDisk(ctx context.Context, n uint32, reconcile bool) (*lockedDisk, error) {
	d, err := b.sysfsDisk(ctx, n)
	if err != nil {
		return nil, err
	}
	lk := b.diskLock(d.Name)
	if err := lk.lock(ctx); err != nil {
		return nil, fmt.Errorf("wait for other calls about %s: %w", d.Describe(), err)
	}
	ld, err := b.readDiskLocked(n, d.Name, reconcile)
	if err != nil {
		lk.unlock()
		return nil, err
	}
	ld.unlock = lk.unlock
	return ld, nil
}

// DiskNumberOf returns the number the disk group gives the block device
// name ("sdb"): its diskseq, or the number this backend keeps for a disk
// without one (blocktopo.Numbering). The iSCSI backend numbers its LUNs'
// disks with it, so that GetTargetDisks names the disks the disk group
// answers to on every kernel, 5.15 or not. A device the backend does not
// manage (filtered out, or gone) is errdefs.ErrNotFound.
func (b *Backend) DiskNumberOf(name string) (uint32, error) {
	s, err := b.scan(context.Background(), scanSysfs)
	if err != nil {
		return 0, err
	}
	for _, d := range s.Disks {
		if d.Name == name {
			return d.Number, nil
		}
	}
	return 0, errdefs.Errorf(errdefs.ErrNotFound, "block device %q is not a disk of this node (disks matching %v)", name, b.cfg.DiskFilter)
}
