package blocktopo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// This file reads disks and partitions from sysfs (sysfs-block(5)). There is
// no udev on the nodes this runs on, so sysfs is the only inventory; every
// path is relative to Source.SysfsRoot so tests read fixture trees.

// DevNum is a block device number.
type DevNum struct{ Major, Minor uint32 }

// String returns the "major:minor" form.
func (d DevNum) String() string { return fmt.Sprintf("%d:%d", d.Major, d.Minor) }

// ParseDevNum reads the "major:minor" form of sysfs dev files.
func ParseDevNum(s string) (DevNum, error) {
	ma, mi, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return DevNum{}, fmt.Errorf("device number %q is not major:minor", s)
	}
	a, err1 := strconv.ParseUint(ma, 10, 32)
	b, err2 := strconv.ParseUint(mi, 10, 32)
	if err1 != nil || err2 != nil {
		return DevNum{}, fmt.Errorf("device number %q is not major:minor", s)
	}
	return DevNum{Major: uint32(a), Minor: uint32(b)}, nil
}

// SCSIAddress is a SCSI device's host:channel:target:lun.
type SCSIAddress struct{ Host, Channel, Target, LUN string }

var scsiAddrRE = regexp.MustCompile(`^(\d+):(\d+):(\d+):(\d+)$`)

func parseSCSIAddress(s string) (SCSIAddress, bool) {
	m := scsiAddrRE.FindStringSubmatch(s)
	if m == nil {
		return SCSIAddress{}, false
	}
	return SCSIAddress{m[1], m[2], m[3], m[4]}, true
}

// SysfsDisk is a whole disk as sysfs describes it.
type SysfsDisk struct {
	// Name is the kernel name: sda, vdb, nvme0n1, loop3.
	Name string
	// Dev is the disk's device number.
	Dev DevNum
	// Diskseq is the kernel's sequence number of the disk; 0 when the
	// kernel has none (before 5.15).
	Diskseq uint64
	// Object names the sysfs object (see sysObject): new on every
	// attach, so it tells re-attached disks apart without diskseq.
	Object string
	// Size is in bytes; sysfs counts 512-byte sectors whatever the
	// logical block size.
	Size int64
	// LogicalBlock and PhysicalBlock are the block sizes in bytes.
	LogicalBlock, PhysicalBlock int64
	// ReadOnly is the kernel's read-only flag (ro).
	ReadOnly bool
	// SCSI is set for SCSI devices (sd, including iSCSI and virtio-scsi).
	SCSI *SCSIAddress
	// SCSIState is device/state of a SCSI device: running, offline, ...
	SCSIState string
	// LoopBacking is the backing file of an attached loop device.
	LoopBacking string
	// Page83 and Serial are the identifiers the device itself reports
	// (see readDiskIDs).
	Page83, Serial string
	// Holders are the devices stacked on the disk (holders/).
	Holders []string
	// Parts are the partitions the kernel has for the disk, by number.
	Parts []KernelPartition
	// DMUUID is set for a dm-multipath map (dm/uuid "mpath-..."): the
	// disk is device-mapper's, its partitions are kpartx's dm devices
	// (BLKPG does not work on it) and Paths are its member disks. DMName
	// is its name below /dev/mapper.
	DMUUID, DMName string
	Paths          []string
}

// KernelPartition is a partition the kernel knows.
type KernelPartition struct {
	// Name is the partition's kernel name: sda1, loop0p1, nvme0n1p2.
	Name string
	// Number is the partition number (the GPT entry's index).
	Number int
	// Dev is the partition's device number.
	Dev DevNum
	// Start is in bytes from the start of the disk; -1 for a kpartx
	// partition of a multipath map: a dm-linear device's offset is in its
	// table, which sysfs does not show.
	Start int64
	// Size is in bytes.
	Size int64
	// Holders are the devices stacked on the partition.
	Holders []string
}

// Part returns the kernel partition with the number, or nil.
func (d *SysfsDisk) Part(number int) *KernelPartition {
	for i := range d.Parts {
		if d.Parts[i].Number == number {
			return &d.Parts[i]
		}
	}
	return nil
}

// ReadSysfsDisks lists the whole disks under root/block whose names match one
// of the glob patterns, skipping devices that are not disks in any useful
// sense: RAM disks (ram, zram), loop devices with nothing attached, and
// hidden devices (NVMe multipath paths). A disk that disappears while it
// is read is skipped; any other read error fails the scan.
func ReadSysfsDisks(root string, patterns []string) ([]SysfsDisk, error) {
	blockDir := filepath.Join(root, "block")
	ents, err := os.ReadDir(blockDir)
	if err != nil {
		return nil, fmt.Errorf("list disks: %w", err)
	}
	var out []SysfsDisk
	for _, e := range ents {
		name := e.Name()
		if !matchAny(patterns, name) || strings.HasPrefix(name, "ram") || strings.HasPrefix(name, "zram") {
			continue
		}
		var d SysfsDisk
		var ok bool
		if strings.HasPrefix(name, "dm-") {
			d, ok, err = readMultipathDisk(blockDir, name)
		} else {
			d, ok, err = readSysDisk(filepath.Join(blockDir, name), name)
			// A path of a multipath map is a member of that disk, not a
			// disk of its own: offering it would let a caller partition
			// or take offline one path under the map.
			ok = ok && multipathHolder(blockDir, d.Holders) == ""
		}
		if errors.Is(err, fs.ErrNotExist) {
			continue // detached while we looked
		}
		if err != nil {
			return nil, fmt.Errorf("disk %s: %w", name, err)
		}
		if ok {
			out = append(out, d)
		}
	}
	return out, nil
}

// multipathPrefix starts the dm/uuid of a multipath map (multipathd
// names it "mpath-" + the LUN's ID); kpartx names its partitions
// "part<N>-" + the map's uuid. LVM ("LVM-"), dm-crypt ("CRYPT-") and other
// targets are not disks to offer: disks under them are the host's.
const multipathPrefix = "mpath-"

var kpartxUUID = regexp.MustCompile(`^part(\d+)-(mpath-.+)$`)

// multipathHolder returns the holder that is a multipath map, or "".
func multipathHolder(blockDir string, holders []string) string {
	for _, h := range holders {
		if u, err := ReadAttr(filepath.Join(blockDir, h), "dm/uuid"); err == nil && strings.HasPrefix(u, multipathPrefix) {
			return h
		}
	}
	return ""
}

// readMultipathDisk reads a device-mapper device; ok only for a multipath
// map. Its IDs are the LUN's, from its first path (VPD pages or wwid, as
// for a SCSI disk), else from the map's uuid; its partitions are the
// kpartx devices it holds ("part<N>-" + its uuid), which are not holders
// that make it the host's; its paths are its slaves.
func readMultipathDisk(blockDir, name string) (SysfsDisk, bool, error) {
	dir := filepath.Join(blockDir, name)
	uuid, err := ReadAttr(dir, "dm/uuid")
	if err != nil || !strings.HasPrefix(uuid, multipathPrefix) {
		return SysfsDisk{Name: name}, false, nil
	}
	d, ok, err := readSysDisk(dir, name)
	if !ok || err != nil {
		return d, ok, err
	}
	d.DMUUID = uuid
	d.DMName, _ = ReadAttr(dir, "dm/name")
	d.Paths = listDir(filepath.Join(dir, "slaves"))
	sort.Strings(d.Paths)
	if len(d.Paths) > 0 {
		d.Page83, d.Serial = readDiskIDs(filepath.Join(blockDir, d.Paths[0]))
	}
	if d.Page83 == "" {
		d.Page83 = multipathWWID(uuid)
	}
	var holders []string
	for _, h := range d.Holders {
		hu, _ := ReadAttr(filepath.Join(blockDir, h), "dm/uuid")
		m := kpartxUUID.FindStringSubmatch(hu)
		if m == nil || m[2] != uuid {
			holders = append(holders, h)
			continue
		}
		p, err := readKpartxPart(filepath.Join(blockDir, h), h, m[1])
		if err != nil {
			return d, false, err
		}
		d.Parts = append(d.Parts, p)
	}
	d.Holders = holders
	sort.Slice(d.Parts, func(i, j int) bool { return d.Parts[i].Number < d.Parts[j].Number })
	return d, true, nil
}

// readKpartxPart reads a kpartx partition device as a partition of its
// map.
func readKpartxPart(dir, name, number string) (KernelPartition, error) {
	p := KernelPartition{Name: name, Start: -1, Holders: listDir(filepath.Join(dir, "holders"))}
	var err error
	if p.Number, err = strconv.Atoi(number); err != nil {
		return p, err
	}
	s, err := ReadAttr(dir, "dev")
	if err != nil {
		return p, err
	}
	if p.Dev, err = ParseDevNum(s); err != nil {
		return p, err
	}
	if p.Size, err = ReadSectors(dir, "size"); err != nil {
		return p, err
	}
	return p, nil
}

// multipathWWID turns a multipath map's uuid into Page83 when no path
// says more: multipathd's ID is udev's ID_SERIAL, scsi_id's designator
// type digit ("3" NAA, "2" EUI-64) followed by the ID in hex, which is
// what upstream's Page83 rule gives for those designators.
func multipathWWID(uuid string) string {
	id := strings.TrimPrefix(uuid, multipathPrefix)
	if len(id) > 1 && (id[0] == '3' || id[0] == '2') && isHex(id[1:]) {
		return strings.ToLower(id[1:])
	}
	return id
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return s != ""
}

// matchAny reports whether name matches one of the glob patterns.
func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// readSysDisk reads one /sys/block entry; ok is false for devices that are
// not disks to offer.
func readSysDisk(dir, name string) (d SysfsDisk, ok bool, err error) {
	d.Name = name
	if v, _ := ReadAttr(dir, "hidden"); v == "1" {
		return d, false, nil
	}
	if strings.HasPrefix(name, "loop") {
		b, err := ReadAttr(dir, "loop/backing_file")
		if errors.Is(err, fs.ErrNotExist) {
			return d, false, nil // nothing attached
		}
		if err != nil {
			return d, false, err
		}
		d.LoopBacking = b
	}
	s, err := ReadAttr(dir, "dev")
	if err != nil {
		return d, false, err
	}
	if d.Dev, err = ParseDevNum(s); err != nil {
		return d, false, err
	}
	if d.Size, err = ReadSectors(dir, "size"); err != nil {
		return d, false, err
	}
	if s, err := ReadAttr(dir, "diskseq"); err == nil {
		if d.Diskseq, err = strconv.ParseUint(s, 10, 64); err != nil {
			return d, false, fmt.Errorf("diskseq %q: %w", s, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return d, false, err
	}
	d.Object = sysObject(dir)
	d.LogicalBlock = readInt(dir, "queue/logical_block_size", 512)
	d.PhysicalBlock = readInt(dir, "queue/physical_block_size", d.LogicalBlock)
	ro, _ := ReadAttr(dir, "ro")
	d.ReadOnly = ro == "1"
	d.Holders = listDir(filepath.Join(dir, "holders"))
	d.SCSI = readSCSIAddress(dir)
	if d.SCSI != nil {
		d.SCSIState, _ = ReadAttr(dir, "device/state")
	}
	d.Page83, d.Serial = readDiskIDs(dir)
	if d.Parts, err = ReadKernelPartitions(dir); err != nil {
		return d, false, err
	}
	return d, true, nil
}

// readSCSIAddress finds H:C:T:L: the entry of device/scsi_device/ (a real
// directory, so fixture trees need no symlinks), else the name the device
// link points to.
func readSCSIAddress(dir string) *SCSIAddress {
	for _, n := range listDir(filepath.Join(dir, "device", "scsi_device")) {
		if a, ok := parseSCSIAddress(n); ok {
			return &a
		}
	}
	if target, err := os.Readlink(filepath.Join(dir, "device")); err == nil {
		if a, ok := parseSCSIAddress(path.Base(filepath.ToSlash(target))); ok {
			return &a
		}
	}
	return nil
}

// readDiskIDs returns the identifiers the device reports. An NVMe
// namespace with an NGUID or EUI-64 gets them as Windows presents them
// (see nvmeNamespaceID). Otherwise page83: the raw VPD page 0x83 decoded
// like upstream (device/vpd_pg83, root-only), else the kernel's wwid.
// serial: the virtio/block serial, else VPD page 0x80, else device/serial
// (NVMe controllers, shared by all their namespaces).
func readDiskIDs(dir string) (page83, serial string) {
	if id := nvmeNamespaceID(dir); id != "" {
		return id, windowsNVMeSerial(id)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "device", "vpd_pg83")); err == nil {
		if ds, err := parseVPD83(b); err == nil {
			page83 = page83ID(ds)
		}
	}
	if page83 == "" {
		for _, a := range []string{"wwid", "device/wwid"} {
			if w, err := ReadAttr(dir, a); err == nil && w != "" {
				page83 = wwidToPage83(w)
				break
			}
		}
	}
	if s, err := ReadAttr(dir, "serial"); err == nil && s != "" {
		serial = s
	} else if b, err := os.ReadFile(filepath.Join(dir, "device", "vpd_pg80")); err == nil {
		serial, _ = parseVPD80(b)
	}
	if serial == "" {
		serial, _ = ReadAttr(dir, "device/serial")
	}
	return page83, serial
}

// nvmeNamespaceID returns an NVMe namespace's NGUID (32 hex digits), or
// else its EUI-64 (16), in lower case; "" when it has neither (the kernel
// shows the nguid and eui attributes only when they are set). Windows'
// NVMe-SCSI translation builds VPD page 0x83 from these, so upstream's
// Page83 rule yields their hex there; the kernel's wwid would prefer a
// namespace UUID and, for a namespace without IDs, a vendor-serial-model
// form that Windows never shows.
func nvmeNamespaceID(dir string) string {
	if g, err := ReadAttr(dir, "nguid"); err == nil {
		if h := strings.ReplaceAll(g, "-", ""); len(h) == 32 && strings.Trim(h, "0") != "" {
			return strings.ToLower(h)
		}
	}
	if e, err := ReadAttr(dir, "eui"); err == nil {
		if h := strings.ReplaceAll(e, " ", ""); len(h) == 16 && strings.Trim(h, "0") != "" {
			return strings.ToLower(h)
		}
	}
	return ""
}

// windowsNVMeSerial is the serial number Windows reports for an NVMe
// namespace with an NGUID or EUI-64 (its unit serial number VPD page):
// the ID in upper case, in groups of four hex digits joined by "_", ended
// by ".": "0025_3858_81B0_A1B2.".
func windowsNVMeSerial(id string) string {
	var groups []string
	for i := 0; i+4 <= len(id); i += 4 {
		groups = append(groups, strings.ToUpper(id[i:i+4]))
	}
	return strings.Join(groups, "_") + "."
}

// ReadKernelPartitions lists the partitions of a disk: subdirectories with a
// "partition" file.
func ReadKernelPartitions(dir string) ([]KernelPartition, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var parts []KernelPartition
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		pdir := filepath.Join(dir, e.Name())
		num, err := ReadAttr(pdir, "partition")
		if errors.Is(err, fs.ErrNotExist) {
			continue // queue/, holders/, power/, ... or a partition just removed
		}
		if err != nil {
			return nil, err
		}
		p := KernelPartition{Name: e.Name(), Holders: listDir(filepath.Join(pdir, "holders"))}
		if p.Number, err = strconv.Atoi(num); err != nil {
			return nil, fmt.Errorf("partition %s number %q: %w", e.Name(), num, err)
		}
		s, err := ReadAttr(pdir, "dev")
		if err != nil {
			return nil, err
		}
		if p.Dev, err = ParseDevNum(s); err != nil {
			return nil, err
		}
		if p.Start, err = ReadSectors(pdir, "start"); err != nil {
			return nil, err
		}
		if p.Size, err = ReadSectors(pdir, "size"); err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].Number < parts[j].Number })
	return parts, nil
}

// ReadAttr reads a sysfs attribute, trimmed.
func ReadAttr(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// ReadSectors reads an attribute counted in 512-byte sectors as bytes.
func ReadSectors(dir, name string) (int64, error) {
	s, err := ReadAttr(dir, name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s %q is not a sector count", name, s)
	}
	return n * 512, nil
}

func readInt(dir, name string, def int64) int64 {
	s, err := ReadAttr(dir, name)
	if err != nil {
		return def
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return def
	}
	return n
}

// listDir returns the names in dir, or nil if it cannot be read.
func listDir(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}
