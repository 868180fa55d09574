package blocktopo

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"sync"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// DefaultDiskFilter matches the disks a CSI driver attaches: SCSI
// (including iSCSI and virtio-scsi), virtio-blk, Xen, NVMe and IDE disks,
// attached loop devices, and dm-multipath maps (other device-mapper
// devices are never offered).
var DefaultDiskFilter = []string{"sd*", "vd*", "xvd*", "nvme*", "hd*", "loop*", "dm-*"}

// Source is what Read reads a node's block topology from. Everything but
// sysfs and the devices is given already read, so a test hands Read a
// fixture tree and tables of its own.
type Source struct {
	// SysfsRoot is where sysfs is mounted ("/sys", or a fixture tree).
	SysfsRoot string
	// DevRoot is the directory of block device nodes: disk and partition
	// nodes are DevRoot/<kernel name>.
	DevRoot string
	// DiskFilter holds glob patterns (path.Match syntax) of the kernel
	// disk names to read; other disks are not in the Snapshot. RAM disks,
	// loop devices with nothing attached and hidden devices never are.
	DiskFilter []string
	// MountRoots are the directories volumes are mounted below (the
	// daemon's working directories). A disk with anything mounted
	// elsewhere belongs to the host. Read adds the resolved form of a
	// root that is (or lies below) a symlink: the mount table records
	// resolved paths.
	MountRoots []string
	// Mounts is the mount table of the proxy's mount namespace.
	Mounts []mountinfo.Mount
	// HostMounts is the host's mount table, when the proxy can read it
	// (nil otherwise). Read keeps the mounts Mounts does not have: the
	// same device at the same mount point is one mount seen from both
	// namespaces.
	HostMounts []mountinfo.Mount
	// Swaps are the block devices in use as swap.
	Swaps []DevNum
	// Numbers numbers disks that have no usable diskseq; nil numbers
	// them afresh for this Read alone.
	Numbers *Numbering
	// DeviceReadOnly holds the disks, by number, that are read-only by
	// the device itself rather than by the kernel flag the backend sets to
	// take a disk offline: they count as online.
	DeviceReadOnly map[uint32]bool
	// Devices reads what the disks hold; nil reads no disk (the Snapshot
	// then has sysfs, mounts and classification only).
	Devices DeviceReader
	// Tables selects the disks whose layouts Devices reads; nil selects
	// every disk.
	Tables func(*Disk) bool
}

// Read reads the block topology src describes into a Snapshot: the disks
// from sysfs, numbered and classified by the mount tables and swap, and
// the layouts of the disks src.Tables selects through src.Devices. It
// changes nothing on the node; ctx bounds only the device reads.
func Read(ctx context.Context, src Source) (*Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sds, err := ReadSysfsDisks(src.SysfsRoot, src.DiskFilter)
	if err != nil {
		return nil, err
	}
	numbers := src.Numbers
	if numbers == nil {
		numbers = &Numbering{}
	}
	s := &Snapshot{Mounts: src.Mounts, HostMounts: hostOnly(src.HostMounts, src.Mounts), DevRoot: src.DevRoot}
	roots := resolveRoots(src.MountRoots)
	for _, sd := range sds {
		d := &Disk{SysfsDisk: sd, Path: filepath.Join(src.DevRoot, sd.Name)}
		d.Number = numbers.Number(&d.SysfsDisk)
		d.classify(s.Mounts, s.HostMounts, src.Swaps, roots, src.DevRoot)
		switch {
		case d.SCSI != nil:
			d.Offline = d.SCSIState == "offline" || d.SCSIState == "transport-offline"
		default:
			d.Offline = d.ReadOnly && !src.DeviceReadOnly[d.Number]
		}
		s.Disks = append(s.Disks, d)
	}
	sort.Slice(s.Disks, func(i, j int) bool { return s.Disks[i].Number < s.Disks[j].Number })
	if src.Devices == nil {
		return s, nil
	}
	var ds []*Disk
	for _, d := range s.Disks {
		if src.Tables == nil || src.Tables(d) {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return s, nil
	}
	layouts, err := src.Devices.ReadLayouts(ctx, ds)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if l, ok := layouts[d.Name]; ok {
			d.setLayout(l)
		}
	}
	return s, nil
}

// hostOnly returns the mounts of the host's table that own (the proxy's)
// does not have: the same device at the same mount point is one mount
// seen from both namespaces.
func hostOnly(host, own []mountinfo.Mount) []mountinfo.Mount {
	type key struct {
		dev DevNum
		mp  string
	}
	seen := map[key]bool{}
	for _, m := range own {
		seen[key{DevNum{m.Major, m.Minor}, m.MountPoint}] = true
	}
	var out []mountinfo.Mount
	for _, m := range host {
		if !seen[key{DevNum{m.Major, m.Minor}, m.MountPoint}] {
			out = append(out, m)
		}
	}
	return out
}

// resolveRoots returns the mount roots plus the resolved form of each
// that is (or lies below) a symlink, such as /var/lib/kubelet linked to
// /data/kubelet: the mount table records resolved paths.
func resolveRoots(roots []string) []string {
	out := append([]string(nil), roots...)
	for _, r := range roots {
		if res, err := filepath.EvalSymlinks(r); err == nil && filepath.ToSlash(res) != r {
			out = append(out, filepath.ToSlash(res))
		}
	}
	return out
}

// Numbering gives disks their numbers. A disk's number is its diskseq,
// which the kernel gives every disk (and every new medium of a loop
// device) once per boot and never reuses, so the number stays valid
// exactly as long as the disk does. A disk with no diskseq (kernel <
// 5.15), or one of 2^31 or more (two billion attachments in one boot), is
// numbered from 2^31 up by the Numbering, keyed by name, device number,
// diskseq and the disk's sysfs object: such numbers are stable only as
// long as the Numbering lives (the backend keeps one for its lifetime),
// and a disk detached and attached again (same sdb, same 8:16, but a new
// sysfs object) gets a new one, so a stale number is never another disk.
// The zero value is ready to use; it is safe for concurrent use.
type Numbering struct {
	mu    sync.Mutex
	extra map[string]uint32
}

// Number returns the number of disk d.
func (n *Numbering) Number(d *SysfsDisk) uint32 {
	if d.Diskseq > 0 && d.Diskseq < 1<<31 {
		return uint32(d.Diskseq)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	key := fmt.Sprintf("%s %s %d %s", d.Name, d.Dev, d.Diskseq, d.Object)
	if v, ok := n.extra[key]; ok {
		return v
	}
	if n.extra == nil {
		n.extra = map[string]uint32{}
	}
	v := uint32(1<<31 + len(n.extra))
	n.extra[key] = v
	return v
}
