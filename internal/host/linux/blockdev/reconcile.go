package blockdev

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// This file changes the kernel's view of a disk's partitions (BLKPG), the
// one thing besides writing tables that the backend does to a disk's
// layout. The kernels this runs on scan no partition tables, so the
// backend gives partitions their devices itself; it does so only inside
// calls that change a disk (see scanMode), never while answering a read.

// reconcile makes the kernel's partitions of the disk the table's: it
// first deletes kernel partitions the table does not list, or lists at
// another start or with a smaller size, when nothing uses them (a reused
// /dev/loopN keeps the BLKPG partitions of its previous user when it had
// no LO_FLAGS_PARTSCAN, and one of them in the way makes every BLKPG_ADD
// fail with EBUSY); then it gives every GPT partition a kernel device and
// grows a kernel partition the table has grown. A partition in use is
// left as it is: device refuses a volume whose kernel partition is not
// where the table says. It tells whether it changed anything (the disk
// is then read again) and why some partition could not be given its
// device. The disk's lock is held.
func (b *Backend) reconcile(d *blocktopo.Disk) (changed bool, err error) {
	lbs := d.LogicalBlock
	var errs []error
	deleted := map[int]bool{}
	for _, p := range d.StaleParts(d.Table, true) {
		if b.partitionBusy(d, p) != "" {
			continue
		}
		if err := b.k.deletePartition(d.Path, p.Number); err != nil {
			errs = append(errs, fmt.Errorf("delete stale kernel partition %s: %w", p.Name, err))
			continue
		}
		deleted[p.Number] = true
		changed = true
	}
	for i := range d.Table.Entries {
		e := &d.Table.Entries[i]
		start, length := int64(e.First)*lbs, int64(e.Sectors())*lbs
		kp := d.Part(e.Index)
		if kp != nil && deleted[kp.Number] {
			kp = nil
		}
		var err error
		switch {
		case kp == nil:
			err = b.k.addPartition(d.Path, e.Index, start, length)
		case kp.Start == start && kp.Size < length:
			err = b.k.resizePartition(d.Path, e.Index, start, length)
		default:
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("partition %d: %w", e.Index, err))
			continue
		}
		changed = true
	}
	return changed, errors.Join(errs...)
}

// partitionBusy says why a kernel partition must not be deleted: it is
// held (device-mapper, md), swap, mounted in the proxy's or the host's
// mount namespace, or another program has it open exclusively (an O_EXCL
// open fails). "" means it is free.
func (b *Backend) partitionBusy(d *blocktopo.Disk, p *blocktopo.KernelPartition) string {
	if len(p.Holders) > 0 {
		return "held by " + strings.Join(p.Holders, ", ")
	}
	for _, sw := range d.Swap {
		if sw == p.Name {
			return "in use as swap"
		}
	}
	src := filepath.Join(b.cfg.DevRoot, p.Name)
	for _, m := range append(append([]mountinfo.Mount(nil), d.Mounts...), d.HostMounts...) {
		if blocktopo.MountedFrom(m, p.Dev, src) {
			return "mounted at " + m.MountPoint
		}
	}
	if err := b.k.claimable(src); err != nil {
		return fmt.Sprintf("open by another program (an exclusive open failed: %v)", err)
	}
	return ""
}

// dropStaleParts deletes the kernel partitions of a disk about to get
// table t that t does not describe exactly, before anything is written:
// a stale partition in the way makes the BLKPG_ADD of the new one fail
// with EBUSY. One in use is refused with errdefs.ErrFailedPrecondition
// naming it, and then nothing is deleted.
func (b *Backend) dropStaleParts(d *blocktopo.Disk, t *blocktopo.GPT, op string) error {
	stale := d.StaleParts(t, false)
	for _, p := range stale {
		if why := b.partitionBusy(d, p); why != "" {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition,
				"refusing to %s %s: its kernel partition %s (bytes %d to %d) is not in the partition table on the disk but is %s; stop using it (or delete it: delpart /dev/%s %d) and retry",
				op, d.Describe(), p.Name, p.Start, p.Start+p.Size, why, d.Name, p.Number)
		}
	}
	for _, p := range stale {
		if err := b.k.deletePartition(d.Path, p.Number); err != nil {
			return errdefs.Errorf(errdefs.ErrUnavailable, "%s %s: delete its stale kernel partition %s: %v", op, d.Describe(), p.Name, err)
		}
	}
	return nil
}

// device returns the device node of a volume a call is about to change,
// after its disk was reconciled, checking that the kernel's partition is
// where the table says.
func device(v *blocktopo.Volume, devRoot string) (string, error) {
	if v.Whole() {
		return v.Disk.Path, nil
	}
	lbs := v.Disk.LogicalBlock
	if v.Part == nil {
		msg := fmt.Sprintf("the kernel has no device for %s", v.Describe())
		if v.Disk.PartsErr != nil {
			msg += ": " + v.Disk.PartsErr.Error()
		}
		return "", errdefs.Errorf(errdefs.ErrUnavailable, "%s", msg)
	}
	// A kpartx device's start is unknown (-1); its size matched.
	if v.Part.Start >= 0 && v.Part.Start != int64(v.Entry.First)*lbs {
		return "", errdefs.Errorf(errdefs.ErrFailedPrecondition,
			"kernel partition %s starts at byte %d but the partition table says %d, and it is in use so it cannot be re-added",
			v.Part.Name, v.Part.Start, int64(v.Entry.First)*lbs)
	}
	return filepath.Join(devRoot, v.Part.Name), nil
}

// hostErr refuses an operation on a host disk.
func hostErr(d *blocktopo.Disk, op string) error {
	return errdefs.Errorf(errdefs.ErrFailedPrecondition,
		"refusing to %s %s: it belongs to the host (%s); the proxy only changes disks that hold nothing mounted outside its working directories", op, d.Describe(), d.Host)
}

// offlineErr refuses an operation on an offline disk.
func offlineErr(d *blocktopo.Disk, op string) error {
	return errdefs.Errorf(errdefs.ErrFailedPrecondition,
		"cannot %s %s: the disk is offline; bring it online with SetDiskState first", op, d.Describe())
}

// refuseChange refuses a change (verb, as for writable) to a host or
// offline disk; nil when the disk may be changed.
func refuseChange(d *blocktopo.Disk, verb string) error {
	switch {
	case d.Host != "":
		return hostErr(d, verb)
	case d.Offline:
		return offlineErr(d, verb)
	}
	return nil
}

// tableError explains a partition table that could not be read.
func tableError(d *blocktopo.Disk) error {
	if errors.Is(d.TableErr, blocktopo.ErrDamagedGPT) {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%s: %v; repair it (gdisk, sgdisk -e) or wipe the disk", d.Describe(), d.TableErr)
	}
	return fmt.Errorf("read the partition table of %s: %w", d.Describe(), d.TableErr)
}
