package simulated

import (
	"context"
	"sort"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
)

// diskView is the disk group backend.
type diskView struct{ h *Host }

// ListDiskLocations implements disk.Host: every disk with a location,
// reported as Windows reports it (see reportedLocation).
func (v diskView) ListDiskLocations(ctx context.Context) (map[uint32]disk.DiskLocation, error) {
	return read(ctx, v.h, func(w *world) (map[uint32]disk.DiskLocation, error) {
		out := map[uint32]disk.DiskLocation{}
		for n, d := range w.disks {
			if l, ok := d.reportedLocation(); ok {
				out[n] = l
			}
		}
		return out, nil
	})
}

// reportedLocation is the location ListDiskLocations reports for d, with
// upstream's parse of MSFT_Disk.Location, which the Windows backend
// reproduces. A SCSI disk's Location ("Integrated : Adapter 1 : Port 0 :
// Target 0 : LUN 3") gives Adapter, Target and LUNID, and Bus "" because
// the parse ignores "Port N"; the configured bus number only shows in
// ListDisks. An NVMe disk's Location ("Integrated : Bus 2 : Device 0 :
// Function 0 : Adapter 0") gives Adapter "0" and Bus the PCI bus number,
// with Target and LUNID "", and, in the model only, its namespace ID and
// product as the Windows backend reads them from the device instance ID.
// ok is false for a disk without a location.
func (d *diskState) reportedLocation() (l disk.DiskLocation, ok bool) {
	switch loc := d.location; {
	case loc == nil:
		return disk.DiskLocation{}, false
	case d.nvme:
		return disk.DiskLocation{Adapter: "0", Bus: loc[1], NVMeNamespaceID: d.nsid, Product: d.product}, true
	default:
		return disk.DiskLocation{Adapter: loc[0], Target: loc[2], LUNID: loc[3]}, true
	}
}

// ListDiskIDs implements disk.Host: every disk, with empty IDs where the
// disk has none.
func (v diskView) ListDiskIDs(ctx context.Context) (map[uint32]disk.DiskIDs, error) {
	return read(ctx, v.h, func(w *world) (map[uint32]disk.DiskIDs, error) {
		out := map[uint32]disk.DiskIDs{}
		for n, d := range w.disks {
			out[n] = disk.DiskIDs{Page83: d.page83, SerialNumber: d.serial}
		}
		return out, nil
	})
}

// PartitionDisk implements disk.Host like upstream: the layout is read
// first, and it is readable while the disk is offline (upstream reads
// MSFT_Disk.PartitionStyle and MSFT_Partition), so a disk that has a data
// partition is left alone, online or not: gcp-pd, aws-ebs and vsphere call
// PartitionDisk before SetDiskState(online) and take the disk offline in
// NodeUnstage, so re-staging meets an offline, partitioned disk. A disk
// that needs a change is brought online first, as the Windows backend
// does before MSFT_Disk.Initialize; then a RAW disk gets GPT and one data
// partition from 1 MiB to the last 1 MiB boundary before the backup GPT,
// holding a new RAW volume.
func (v diskView) PartitionDisk(ctx context.Context, n uint32) error {
	return v.h.do(ctx, func(w *world) error {
		d, err := w.disk(n)
		if err != nil {
			return err
		}
		if d.hasDataPartition() {
			return nil // already done: kubelet retries NodeStage
		}
		d.online = true
		return w.partition(d)
	})
}

// hasDataPartition tells whether the disk has a GPT with a basic data
// partition, which is what PartitionDisk would create.
func (d *diskState) hasDataPartition() bool {
	if !d.gpt {
		return false
	}
	for _, p := range d.parts {
		if p.kind == partBasic {
			return true
		}
	}
	return false
}

// Rescan implements disk.Host. The simulated host sees changes at once, so
// it only counts the call (RescanCount).
func (v diskView) Rescan(ctx context.Context) error {
	return v.h.do(ctx, func(w *world) error {
		w.rescans++
		return nil
	})
}

// DiskSize implements disk.Host; it works on offline disks too.
func (v diskView) DiskSize(ctx context.Context, n uint32) (int64, error) {
	var size int64
	err := v.onDisk(ctx, n, func(d *diskState) error {
		size = d.size
		return nil
	})
	return size, err
}

// SetDiskOnline implements disk.Host. Like Windows, it refuses to take the
// system disk offline.
func (v diskView) SetDiskOnline(ctx context.Context, n uint32, online bool) error {
	return v.onDisk(ctx, n, func(d *diskState) error {
		if !online && d.system {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "disk %d is the system disk and cannot be taken offline", n)
		}
		d.online = online
		return nil
	})
}

// IsDiskOnline implements disk.Host.
func (v diskView) IsDiskOnline(ctx context.Context, n uint32) (bool, error) {
	var online bool
	err := v.onDisk(ctx, n, func(d *diskState) error {
		online = d.online
		return nil
	})
	return online, err
}

// SetDiskReadOnly implements disk.Host. Like Windows (MSFT_Disk
// SetAttributes), it works on online and offline disks; setting the
// attribute the disk has changes nothing.
func (v diskView) SetDiskReadOnly(ctx context.Context, n uint32, readOnly bool) error {
	return v.onDisk(ctx, n, func(d *diskState) error {
		d.readOnly = readOnly
		return nil
	})
}

// IsDiskReadOnly implements disk.Host.
func (v diskView) IsDiskReadOnly(ctx context.Context, n uint32) (bool, error) {
	var readOnly bool
	err := v.onDisk(ctx, n, func(d *diskState) error {
		readOnly = d.readOnly
		return nil
	})
	return readOnly, err
}

// SetDiskReadOnlyAttribute sets or clears disk n's read-only attribute
// from outside, as a hypervisor re-attaching a disk read-only does
// (kubernetes-csi/csi-proxy#437): for tests of what a driver does next.
func (h *Host) SetDiskReadOnlyAttribute(n uint32, readOnly bool) error {
	return h.locked(func(w *world) error {
		d, err := w.disk(n)
		if err != nil {
			return err
		}
		d.readOnly = readOnly
		return nil
	})
}

// onDisk runs f on disk n under the world's lock, the shape of every call
// that acts on one attached disk and needs nothing else of the world: a
// missing disk is answered by world.disk in one wording for them all.
func (v diskView) onDisk(ctx context.Context, n uint32, f func(d *diskState) error) error {
	return v.h.do(ctx, func(w *world) error {
		d, err := w.disk(n)
		if err != nil {
			return err
		}
		return f(d)
	})
}

// AddDisk attaches a new disk, as a hypervisor hot-adding one would, and
// returns its number (spec.Number, or the lowest free number). A number or
// drive letter in use is errdefs.ErrAlreadyExists; a bad spec
// errdefs.ErrInvalidArgument.
func (h *Host) AddDisk(spec DiskSpec) (uint32, error) {
	var n uint32
	err := h.locked(func(w *world) (err error) {
		n, err = w.attachNew(spec)
		return err
	})
	return n, err
}

// RemoveDisk detaches disk n, as a hypervisor hot-removing it would. Its
// volumes disappear with it; their mount points stay behind, dangling, and
// its drive letters are released. The system disk and disks an iSCSI
// session provides (use DisconnectTarget) cannot be removed
// (errdefs.ErrFailedPrecondition).
func (h *Host) RemoveDisk(n uint32) error {
	return h.locked(func(w *world) error {
		d, err := w.disk(n)
		if err != nil {
			return err
		}
		switch {
		case d.system:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "disk %d is the system disk and cannot be removed", n)
		case d.target != nil:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "disk %d is a LUN of iSCSI target %s; disconnect the target instead", n, d.target.iqn)
		}
		for _, p := range d.parts {
			if p.vol != nil {
				if l := w.letterOf(p.vol); l != 0 {
					delete(w.letters, l)
				}
			}
		}
		delete(w.disks, n)
		return nil
	})
}

// ResizeDisk grows disk n to size bytes, as expanding a cloud disk does;
// the partitions keep their sizes until ResizeVolume. Disks cannot shrink
// (errdefs.ErrOutOfRange).
func (h *Host) ResizeDisk(n uint32, size int64) error {
	return h.locked(func(w *world) error {
		d, err := w.disk(n)
		if err != nil {
			return err
		}
		switch {
		case size < d.size:
			return errdefs.Errorf(errdefs.ErrOutOfRange, "disk %d is %d bytes; disks cannot shrink to %d", n, d.size, size)
		case size > int64(MaxDiskSize):
			return errdefs.Errorf(errdefs.ErrOutOfRange, "size %d is larger than the limit %d", size, int64(MaxDiskSize))
		}
		d.size = size
		return nil
	})
}

// RescanCount tells how many times Rescan was called.
func (h *Host) RescanCount() int {
	var n int
	_ = h.locked(func(w *world) error { n = w.rescans; return nil })
	return n
}

// DiskInfo is a snapshot of a disk, for tests and tools.
type DiskInfo struct {
	Number uint32
	Size   int64
	Online bool
	// ReadOnly is the disk's read-only attribute.
	ReadOnly bool
	// PartitionStyle is "RAW" or "GPT".
	PartitionStyle string
	// BusType is "NVMe" for a disk on the NVMe bus and "SCSI" for any
	// other (iSCSI LUNs included).
	BusType string
	// Location is as configured (DiskSpec.Location): "adapter:bus:target:lun"
	// for a SCSI disk, the PCI bus number for an NVMe disk, or "".
	Location string
	// NamespaceID and Product are an NVMe disk's, as configured
	// (DiskSpec.NamespaceID, DiskSpec.Product).
	NamespaceID uint32
	Product     string
	Page83      string
	Serial      string
	// System marks the system disk.
	System bool
	// ISCSITarget is the IQN of the target providing the disk, or "".
	ISCSITarget string
	Partitions  []PartitionInfo
}

// PartitionInfo is a snapshot of a partition.
type PartitionInfo struct {
	Number uint32
	Offset int64
	Size   int64
	// Type is "Basic" (data), "System" (EFI) or "Reserved" (MSR), as
	// MSFT_Partition.Type names them.
	Type string
	// VolumeID is the partition's volume, or "" (MSR).
	VolumeID string
}

// ListDisks returns a snapshot of the attached disks, by number.
func (h *Host) ListDisks() []DiskInfo {
	var out []DiskInfo
	_ = h.locked(func(w *world) error {
		for _, d := range w.sortedDisks() {
			di := DiskInfo{Number: d.number, Size: d.size, Online: d.online, ReadOnly: d.readOnly, PartitionStyle: "RAW",
				BusType: "SCSI", NamespaceID: d.nsid, Product: d.product, Page83: d.page83, Serial: d.serial, System: d.system}
			if d.gpt {
				di.PartitionStyle = "GPT"
			}
			switch {
			case d.location == nil:
			case d.nvme:
				di.Location = d.location[1]
			default:
				di.Location = strings.Join(d.location[:], ":")
			}
			if d.nvme {
				di.BusType = "NVMe"
			}
			if d.target != nil {
				di.ISCSITarget = d.target.iqn
			}
			for _, p := range d.parts {
				pi := PartitionInfo{Number: p.number, Offset: p.offset, Size: p.size, Type: p.kind.String()}
				if p.vol != nil {
					pi.VolumeID = p.vol.id
				}
				di.Partitions = append(di.Partitions, pi)
			}
			out = append(out, di)
		}
		return nil
	})
	return out
}

// VolumeInfo is a snapshot of a volume, for tests and tools.
type VolumeInfo struct {
	ID        string
	Disk      uint32
	Partition uint32
	Size      int64
	// MaxSize is the largest size the volume can grow to on its disk.
	MaxSize int64
	// FileSystem is "", "NTFS" or "FAT32".
	FileSystem string
	// UsedBytes is what VolumeStats reports (0 for a RAW volume).
	UsedBytes int64
	// DriveLetter is "C" and so on, or "".
	DriveLetter string
	// MountPoints are the folders where the volume is mounted, reachable
	// from a drive letter, sorted.
	MountPoints []string
	// Flushes counts FlushVolume and UnmountVolume calls.
	Flushes int
}

// ListVolumes returns a snapshot of the volumes on attached disks, by disk
// and partition number.
func (h *Host) ListVolumes() []VolumeInfo {
	var out []VolumeInfo
	_ = h.locked(func(w *world) error {
		mounts := w.mountPoints()
		for _, d := range w.sortedDisks() {
			for _, p := range d.parts {
				v := p.vol
				if v == nil {
					continue
				}
				vi := VolumeInfo{ID: v.id, Disk: d.number, Partition: p.number, Size: p.size,
					MaxSize: d.maxSize(p), FileSystem: v.fs, Flushes: v.flushes, MountPoints: mounts[v]}
				if v.fs != "" {
					vi.UsedBytes = v.used()
				}
				if l := w.letterOf(v); l != 0 {
					vi.DriveLetter = string(l)
				}
				sort.Strings(vi.MountPoints)
				out = append(out, vi)
			}
		}
		return nil
	})
	return out
}
