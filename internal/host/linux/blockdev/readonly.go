package blockdev

import (
	"context"
	"path/filepath"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
)

// The read-only attribute of a disk (disk.Host's SetDiskReadOnly and
// IsDiskReadOnly) is the kernel's read-only flag of the whole-disk block
// device: BLKROSET sets it, sysfs "ro" (BLKROGET's answer) reads it, and
// the partitions follow it. On a SCSI disk it is independent of the
// online state (device/state); on any other disk this backend already uses
// the flag to mean offline (SetDiskOnline), so there an online disk that
// is read-only is remembered in deviceReadOnly, as one read-only by
// itself is, and the flag of an offline one is not the attribute.

// SetDiskReadOnly implements disk.Host.
func (b *Backend) SetDiskReadOnly(ctx context.Context, n uint32, readOnly bool) error {
	d, err := b.lockDisk(ctx, n, false)
	if err != nil {
		return err
	}
	defer d.unlock()
	if d.Host != "" {
		return hostErr(d.Disk, "change the read-only attribute of")
	}
	if d.Offline && d.SCSI == nil {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition,
			"cannot change the read-only attribute of %s while it is offline: on this backend a non-SCSI disk's offline state is its kernel read-only flag; bring it online with SetDiskState first", d.Describe())
	}
	if d.ReadOnly == readOnly {
		return nil // upstream's semantics: asking for what the disk has changes nothing
	}
	if readOnly {
		// Remember it first, so a scan in between does not see an online
		// disk with the flag as offline.
		b.setDeviceReadOnly(d.Number, true)
	}
	if err := b.k.setReadOnly(d.Path, readOnly); err != nil {
		if readOnly {
			b.setDeviceReadOnly(d.Number, false)
		}
		return err
	}
	if readOnly {
		return nil
	}
	// Clearing our flag leaves a device that is read-only by itself (a
	// read-only attachment, losetup -r) read-only: say so rather than
	// report success.
	ro, err := blocktopo.ReadAttr(filepath.Join(b.cfg.SysfsRoot, "block", d.Name), "ro")
	if err != nil {
		return err
	}
	if ro == "1" {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition,
			"cannot clear the read-only attribute of %s: the device itself is read-only (a read-only attachment)", d.Describe())
	}
	b.setDeviceReadOnly(d.Number, false)
	return nil
}

// IsDiskReadOnly implements disk.Host. An offline non-SCSI disk reports
// false: its flag stands for offline (see above).
func (b *Backend) IsDiskReadOnly(ctx context.Context, n uint32) (bool, error) {
	d, err := b.sysfsDisk(ctx, n)
	if err != nil {
		return false, err
	}
	if d.SCSI == nil && d.Offline {
		return false, nil
	}
	return d.ReadOnly, nil
}

// setDeviceReadOnly records (or forgets) that online disk n is read-only.
func (b *Backend) setDeviceReadOnly(n uint32, readOnly bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if readOnly {
		b.deviceReadOnly[n] = true
	} else {
		delete(b.deviceReadOnly, n)
	}
}
