package blocktopo

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// Disk is one disk of a Snapshot: what sysfs says of it, its number, what
// it holds (when its layout was read), its mounts and who it belongs to.
// Read builds it and nothing changes it afterwards: a caller that changes
// the disk reads a new Snapshot, and one that edits its table edits a
// Clone.
type Disk struct {
	SysfsDisk
	// Number is the disk's number in the disk group (see Numbering).
	Number uint32
	// Path is the disk's device node, Source.DevRoot/<kernel name>.
	Path string
	// Table is the disk's GPT; nil when it has none (or was not read).
	Table *GPT
	// TableErr is why the table could not be read (a damaged GPT, an I/O
	// error, a disk that did not answer); ErrNoGPT is not an error and
	// leaves it nil.
	TableErr error
	// Content is what the whole disk holds when it has no GPT.
	Content FSInfo
	// MBR classifies sector 0 of a disk without a GPT.
	MBR MBRKind
	// PartsErr is why some entry of a multipath map's table has no
	// matching kpartx device: device-mapper disks take no BLKPG
	// partitions, so only kpartx can give them one (see setLayout).
	PartsErr error
	// Mounts are the mounts of the disk or any of its partitions in the
	// proxy's mount namespace.
	Mounts []mountinfo.Mount
	// HostMounts are its mounts in the host's table that the proxy's own
	// table does not show.
	HostMounts []mountinfo.Mount
	// Swap are the devices of this disk in use as swap.
	Swap []string
	// Host is why the disk belongs to the host ("" if it does not):
	// something of it is mounted outside the mount roots, in use as
	// swap, or held by device-mapper or md. The backend lists such a disk
	// but never changes it.
	Host string
	// Offline tells whether the disk is offline: SCSI device state
	// offline, or the kernel's read-only flag on a disk that is not
	// read-only by itself (Source.DeviceReadOnly).
	Offline bool
}

// setLayout gives the disk what its device holds. A multipath map's
// kernel partitions are its kpartx devices, matched to the table's
// entries by size (their offsets are in their device-mapper tables, which
// sysfs does not show; see partFor): a device whose size is not its
// entry's is not taken for it, and an entry without one has none until
// kpartx runs; both are explained in PartsErr. Parts stays as sysfs has
// it.
func (d *Disk) setLayout(l Layout) {
	d.Table, d.TableErr, d.Content, d.MBR = l.Table, l.Err, l.Content, l.MBR
	if d.Table == nil || d.DMUUID == "" {
		return
	}
	lbs := d.LogicalBlock
	var errs []error
	for _, p := range d.Parts {
		if e := d.Table.Entry(p.Number); e != nil && int64(e.Sectors())*lbs != p.Size {
			errs = append(errs, fmt.Errorf("partition %d: its device-mapper device %s is %d bytes, the table says %d", p.Number, p.Name, p.Size, int64(e.Sectors())*lbs))
		}
	}
	for i := range d.Table.Entries {
		if e := &d.Table.Entries[i]; d.partFor(e) == nil {
			errs = append(errs, fmt.Errorf("partition %d has no device-mapper device: kpartx makes them (multipathd's udev rules run it when the table changes); run kpartx -u /dev/mapper/%s", e.Index, d.DMName))
		}
	}
	d.PartsErr = errors.Join(errs...)
}

// partFor returns the kernel partition that is entry e's device, or nil:
// the partition with the entry's number, and for a multipath map only a
// kpartx device of the entry's size (see setLayout).
func (d *Disk) partFor(e *GPTEntry) *KernelPartition {
	p := d.Part(e.Index)
	if p != nil && d.DMUUID != "" && p.Size != int64(e.Sectors())*d.LogicalBlock {
		return nil
	}
	return p
}

// classify works out who a disk belongs to from the mount tables and
// swap. hostMounts are the host's mounts the proxy's namespace does not
// show: one of the disk outside the mount roots makes it the host's, and
// any makes it in use.
func (d *Disk) classify(mounts, hostMounts []mountinfo.Mount, swaps []DevNum, roots []string, devRoot string) {
	devs := map[DevNum]string{d.Dev: d.Name}
	paths := map[string]bool{d.Path: true}
	for _, p := range d.Parts {
		devs[p.Dev] = p.Name
		paths[filepath.Join(devRoot, p.Name)] = true
	}
	var reasons []string
	// ofDisk picks the mounts of the disk and its partitions from one
	// table, and gives each outside the mount roots as a reason (where
	// says in which namespace): the proxy's table and the host's are read
	// alike.
	ofDisk := func(ms []mountinfo.Mount, where string) []mountinfo.Mount {
		var out []mountinfo.Mount
		for _, m := range ms {
			// btrfs reports an anonymous st_dev, so match the source too.
			if _, ok := devs[DevNum{m.Major, m.Minor}]; !ok && !paths[m.Source] {
				continue
			}
			out = append(out, m)
			if !strictlyBelow(m.MountPoint, roots) {
				reasons = append(reasons, fmt.Sprintf("%s is mounted at %s%s", m.Source, m.MountPoint, where))
			}
		}
		return out
	}
	d.Mounts = append(d.Mounts, ofDisk(mounts, "")...)
	d.HostMounts = append(d.HostMounts, ofDisk(hostMounts, " in the host's mount namespace")...)
	for _, sw := range swaps {
		if name, ok := devs[sw]; ok {
			d.Swap = append(d.Swap, name)
			reasons = append(reasons, name+" is in use as swap")
		}
	}
	if len(d.Holders) > 0 {
		reasons = append(reasons, fmt.Sprintf("%s is held by %s", d.Name, strings.Join(d.Holders, ", ")))
	}
	for _, p := range d.Parts {
		if len(p.Holders) > 0 {
			reasons = append(reasons, fmt.Sprintf("%s is held by %s", p.Name, strings.Join(p.Holders, ", ")))
		}
	}
	if len(reasons) > 0 {
		d.Host = strings.Join(reasons, "; ")
	}
}

// strictlyBelow tells whether a mount point lies strictly inside one of
// the mount roots: the only places the volume Service mounts volumes.
func strictlyBelow(mp string, roots []string) bool {
	for _, r := range roots {
		if r == "/" {
			if mp != "/" {
				return true
			}
			continue
		}
		if strings.HasPrefix(mp, r+"/") {
			return true
		}
	}
	return false
}

// StaleParts returns the kernel partitions of the disk that table t (nil:
// no table) does not describe: no entry with the number, or an entry at
// another start, or of another size. With growable, a kernel partition
// smaller than its entry at the same start is not stale: BLKPG grows it
// in place, even while it is mounted.
func (d *Disk) StaleParts(t *GPT, growable bool) []*KernelPartition {
	var out []*KernelPartition
	for i := range d.Parts {
		p := &d.Parts[i]
		if t != nil {
			if e := t.Entry(p.Number); e != nil {
				start, length := int64(e.First)*d.LogicalBlock, int64(e.Sectors())*d.LogicalBlock
				if p.Start == start && (p.Size == length || growable && p.Size < length) {
					continue
				}
			}
		}
		out = append(out, p)
	}
	return out
}

// MountedFrom tells whether mount m is of the block device dev, whose
// node below the device root is src: by device number, or by the source
// text mount(8) was given. Matching the name as well errs towards "in
// use", which is what the callers want: they refuse to delete or reuse a
// device that is mounted, or unmount what is mounted from it.
// The backend's VolumeMounts, which answers the policy's question,
// compares device numbers only, since there a reused name must not count.
func MountedFrom(m mountinfo.Mount, dev DevNum, src string) bool {
	return (DevNum{m.Major, m.Minor}) == dev || m.Source == src
}

// MountsFrom returns the mounts in ms of the block device dev, whose node
// is src (see MountedFrom), in ms's order.
func MountsFrom(ms []mountinfo.Mount, dev DevNum, src string) []mountinfo.Mount {
	var out []mountinfo.Mount
	for _, m := range ms {
		if MountedFrom(m, dev, src) {
			out = append(out, m)
		}
	}
	return out
}

// InUse explains why the disk's content must not be rewritten: it is the
// host's, or something on it is mounted. "" means it may be.
func (d *Disk) InUse() string {
	if d.Host != "" {
		return d.Host
	}
	if all := append(append([]mountinfo.Mount(nil), d.Mounts...), d.HostMounts...); len(all) > 0 {
		var where []string
		for _, m := range all {
			where = append(where, fmt.Sprintf("%s at %s", m.Source, m.MountPoint))
		}
		return "it has mounted filesystems (" + strings.Join(where, ", ") + ")"
	}
	return ""
}

// Describe names a disk in messages: "disk 12 (loop3)".
func (d *Disk) Describe() string { return fmt.Sprintf("disk %d (%s)", d.Number, d.Name) }

// WholeVolume returns the ID of the volume a disk without a partition
// table is, or "" when it is none. aws-ebs, gce-pd and azuredisk on Linux
// format the whole device (mkfs /dev/xvdf), so such a disk holds one
// volume: its filesystem, named by the filesystem's UUID, lower case, as
// blkid prints it and /dev/disk/by-uuid names it. Like a partition GUID it
// is stored on the disk, so it survives reboots and moves between nodes.
// Only filesystems the backend mounts and whose UUID the probe reads
// count (ext2/3/4, XFS, btrfs).
func (d *Disk) WholeVolume() string {
	if d.Table != nil || d.TableErr != nil || d.MBR != MBRNone || d.Content.MountType() == "" || d.Content.UUID.IsZero() {
		return ""
	}
	return d.Content.UUID.String()
}

// Volumes returns the volumes of the disk: its GPT partitions but
// Microsoft Reserved ones, in index order, or its whole-disk volume.
func (d *Disk) Volumes() []*Volume {
	var out []*Volume
	if id := d.WholeVolume(); id != "" {
		return append(out, &Volume{ID: id, Disk: d})
	}
	if d.Table == nil {
		return nil
	}
	for i := range d.Table.Entries {
		e := &d.Table.Entries[i]
		if e.Type != TypeMicrosoftReserved {
			out = append(out, &Volume{ID: VolumeID(e), Disk: d, Entry: e, Part: d.partFor(e)})
		}
	}
	return out
}

// IsWithin tells whether p is root or below it (POSIX paths).
func IsWithin(p, root string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

// Partitioned tells whether the disk's layout, read without changing it,
// already holds a volume: a GPT with a data partition, or a whole-disk
// filesystem. PartitionDisk leaves such a disk alone, offline or not.
func (d *Disk) Partitioned() bool {
	return d.TableErr == nil && (d.Table != nil && HasDataPartition(d.Table) || d.WholeVolume() != "" || d.MBRPartitioned())
}

// MBRPartitioned tells whether a disk without a GPT has an MBR (DOS)
// partition table with partitions: upstream's PartitionDisk finds such a
// disk initialised with a basic partition and leaves it alone, and so does
// this backend (its partitions are not listed as volumes: they have no
// GUID).
func (d *Disk) MBRPartitioned() bool {
	return d.Table == nil && d.TableErr == nil && (d.MBR == MBRPartitions || d.MBR == MBRHybrid)
}

// HasDataPartition tells whether the table has a partition Windows would
// count as data: anything but Microsoft Reserved.
func HasDataPartition(t *GPT) bool {
	for _, e := range t.Entries {
		if e.Type != TypeMicrosoftReserved {
			return true
		}
	}
	return false
}
