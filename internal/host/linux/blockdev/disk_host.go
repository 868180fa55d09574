package blockdev

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// ListDiskLocations implements disk.Host: SCSI disks (sd, including iSCSI
// and virtio-scsi) report host:channel:target:lun as Adapter, Bus, Target
// and LUNID; other disks (virtio-blk, NVMe, loop) have no such location
// and are left out, as Windows leaves out disks without one.
func (b *Backend) ListDiskLocations(ctx context.Context) (map[uint32]disk.DiskLocation, error) {
	s, err := b.scan(ctx, scanSysfs)
	if err != nil {
		return nil, err
	}
	out := map[uint32]disk.DiskLocation{}
	for _, d := range s.Disks {
		if a := d.SCSI; a != nil {
			out[d.Number] = disk.DiskLocation{Adapter: a.Host, Bus: a.Channel, Target: a.Target, LUNID: a.LUN}
		}
	}
	return out, nil
}

// ListDiskIDs implements disk.Host. Page83 is the device's VPD page 0x83 ID
// (upstream's rule, see page83ID) or its kernel wwid; SerialNumber is its
// serial (virtio serial, VPD page 0x80, NVMe serial). A device that reports
// neither (a loop device) gets its GPT disk GUID as Page83 and, for a loop
// device, its backing file path as SerialNumber, so tests and tools can
// still find it by a stable name. It is a read: the tables are read for
// the GPT disk GUIDs, and no kernel partition is added or removed.
func (b *Backend) ListDiskIDs(ctx context.Context) (map[uint32]disk.DiskIDs, error) {
	s, err := b.scan(ctx, scanTables)
	if err != nil {
		return nil, err
	}
	out := map[uint32]disk.DiskIDs{}
	for _, d := range s.Disks {
		ids := disk.DiskIDs{Page83: d.Page83, SerialNumber: d.Serial}
		if ids.Page83 == "" && ids.SerialNumber == "" {
			if d.Table != nil {
				ids.Page83 = d.Table.DiskGUID.String()
			}
			ids.SerialNumber = d.LoopBacking
		}
		out[d.Number] = ids
	}
	return out, nil
}

// PartitionDisk implements disk.Host. A disk with a GPT that has a data
// partition (any but Microsoft Reserved) is left alone, after making sure
// the kernel has a device for each of its partitions; so is a disk holding
// a whole-disk filesystem (it is a volume already, see wholeVolume).
// Otherwise the disk
// gets a GPT (a new one with a random disk GUID, or the existing empty one)
// and one partition of type Linux filesystem with a random unique GUID,
// spanning the largest free extent, start and end aligned to 1 MiB. The
// table is written directly (no re-read, which would drop partitions on
// this kernel) and the partition is announced with BLKPG.
//
// The layout is read before the disk's state matters: an offline disk
// with a data partition or a whole-disk filesystem is left alone, offline. Any other offline disk is
// brought online first (SetDiskOnline), then handled as below.
//
// It refuses, with errdefs.ErrFailedPrecondition, a host disk, a disk
// with anything mounted, a damaged GPT, an MBR partition table
// and a whole disk holding a filesystem or other signature: a disk whose
// content it cannot account for is never overwritten.
func (b *Backend) PartitionDisk(ctx context.Context, n uint32) error {
	// The disk's lock for the decision and the write, so no scan reads
	// the table half written and no other partitioning interleaves. Only
	// this disk is read: another that does not answer cannot hold it up.
	// PartitionDisk reconciles: it promises a usable partition, so a
	// partitioned disk whose partitions the kernel lacks gets them here.
	d, err := b.lockDisk(ctx, n, true)
	if err != nil {
		return err
	}
	defer d.unlock()
	if d.Host != "" {
		return hostErr(d.Disk, "partition")
	}
	if d.Offline && !d.Partitioned() {
		// The layout is read first, as upstream reads MSFT_Disk and
		// MSFT_Partition while the disk is offline: gcp-pd, aws-ebs and
		// vsphere partition before SetDiskState(online), and re-staging
		// meets a disk NodeUnstage took offline. Only a disk that may need
		// writing (or, being an offline SCSI disk, cannot be read) is
		// brought online first, as the Windows backend does.
		if err := b.setOnlineLocked(d.Disk, true); err != nil {
			return fmt.Errorf("bring %s online to partition it: %w", d.Describe(), err)
		}
		again, err := b.readDiskLocked(n, d.Name, true)
		if err != nil {
			return err
		}
		again.unlock = d.unlock
		if d = again; d.Offline {
			return offlineErr(d.Disk, "partition")
		}
	}
	if d.TableErr != nil {
		return tableError(d.Disk)
	}
	if d.WholeVolume() != "" || d.MBRPartitioned() {
		// A whole-disk filesystem (aws-ebs, gce-pd, azuredisk on Linux):
		// already a volume, as upstream counts a disk with a partition.
		// Writing a table would destroy it. An MBR disk with partitions
		// is initialised and partitioned in upstream's sense too.
		return nil
	}
	if d.Table != nil && blocktopo.HasDataPartition(d.Table) {
		if d.reconcileErr != nil {
			return errdefs.Errorf(errdefs.ErrUnavailable, "%s is partitioned, but the kernel refused a device for its partitions: %v", d.Describe(), d.reconcileErr)
		}
		return nil
	}
	if why := d.InUse(); why != "" {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "refusing to partition %s: %s", d.Describe(), why)
	}
	if d.Table == nil {
		switch {
		case d.Content.Type != "":
			return errdefs.Errorf(errdefs.ErrFailedPrecondition,
				"refusing to partition %s: the whole disk holds %s (no partition table); wipe it first if its data is not needed", d.Describe(), d.Content.Type)
		case d.MBR != blocktopo.MBRNone:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition,
				"refusing to partition %s: it has a protective MBR but no readable GPT; repair the GPT (gdisk) or wipe the disk", d.Describe())
		}
	}
	return b.createPartition(d.Disk)
}

// createPartition writes the table with one new data partition and makes
// the kernel see it. The disk's lock is held.
func (b *Backend) createPartition(d *blocktopo.Disk) (err error) {
	lbs := d.LogicalBlock
	t := d.Table.Clone() // the snapshot's table stays as it was read
	// Kernel partitions the table does not list (a reused device's
	// previous user's) would make the BLKPG_ADD below fail with EBUSY.
	// A multipath map has none: its partitions are kpartx's.
	if d.DMUUID == "" {
		if err := b.dropStaleParts(d, t, "partition"); err != nil {
			return err
		}
	}
	fresh := t == nil
	if fresh {
		g, err := blocktopo.RandomGUID()
		if err != nil {
			return err
		}
		t = blocktopo.NewGPT(lbs, g)
	}
	first, last, ok := t.LargestFree(uint64(d.Size / lbs))
	if !ok {
		return errdefs.Errorf(errdefs.ErrOutOfRange, "%s (%d bytes) has no free 1 MiB-aligned space for a partition", d.Describe(), d.Size)
	}
	index, ok := t.FreeIndex()
	if !ok {
		return errdefs.Errorf(errdefs.ErrOutOfRange, "the partition table of %s has no free entry", d.Describe())
	}
	id, err := blocktopo.RandomGUID()
	if err != nil {
		return err
	}
	t.Entries = append(t.Entries, blocktopo.GPTEntry{Index: index, Type: blocktopo.TypeLinuxData, ID: id, First: first, Last: last, Name: "csi-node-proxy"})
	// O_EXCL on a block device fails with EBUSY while anything (a mount, a
	// device-mapper table) holds it: a last guard against rewriting a disk
	// in use that the checks above missed.
	f, err := os.OpenFile(d.Path, os.O_RDWR|os.O_EXCL, 0)
	if err != nil {
		return fmt.Errorf("open %s to write its partition table: %w", d.Describe(), err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s after writing its partition table: %w", d.Describe(), cerr)
		}
	}()
	if fresh {
		old := make([]byte, lbs)
		if _, err := f.ReadAt(old, 0); err != nil {
			return fmt.Errorf("read sector 0 of %s: %w", d.Describe(), err)
		}
		if _, err := f.WriteAt(blocktopo.ProtectiveMBR(old, lbs, uint64(d.Size/lbs)), 0); err != nil {
			return fmt.Errorf("write the protective MBR of %s: %w", d.Describe(), err)
		}
	}
	if err := blocktopo.WriteTable(f, t, d.Size); err != nil {
		return fmt.Errorf("write the partition table of %s: %w", d.Describe(), err)
	}
	if d.DMUUID != "" {
		// Device-mapper takes no BLKPG partitions: kpartx gives the
		// partition a device when multipathd's udev rules see the table
		// change (closing the disk after writing raises that event).
		// Until then calls that need the device are Unavailable.
		return nil
	}
	start, length := int64(first)*lbs, int64(last-first+1)*lbs
	if err := b.k.addPartition(d.Path, index, start, length); err != nil {
		return errdefs.Errorf(errdefs.ErrUnavailable, "%s: the partition table was written, but the kernel refused partition %d (%v); PartitionDisk again retries", d.Describe(), index, err)
	}
	return nil
}

// Rescan implements disk.Host. Every call reads sysfs afresh anyway, so
// what Rescan adds is asking the buses to look: each SCSI host scans for
// new LUNs ("- - -" to scsi_host/*/scan), each SCSI disk re-reads its
// capacity (device/rescan) and each NVMe controller rescans its
// namespaces. virtio-blk disks report size changes by themselves; a loop
// device's size changes only when its owner calls LOOP_SET_CAPACITY, which
// is not the proxy's to do. Finally every disk's GPT partitions get kernel
// devices (BLKPG): Rescan is the call that makes the kernel's partitions
// of every disk the partition tables', which reads never do. Buses that
// refuse a scan (some do not support it) are skipped; only a refusal for
// lack of privilege is an error.
func (b *Backend) Rescan(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var writes []string
	for _, glob := range []string{"class/scsi_host/*/scan", "class/nvme/*/rescan_controller"} {
		m, _ := filepath.Glob(filepath.Join(b.cfg.SysfsRoot, filepath.FromSlash(glob)))
		writes = append(writes, m...)
	}
	s, err := b.scan(ctx, scanSysfs)
	if err != nil {
		return err
	}
	for _, d := range s.Disks {
		if d.SCSI != nil {
			writes = append(writes, filepath.Join(b.cfg.SysfsRoot, "block", d.Name, "device", "rescan"))
		}
	}
	for _, w := range writes {
		val := "1"
		if filepath.Base(w) == "scan" {
			val = "- - -" // every channel, target and LUN
		}
		if err := writeAttr(w, val); errors.Is(err, fs.ErrPermission) {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "rescan: cannot write %s: %v (the proxy must run as root)", w, err)
		}
	}
	_, err = b.scan(ctx, scanReconcile)
	return err
}

// writeAttr writes a sysfs attribute.
func writeAttr(path, val string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(val)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// DiskSize implements disk.Host: the size sysfs reports.
func (b *Backend) DiskSize(ctx context.Context, n uint32) (int64, error) {
	d, err := b.sysfsDisk(ctx, n)
	if err != nil {
		return 0, err
	}
	return d.Size, nil
}

// SetDiskOnline implements disk.Host. Linux has no Windows-style disk
// offline state, so the backend maps it (docs/linux-block.md): a SCSI disk
// goes to device state "offline" (the kernel fails all I/O to it) and back
// to "running"; any other disk gets the kernel's read-only flag (BLKROSET),
// which its partitions follow, and the backend refuses to partition,
// format, mount or resize it while the flag is set. Taking a disk offline
// first flushes it, and is refused while anything on it is mounted.
// Bringing a disk online (even one already online) also gives it new
// identities when it is an unmounted clone of another attached disk (see
// reidentifyLocked).
func (b *Backend) SetDiskOnline(ctx context.Context, n uint32, online bool) error {
	var others *blocktopo.Snapshot
	if online {
		// Every disk's table, to find identities a clone shares; read
		// before taking this disk's lock, which the scan would wait for.
		// The other disks are only read, never reconciled.
		var err error
		if others, err = b.scan(ctx, scanTables); err != nil {
			return err
		}
	}
	// Bringing a disk online reconciles it: it is where a driver's
	// staging starts, and the volumes on it must have devices. Taking it
	// offline needs none (its partitions are about to be read-only).
	d, err := b.lockDisk(ctx, n, online)
	if err != nil {
		return err
	}
	defer d.unlock()
	if err := b.setOnlineLocked(d.Disk, online); err != nil || !online {
		return err
	}
	return b.reidentifyLocked(others, d.Disk)
}

// reidentifyLocked gives a disk that shares its GPT disk GUID or a
// partition GUID with another attached disk (a snapshot restore or a PVC
// clone is a byte copy) new random GUIDs, as Windows gives a disk whose
// signature collides a new one when it comes online. Only a disk with
// nothing mounted, not the host's, is changed: the one in use keeps its
// identity. The partitions keep their places, so their kernel devices
// stay as they are. The disk's lock is held; s holds the other disks.
func (b *Backend) reidentifyLocked(s *blocktopo.Snapshot, d *blocktopo.Disk) error {
	if d.Table == nil || d.TableErr != nil || d.InUse() != "" || d.Offline {
		return nil
	}
	ids := map[blocktopo.GUID]bool{d.Table.DiskGUID: true}
	for _, e := range d.Table.Entries {
		ids[e.ID] = true
	}
	var twin *blocktopo.Disk
	for _, o := range s.Disks {
		if o.Number == d.Number || o.Table == nil {
			continue
		}
		if ids[o.Table.DiskGUID] {
			twin = o
		}
		for _, e := range o.Table.Entries {
			if ids[e.ID] {
				twin = o
			}
		}
	}
	if twin == nil {
		return nil
	}
	g, err := blocktopo.RandomGUID()
	if err != nil {
		return err
	}
	t := d.Table.Clone()
	t.DiskGUID = g
	for i := range t.Entries {
		if t.Entries[i].ID, err = blocktopo.RandomGUID(); err != nil {
			return err
		}
	}
	// O_EXCL: nothing may hold the disk while its identities change.
	f, err := os.OpenFile(d.Path, os.O_RDWR|os.O_EXCL, 0)
	if err != nil {
		return fmt.Errorf("open %s to give it new identities (it is a clone of %s): %w", d.Describe(), twin.Describe(), err)
	}
	err = blocktopo.WriteTable(f, t, d.Size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write new identities to %s (a clone of %s): %w", d.Describe(), twin.Describe(), err)
	}
	return nil
}

// setOnlineLocked is SetDiskOnline on a scanned disk; its lock is held.
func (b *Backend) setOnlineLocked(d *blocktopo.Disk, online bool) error {
	if online == !d.Offline {
		return nil
	}
	if d.Host != "" {
		return hostErr(d, "change the state of")
	}
	state := filepath.Join(b.cfg.SysfsRoot, "block", d.Name, "device", "state")
	if !online {
		if all := append(append([]mountinfo.Mount(nil), d.Mounts...), d.HostMounts...); len(all) > 0 {
			m := all[0]
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "cannot take %s offline: %s is mounted at %s; unmount it first", d.Describe(), m.Source, m.MountPoint)
		}
		if err := b.k.flushDevice(d.Path, true); err != nil {
			return fmt.Errorf("flush %s before taking it offline: %w", d.Describe(), err)
		}
		b.mu.Lock()
		delete(b.deviceReadOnly, d.Number)
		b.mu.Unlock()
		if d.SCSI != nil {
			return writeAttr(state, "offline")
		}
		return b.k.setReadOnly(d.Path, true)
	}
	if d.SCSI != nil {
		return writeAttr(state, "running")
	}
	if err := b.k.setReadOnly(d.Path, false); err != nil {
		return err
	}
	// A device that is read-only by itself (a read-only attachment) keeps
	// the flag: it is as online as it can be.
	if ro, err := blocktopo.ReadAttr(filepath.Join(b.cfg.SysfsRoot, "block", d.Name), "ro"); err == nil && ro == "1" {
		b.mu.Lock()
		b.deviceReadOnly[d.Number] = true
		b.mu.Unlock()
	}
	return nil
}

// IsDiskOnline implements disk.Host; see SetDiskOnline for the mapping.
func (b *Backend) IsDiskOnline(ctx context.Context, n uint32) (bool, error) {
	d, err := b.sysfsDisk(ctx, n)
	if err != nil {
		return false, err
	}
	return !d.Offline, nil
}
