package blocktopo

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// Snapshot is the block topology of a node at one moment, as Read found
// it. Nothing changes it after Read: it may be shared between goroutines,
// and a call that changes the node reads a new one.
type Snapshot struct {
	// Disks are the disks Source.DiskFilter selects, by number.
	Disks []*Disk
	// Mounts is the proxy's mount table (Source.Mounts).
	Mounts []mountinfo.Mount
	// HostMounts are the mounts of the host's table that Mounts does not
	// have.
	HostMounts []mountinfo.Mount
	// DevRoot is Source.DevRoot, to name partition devices.
	DevRoot string
}

// Disk finds a disk by number; filter (the disk filter in effect) only
// explains a number that is not found.
func (s *Snapshot) Disk(n uint32, filter []string) (*Disk, error) {
	for _, d := range s.Disks {
		if d.Number == n {
			return d, nil
		}
	}
	return nil, errdefs.Errorf(errdefs.ErrNotFound, "disk %d does not exist (disk numbers are kernel diskseq values of disks matching %v; ListDiskIDs lists them)", n, filter)
}

// Volume is a volume: a GPT partition and its kernel device, or a whole
// disk holding a filesystem without a partition table (entry and part nil).
type Volume struct {
	// ID is the volume's ID: the partition's unique GUID (VolumeID), or
	// the whole-disk filesystem's UUID (Disk.WholeVolume).
	ID string
	// Disk is the disk the volume is on.
	Disk *Disk
	// Entry is the partition's entry in the table; nil for a whole-disk
	// volume.
	Entry *GPTEntry
	// Part is the kernel's partition with the entry's number; nil when
	// the kernel has none, and for a whole-disk volume. It may lie
	// elsewhere than the entry says (see KernelDevice).
	Part *KernelPartition
}

// Whole tells whether the volume is a whole disk.
func (v *Volume) Whole() bool { return v.Entry == nil }

// Describe names the volume's place in messages.
func (v *Volume) Describe() string {
	if v.Whole() {
		return "the whole of " + v.Disk.Describe()
	}
	return fmt.Sprintf("partition %d of %s", v.Entry.Index, v.Disk.Describe())
}

// VolumeID is the ID of a partition: its unique GUID in lower case. It is
// written in the partition table, so it survives reboots and moves
// between nodes, and it passes the POSIX volume ID rule (printable, no
// '/', at most 256 bytes).
func VolumeID(e *GPTEntry) string { return e.ID.String() }

// Volume finds a volume by ID, in either case. A cloned disk (a snapshot
// restored, a PVC clone) carries the same IDs as its original: when more
// than one volume has the ID and exactly one of them is mounted, that one
// is meant (the live volume whose stats or unmount a driver asks for);
// otherwise the ID is ambiguous until the clone is given new identities
// (SetDiskOnline) or detached.
func (s *Snapshot) Volume(id string) (*Volume, error) {
	found, err := s.VolumesWithID(id)
	if err != nil {
		return nil, err
	}
	if len(found) == 1 {
		return found[0], nil
	}
	var mounted []*Volume
	var where []string
	for _, v := range found {
		if len(v.Mounts(s.DevRoot)) > 0 {
			mounted = append(mounted, v)
		}
		where = append(where, v.Describe())
	}
	if len(mounted) == 1 {
		return mounted[0], nil
	}
	return nil, errdefs.Errorf(errdefs.ErrFailedPrecondition,
		"volume %s is ambiguous: it is on %s (a cloned disk?); bring the clone online with SetDiskState to give it new IDs, or detach all but one", id, strings.Join(where, " and "))
}

// VolumesWithID returns every volume with the ID, in either case: one,
// or more on a node with a clone attached (see Volume). None is
// errdefs.ErrNotFound, or errdefs.ErrUnavailable when a disk that did not
// answer may hold it.
func (s *Snapshot) VolumesWithID(id string) ([]*Volume, error) {
	g, err := ParseGUID(id)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.ErrNotFound, "volume %q does not exist: volume IDs on Linux are GPT partition GUIDs or whole-disk filesystem UUIDs such as 0fc63daf-8483-4772-8e79-3d69d8477de4", id)
	}
	var found []*Volume
	for _, d := range s.Disks {
		for _, v := range d.Volumes() {
			if v.ID == g.String() {
				found = append(found, v)
			}
		}
	}
	if len(found) > 0 {
		return found, nil
	}
	// A disk that did not answer may hold it: that is not "no such
	// volume", and a retry may find it.
	for _, d := range s.Disks {
		if errors.Is(d.TableErr, errdefs.ErrUnavailable) {
			return nil, errdefs.Errorf(errdefs.ErrUnavailable, "volume %s is on none of the disks that could be read: %v", id, d.TableErr)
		}
	}
	return nil, errdefs.Errorf(errdefs.ErrNotFound, "volume %s does not exist on any disk (ListVolumesOnDisk lists the volumes of a disk)", id)
}

// KernelDevice returns the volume's device node when the kernel has one
// exactly where the table says (the disk itself for a whole-disk volume),
// checking without changing anything; ok is false otherwise (the backend
// then reads the volume through the disk at the entry's offsets, or gives
// the partition a device first when the call changes the volume).
func (v *Volume) KernelDevice(devRoot string) (dev string, ok bool) {
	if v.Whole() {
		return v.Disk.Path, true
	}
	if v.Part == nil {
		return "", false
	}
	lbs := v.Disk.LogicalBlock
	// A kpartx device's start is unknown (-1); its size is what matched.
	if (v.Part.Start >= 0 && v.Part.Start != int64(v.Entry.First)*lbs) || v.Part.Size != v.Size() {
		return "", false
	}
	return filepath.Join(devRoot, v.Part.Name), true
}

// Size is the size of the volume's device (the partition, or the whole
// disk) in bytes.
func (v *Volume) Size() int64 {
	if v.Whole() {
		return v.Disk.Size
	}
	return int64(v.Entry.Sectors()) * v.Disk.LogicalBlock
}

// Mounts returns the mounts of the volume, the topmost of each mount
// point last (mount table order).
func (v *Volume) Mounts(devRoot string) []mountinfo.Mount {
	switch {
	case v.Whole():
		return MountsFrom(v.Disk.Mounts, v.Disk.Dev, v.Disk.Path)
	case v.Part == nil:
		return nil
	}
	return MountsFrom(v.Disk.Mounts, v.Part.Dev, filepath.Join(devRoot, v.Part.Name))
}

// MountPoint returns one mount point of the volume to run filesystem
// calls on, preferring a mount of the filesystem root over a bind mount of
// a subdirectory; "" when the volume is not mounted.
func (v *Volume) MountPoint(devRoot string) string {
	ms := v.Mounts(devRoot)
	for _, m := range ms {
		if m.Root == "/" {
			return m.MountPoint
		}
	}
	if len(ms) > 0 {
		return ms[0].MountPoint
	}
	return ""
}

// ByDevice finds the partition (as a volume) or whole disk with a device
// number or source path; the volume is nil when the device is not one.
func (s *Snapshot) ByDevice(dev DevNum, source, devRoot string) (*Disk, *Volume) {
	for _, d := range s.Disks {
		if d.Dev == dev || d.Path == source {
			if id := d.WholeVolume(); id != "" {
				return d, &Volume{ID: id, Disk: d}
			}
			return d, nil
		}
		for i := range d.Parts {
			p := &d.Parts[i]
			if p.Dev != dev && filepath.Join(devRoot, p.Name) != source {
				continue
			}
			if d.Table != nil {
				if e := d.Table.Entry(p.Number); e != nil && d.partFor(e) == p {
					return d, &Volume{ID: VolumeID(e), Disk: d, Entry: e, Part: p}
				}
			}
			return d, nil
		}
	}
	return nil, nil
}
