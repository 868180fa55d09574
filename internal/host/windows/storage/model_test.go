package storage

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// winModel is a stateful model of a Windows node behind the system seam.
// Where fakeSystem answers what one test scripts, winModel keeps a world
// (disks, partitions, volumes, a file tree with reparse points, drive
// letters) and every seam call reads or changes it the way Windows does:
// IOCTL answers are the documented byte layouts, built with the builders
// in buffers_test.go from the model's state; failures are the Win32 codes
// (syscall.Errno) and Storage Management return codes Windows gives (fact
// sheet windows-apis.md). The backend under test is the real one
// (newBackend(model, Config{})), so a driver flow run against it
// exercises every decision the backend makes.
//
// What the model decides where Windows is not documented is written next
// to the decision and collected in docs/simulated-host.md ("How closely it follows Windows").
type winModel struct {
	t  testing.TB
	mu sync.Mutex

	disks   map[uint32]*modelDisk
	letters map[byte]*modelVolume // upper-case drive letter -> volume

	handles    map[handle]*modelHandle
	nextHandle handle

	volumeSeq int // makes volume GUIDs deterministic
	rescans   int // MSFT_StorageSetting.UpdateHostStorageCache calls
}

// Win32 codes the model returns that the backend has no constant for.
const (
	modelErrInvalidName   = 123  // ERROR_INVALID_NAME
	modelErrAlreadyExists = 183  // ERROR_ALREADY_EXISTS
	modelErrDirNotRoot    = 144  // ERROR_DIR_NOT_ROOT: GetVolumeInformationW on a folder that is no root
	modelErrCantResolve   = 1921 // ERROR_CANT_RESOLVE_FILENAME: too many reparse points
)

// Storage Management return codes the model gives that package wmi does
// not name (fact sheet §B3).
const (
	modelNotEnoughCapacity wmi.ReturnCode = 40000
	modelSizeOrMaximum     wmi.ReturnCode = 40005
	modelPartitionLimit    wmi.ReturnCode = 41004
	modelCriticalDisk      wmi.ReturnCode = 41009
	modelSystemPartitionOp wmi.ReturnCode = 42010
)

// Layout constants of the disks the model lays out (fact sheet §1.6).
const (
	modelMiB = int64(1) << 20
	// modelGPTHead is the protective MBR, the GPT header and 32 sectors of
	// partition entries (34 sectors of 512 bytes) at the start of a GPT
	// disk; modelGPTTail the backup entries and header (33 sectors).
	modelGPTHead = 34 * 512
	modelGPTTail = 33 * 512
	// modelCluster is the NTFS cluster files are rounded up to.
	modelCluster = 4096
	// modelMaxHops is how many reparse points one lookup follows; Windows
	// gives up after 63 with ERROR_CANT_RESOLVE_FILENAME.
	modelMaxHops = 63
)

// GPT partition types besides basic data and Microsoft Reserved (Learn
// "CreatePartition method of the MSFT_Disk class").
const modelGPTSystem = "c12a7328-f81f-11d2-ba4b-00a0c93ec93b"

// Storage bus and MBR types the model uses.
const (
	modelBusSCSI = 1  // STORAGE_BUS_TYPE BusTypeScsi
	modelBusNVMe = 17 // STORAGE_BUS_TYPE BusTypeNvme
	// modelMBRHuge is PARTITION_HUGE, CreatePartition's default MbrType.
	modelMBRHuge = 6
)

// modelDisk is one disk: what the IOCTLs on its handle and its MSFT_Disk
// instance report.
type modelDisk struct {
	number  uint32
	iface   string // device interface path, as CM_Get_Device_Interface_List lists it
	size    int64
	offline bool // DISK_ATTRIBUTE_OFFLINE, MSFT_Disk.IsOffline
	system  bool // holds the boot and system partitions
	style   uint32
	parts   []*modelPartition // sorted by offset
	scsi    *scsiAddress      // nil: IOCTL_SCSI_GET_ADDRESS is not supported
	ids     []storageID       // the device's VPD page 0x83 descriptors
	serial  string
	busType uint32
	// pciBus is the PCI bus of an NVMe disk's controller, which its
	// MSFT_Disk.Location names ("Integrated : Bus N : Device 0 : ...").
	pciBus uint8
}

// modelPartition is one partition-table entry.
type modelPartition struct {
	number       uint32
	offset, size int64
	gptType      string // GPT: lower-case GUID without braces
	mbrType      uint8  // MBR
	vol          *modelVolume
}

// modelVolume is the volume on a partition.
type modelVolume struct {
	guid    string // \\?\Volume{…}\, lower case
	disk    *modelDisk
	part    *modelPartition
	fs      string     // "NTFS", "ReFS", "FAT32"…; "" while RAW
	root    *modelNode // the file tree; nil while RAW
	flushes int
}

// present tells whether the volume's device exists: a disk taken offline
// takes its volumes with it (they come back, with their GUIDs and mount
// points, when it is brought online again).
func (v *modelVolume) present() bool { return !v.disk.offline }

// used is what a freshly formatted file system takes plus the files on
// it, each rounded up to whole clusters. The metadata overhead is the
// simulated host's formula (simulated.NTFSOverhead), so both report the
// same statistics for the same world; what real NTFS takes is
// unconfirmed (fact sheet §C.8).
func (v *modelVolume) used() int64 {
	return min(simulated.NTFSOverhead(v.part.size)+v.root.treeBytes(), v.part.size)
}

// modelNode is an entry of a volume's file tree. Names keep their case;
// children are keyed by the lower-cased name, as NTFS compares them.
type modelNode struct {
	name     string
	dir      bool                  // FILE_ATTRIBUTE_DIRECTORY
	children map[string]*modelNode // plain directories only
	size     int64                 // files
	// tag and reparse are the reparse point, as FindFirstFileW and
	// FSCTL_GET_REPARSE_POINT report it; tag 0 is no reparse point.
	tag     uint32
	reparse []byte
	// target is where a symbolic link or junction leads (a drive path);
	// volume is the volume GUID path of a volume mount point.
	target string
	volume string
}

func newModelDir(name string) *modelNode {
	return &modelNode{name: name, dir: true, children: map[string]*modelNode{}}
}

// treeBytes is the space the files under n take, in whole clusters;
// reparse points take none and are never entered.
func (n *modelNode) treeBytes() int64 {
	if n.tag != 0 {
		return 0
	}
	if !n.dir {
		return (n.size + modelCluster - 1) / modelCluster * modelCluster
	}
	var sum int64
	for _, c := range n.children {
		sum += c.treeBytes()
	}
	return sum
}

// mountAt turns the empty directory n into a mount point of vol, with the
// reparse data SetVolumeMountPointW writes: tag IO_REPARSE_TAG_MOUNT_POINT,
// substitute name \??\Volume{GUID}\ and an empty print name (fact sheet
// §3.4; the empty print name is unconfirmed).
func (n *modelNode) mountAt(vol string) {
	n.children = nil
	n.tag = reparseTagMountPoint
	n.volume = vol
	n.reparse = mountPointReparseBuf(`\??\`+strings.TrimPrefix(vol, `\\?\`), "")
}

// unmount turns a mount point back into an empty directory.
func (n *modelNode) unmount() {
	n.children = map[string]*modelNode{}
	n.tag, n.volume, n.reparse = 0, "", nil
}

// modelHandle is an open handle: a disk, a volume, or a file or directory.
type modelHandle struct {
	path string
	mode openMode
	disk *modelDisk
	vol  *modelVolume
	file *modelNode
}

// modelDiskSpec describes a disk to attach.
type modelDiskSpec struct {
	Number uint32
	Size   int64
	// Location is "adapter:bus:target:lun" (SCSI_ADDRESS PortNumber,
	// PathId, TargetId, Lun); "" is a disk that does not answer
	// IOCTL_SCSI_GET_ADDRESS. On the NVMe bus it is the PCI bus number of
	// the disk's controller.
	Location string
	// BusType is "NVMe" for a disk on the NVMe bus, else SCSI.
	BusType string
	// Page83 is the device's page 0x83 identifier: hex for a binary (NAA)
	// identifier, anything else an ASCII (T10 vendor ID) one; "" for none.
	Page83  string
	Serial  string
	Offline bool
	System  bool
	// Style is partitionStyleRAW, partitionStyleGPT or partitionStyleMBR.
	Style      uint32
	Partitions []modelPartitionSpec
}

// modelPartitionSpec describes a partition of a disk to attach.
type modelPartitionSpec struct {
	Number       uint32
	Offset, Size int64
	GPTType      string // GPT disks; every type but Microsoft Reserved gets a volume
	MBRType      uint8  // MBR disks
	FileSystem   string // "" leaves the volume RAW
	DriveLetter  byte
}

// newWinModel returns a model with the given disks and working
// directories (created on their drives with their parents). It fails the
// test when a handle is left open.
func newWinModel(t testing.TB, disks []modelDiskSpec, workingDirs ...string) *winModel {
	m := &winModel{
		t:          t,
		disks:      map[uint32]*modelDisk{},
		letters:    map[byte]*modelVolume{},
		handles:    map[handle]*modelHandle{},
		nextHandle: 0x1000,
	}
	for _, spec := range disks {
		m.attach(spec)
	}
	for _, dir := range workingDirs {
		if err := m.mkdirAll(dir); err != nil {
			t.Fatalf("model: create working dir %s: %v", dir, err)
		}
	}
	t.Cleanup(func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		for h, mh := range m.handles {
			t.Errorf("model: handle %#x on %s left open", h, mh.path)
		}
	})
	return m
}

// attach adds a disk built from spec.
func (m *winModel) attach(spec modelDiskSpec) {
	if _, dup := m.disks[spec.Number]; dup {
		m.t.Fatalf("model: disk %d attached twice", spec.Number)
	}
	d := &modelDisk{
		number: spec.Number,
		// The form Hyper-V SCSI disks show (fact sheet §1.1); the instance
		// part is unique per disk.
		iface:   fmt.Sprintf(`\\?\scsi#disk&ven_msft&prod_virtual_disk#5&2a7b6c9&0&%06d#{53f56307-b6bf-11d0-94f2-00a0c91efb8b}`, spec.Number),
		size:    spec.Size,
		offline: spec.Offline,
		system:  spec.System,
		style:   spec.Style,
		ids:     modelDeviceIDs(spec.Page83),
		serial:  spec.Serial,
		busType: modelBusSCSI,
	}
	if strings.EqualFold(spec.BusType, "NVMe") {
		// The NVMe miniport answers IOCTL_SCSI_GET_ADDRESS with zeros
		// (issue 11 item 5: LUN 0 on every NVMe namespace), and MSFT_Disk
		// names the PCI location instead.
		d.busType, d.scsi = modelBusNVMe, &scsiAddress{}
		bus, err := strconv.ParseUint(spec.Location, 10, 8)
		if err != nil {
			m.t.Fatalf("model: NVMe disk %d: PCI bus %q: %v", spec.Number, spec.Location, err)
		}
		d.pciBus = uint8(bus)
		spec.Location = ""
	}
	if spec.Location != "" {
		var a [4]uint8
		parts := strings.Split(spec.Location, ":")
		if len(parts) != 4 {
			m.t.Fatalf("model: location %q is not adapter:bus:target:lun", spec.Location)
		}
		for i, s := range parts {
			n, err := strconv.ParseUint(s, 10, 8)
			if err != nil {
				m.t.Fatalf("model: location %q: %v", spec.Location, err)
			}
			a[i] = uint8(n)
		}
		d.scsi = &scsiAddress{PortNumber: a[0], PathID: a[1], TargetID: a[2], Lun: a[3]}
	}
	for _, ps := range spec.Partitions {
		p := &modelPartition{number: ps.Number, offset: ps.Offset, size: ps.Size, gptType: ps.GPTType, mbrType: ps.MBRType}
		if p.hasVolume(d.style) {
			v := m.newVolume(d, p)
			if ps.FileSystem != "" {
				v.fs, v.root = ps.FileSystem, newModelDir("")
			}
			if ps.DriveLetter != 0 {
				m.letters[ps.DriveLetter] = v
			}
		}
		d.parts = append(d.parts, p)
	}
	sort.Slice(d.parts, func(i, j int) bool { return d.parts[i].offset < d.parts[j].offset })
	m.disks[d.number] = d
}

// modelDeviceIDs lays out a page 0x83 identifier as a device reports it:
// a binary NAA identifier after a port-relative one (association "port"),
// which upstream's first-match rule skips; a non-hex identifier is an
// ASCII T10 vendor ID, as Google PDs give.
func modelDeviceIDs(page83 string) []storageID {
	if page83 == "" {
		return nil
	}
	raw, err := hex.DecodeString(page83)
	if err != nil {
		return []storageID{{codeSet: codeSetASCII, typ: 1, assoc: associationDevice, value: []byte(page83)}}
	}
	return []storageID{
		{codeSet: codeSetBinary, typ: 4, assoc: 1, value: []byte{0, 0, 0, 1}},
		{codeSet: codeSetBinary, typ: 3, assoc: associationDevice, value: raw},
	}
}

// hasVolume tells whether Windows gives the partition a volume: every
// used MBR entry that is not an extended container, every GPT partition
// except the Microsoft Reserved one. (The EFI system partition gets one,
// as Get-Volume lists it and the simulated host models it; fact sheet
// §1.6 says only basic data partitions do: unconfirmed which holds.)
func (p *modelPartition) hasVolume(style uint32) bool {
	if style == partitionStyleMBR {
		return p.mbrType != 0 && !mbrContainerTypes[p.mbrType]
	}
	return p.gptType != gptMicrosoftReserved
}

// newVolume gives p a new RAW volume with the next deterministic GUID.
func (m *winModel) newVolume(d *modelDisk, p *modelPartition) *modelVolume {
	m.volumeSeq++
	v := &modelVolume{guid: fmt.Sprintf(`\\?\Volume{%08x-0000-4000-8000-00000000%04x}\`, 0x5eed0000+m.volumeSeq, d.number), disk: d, part: p}
	p.vol = v
	return v
}

// lastUsable is where partitions must end: the last 1 MiB boundary
// before the backup GPT.
func (d *modelDisk) lastUsable() int64 { return (d.size - modelGPTTail) / modelMiB * modelMiB }

// maxSize is the size p can grow to: up to the next partition or the end
// of the usable area (MSFT_Partition.GetSupportedSize's SizeMax).
func (d *modelDisk) maxSize(p *modelPartition) int64 {
	end := d.lastUsable()
	for _, q := range d.parts {
		if q.offset > p.offset && q.offset < end {
			end = q.offset
		}
	}
	return max(end-p.offset, p.size)
}

// findVolume returns the volume with the GUID path id (without case), or nil.
func (m *winModel) findVolume(id string) *modelVolume {
	for _, d := range m.disks {
		for _, p := range d.parts {
			if p.vol != nil && strings.EqualFold(p.vol.guid, volumeRoot(id)) {
				return p.vol
			}
		}
	}
	return nil
}

func (m *winModel) sortedDisks() []*modelDisk {
	out := make([]*modelDisk, 0, len(m.disks))
	for _, d := range m.disks {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].number < out[j].number })
	return out
}

func errno(code uint32) error { return syscall.Errno(code) }

// ---- Paths and the file tree ----

// modelSplit parses a path as the backend hands it to Win32: a drive path
// (C:\a\b) or a volume GUID path (\\?\Volume{…}\a), with or without the
// \\?\ prefix and a trailing backslash. root is the upper-case drive
// letter or the volume GUID path.
func modelSplit(p string) (root string, elems []string, err error) {
	rest := strings.TrimPrefix(p, `\\?\`)
	switch {
	case len(rest) >= 2 && rest[1] == ':' && (rest[0] >= 'A' && rest[0] <= 'Z' || rest[0] >= 'a' && rest[0] <= 'z'):
		root, rest = strings.ToUpper(rest[:1]), rest[2:]
	case hasPrefixFold(rest, "Volume{") && strings.IndexByte(rest, '}') > 0:
		end := strings.IndexByte(rest, '}')
		root, rest = `\\?\`+rest[:end+1]+`\`, rest[end+1:]
	default:
		return "", nil, errno(modelErrInvalidName)
	}
	for _, e := range strings.Split(rest, `\`) {
		if e != "" {
			elems = append(elems, e)
		}
	}
	return root, elems, nil
}

// rootVolume returns the volume a drive letter or volume GUID path names,
// whether or not it can be entered.
func (m *winModel) rootVolume(root string) *modelVolume {
	if len(root) == 1 {
		return m.letters[root[0]]
	}
	return m.findVolume(root)
}

// enter checks that a path may go into vol's file tree. A volume that is
// not present (gone, or its disk offline) is ERROR_PATH_NOT_FOUND (what
// Windows answers through a dangling mounted folder is unconfirmed); a
// RAW one ERROR_UNRECOGNIZED_VOLUME ("The volume does not contain a
// recognized file system").
func (m *winModel) enter(v *modelVolume) (*modelVolume, error) {
	switch {
	case v == nil || !v.present():
		return nil, errno(errPathNotFound)
	case v.root == nil:
		return nil, errno(errUnrecognizedVolume)
	}
	return v, nil
}

// modelPlace is where a lookup ended.
type modelPlace struct {
	parent *modelNode // the directory holding node; nil at a volume root
	name   string
	node   *modelNode // nil: the last element does not exist
	vol    *modelVolume
}

// lookup resolves p. Reparse points inside the path are followed (mount
// points into their volume, links and junctions to their target); the last
// element only with followLast, as CreateFileW without
// FILE_FLAG_OPEN_REPARSE_POINT does. A missing last element is a place
// with a nil node; a missing directory on the way ERROR_PATH_NOT_FOUND.
func (m *winModel) lookup(p string, followLast bool) (modelPlace, error) {
	hops := 0
	return m.walk(p, followLast, &hops)
}

func (m *winModel) walk(p string, followLast bool, hops *int) (modelPlace, error) {
	root, elems, err := modelSplit(p)
	if err != nil {
		return modelPlace{}, err
	}
	vol, err := m.enter(m.rootVolume(root))
	if err != nil {
		return modelPlace{}, err
	}
	pl := modelPlace{node: vol.root, vol: vol}
	for i, e := range elems {
		last := i == len(elems)-1
		dir := pl.node
		if dir.children == nil {
			return modelPlace{}, errno(errPathNotFound) // a file on the way
		}
		child := dir.children[strings.ToLower(e)]
		if child == nil {
			if !last {
				return modelPlace{}, errno(errPathNotFound)
			}
			return modelPlace{parent: dir, name: e, vol: pl.vol}, nil
		}
		here := modelPlace{parent: dir, name: child.name, node: child, vol: pl.vol}
		switch {
		case last && !followLast, child.tag == 0:
			pl = here
		case child.volume != "":
			v, err := m.enter(m.findVolume(child.volume))
			if err != nil {
				return modelPlace{}, err
			}
			pl = modelPlace{node: v.root, vol: v}
		default:
			if *hops++; *hops > modelMaxHops {
				return modelPlace{}, errno(modelErrCantResolve)
			}
			if !last && !child.dir {
				return modelPlace{}, errno(errDirectory) // a file link used as a directory
			}
			t, err := m.walk(child.target, true, hops)
			if err != nil {
				return modelPlace{}, err
			}
			if !last && t.node == nil {
				return modelPlace{}, errno(errPathNotFound)
			}
			pl = t
		}
	}
	return pl, nil
}

// mkdirAll creates p and its missing parents (test setup, and the
// filesystem host's Mkdir). An existing directory, mount point or link to
// a directory is success; anything else there is errdefs.ErrAlreadyExists.
func (m *winModel) mkdirAll(p string) error {
	pl, err := m.lookup(p, false)
	if isErrno(err, errPathNotFound) {
		parent := hostpath.Windows.Dir(strings.TrimSuffix(p, `\`))
		if parent == p {
			return err
		}
		if err := m.mkdirAll(parent); err != nil {
			return err
		}
		pl, err = m.lookup(p, false)
	}
	switch {
	case err != nil:
		return err
	case pl.node == nil:
		pl.parent.children[strings.ToLower(pl.name)] = newModelDir(pl.name)
		return nil
	case pl.parent == nil, pl.node.dir && (pl.node.tag == 0 || pl.node.volume != ""):
		return nil
	case pl.node.tag != 0:
		if t, err := m.lookup(p, true); err == nil && t.node != nil && t.node.dir {
			return nil
		}
	}
	return errdefs.Errorf(errdefs.ErrAlreadyExists, "%q exists and is not a directory", p)
}

// writeFile creates (or replaces) the file p of size bytes, following
// links; the parent must exist. Tests use it to fill volumes.
func (m *winModel) writeFile(p string, size int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	pl, err := m.lookup(p, true)
	switch {
	case err != nil:
		return err
	case pl.parent == nil || pl.node != nil && pl.node.dir:
		return errno(errAccessDenied) // CreateFileW on a directory
	}
	pl.parent.children[strings.ToLower(pl.name)] = &modelNode{name: pl.name, size: size}
	return nil
}

// link creates a symbolic link (CreateSymbolicLinkW) or, with junction, a
// directory junction at l leading to the drive path target, with the
// reparse data Windows writes: substitute name \??\target, print name
// target, flags 0 for an absolute link. dir is SYMBOLIC_LINK_FLAG_DIRECTORY.
func (m *winModel) link(l, target string, dir, junction bool) error {
	pl, err := m.lookup(l, false)
	switch {
	case err != nil:
		return err
	case pl.parent == nil || pl.node != nil:
		return errno(modelErrAlreadyExists)
	}
	n := &modelNode{name: pl.name, dir: dir, target: target}
	if junction {
		n.dir, n.tag, n.reparse = true, reparseTagMountPoint, mountPointReparseBuf(`\??\`+target, target)
	} else {
		n.tag, n.reparse = reparseTagSymlink, symlinkReparseBuf(`\??\`+target, target, false)
	}
	pl.parent.children[strings.ToLower(pl.name)] = n
	return nil
}

// ---- The system seam ----

func (m *winModel) diskInterfaces() ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, d := range m.sortedDisks() {
		out = append(out, d.iface)
	}
	return out, nil
}

// volumes lists the present volumes, newest disk first: FindFirstVolume's
// order is not documented, and the backend must not depend on it.
func (m *winModel) volumes() ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	disks := m.sortedDisks()
	slices.Reverse(disks)
	for _, d := range disks {
		for _, p := range d.parts {
			if p.vol != nil && p.vol.present() {
				out = append(out, p.vol.guid)
			}
		}
	}
	return out, nil
}

// diskByDevice finds the disk \\.\PhysicalDriveN or a device interface
// path names.
func (m *winModel) diskByDevice(path string) *modelDisk {
	const prefix = `\\.\PhysicalDrive`
	if hasPrefixFold(path, prefix) {
		n, err := strconv.ParseUint(path[len(prefix):], 10, 32)
		if err != nil {
			return nil
		}
		return m.disks[uint32(n)]
	}
	for _, d := range m.disks {
		if strings.EqualFold(d.iface, path) {
			return d
		}
	}
	return nil
}

func (m *winModel) open(path string, mode openMode) (handle, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := &modelHandle{path: path, mode: mode}
	switch {
	case mode == modeReparse:
		pl, err := m.lookup(path, false)
		if err != nil {
			return 0, err
		}
		if pl.node == nil {
			return 0, errno(errFileNotFound)
		}
		h.file = pl.node
	case m.diskByDevice(path) != nil:
		h.disk = m.diskByDevice(path)
	case hasPrefixFold(path, `\\?\Volume{`) && !strings.HasSuffix(path, `\`):
		// The volume itself (no trailing backslash, which would open its
		// root directory). A volume whose disk is offline has no device.
		v := m.findVolume(path)
		if v == nil || !v.present() {
			return 0, errno(errFileNotFound)
		}
		h.vol = v
	case strings.HasPrefix(path, `\\.\`):
		return 0, errno(errFileNotFound) // no such device
	default:
		pl, err := m.lookup(path, true)
		if err != nil {
			return 0, err
		}
		if pl.node == nil {
			return 0, errno(errFileNotFound)
		}
		h.file = pl.node
	}
	m.nextHandle++
	m.handles[m.nextHandle] = h
	return m.nextHandle, nil
}

func (m *winModel) close(h handle) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.handles[h]; !ok {
		m.t.Errorf("model: CloseHandle(%#x), which is not open", h)
		return errno(errInvalidHandle)
	}
	delete(m.handles, h)
	return nil
}

func (m *winModel) ioctl(h handle, code uint32, in []byte, outLen int) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mh, ok := m.handles[h]
	if !ok {
		m.t.Errorf("model: DeviceIoControl on handle %#x, which is not open", h)
		return nil, errno(errInvalidHandle)
	}
	switch {
	case mh.disk != nil:
		return m.diskIoctl(mh, code, in, outLen)
	case mh.vol != nil:
		return m.volumeIoctl(mh, code, outLen)
	}
	if code != fsctlGetReparsePoint {
		return nil, errno(errInvalidFunction)
	}
	if mh.file.tag == 0 {
		return nil, errno(errNotAReparsePoint)
	}
	return fixed(mh.file.reparse)(in, outLen)
}

// diskIoctl answers the IOCTLs a disk handle takes, each built from the
// disk's state with the documented layout.
func (m *winModel) diskIoctl(h *modelHandle, code uint32, in []byte, outLen int) ([]byte, error) {
	d := h.disk
	switch code {
	case ioctlStorageGetDeviceNumber:
		return fixed(deviceNumberBuf(fileDeviceDisk, d.number, 0))(in, outLen)
	case ioctlStorageQueryProperty:
		if len(in) < 8 || le.Uint32(in[4:]) != 0 {
			return nil, errno(errInvalidParameter)
		}
		switch le.Uint32(in) {
		case storageDeviceProperty:
			return truncating(deviceDescriptorBuf(d.busType, "Msft", "Virtual Disk", "1.0", d.serial))(in, outLen)
		case storageDeviceIDProperty:
			if len(d.ids) == 0 {
				return nil, errno(errNotSupported) // no VPD page 0x83
			}
			return truncating(deviceIDDescriptorBuf(d.ids...))(in, outLen)
		}
		return nil, errno(errNotSupported)
	case ioctlSCSIGetAddress:
		if d.scsi == nil {
			return nil, errno(errInvalidFunction)
		}
		return fixed(scsiAddressBuf(d.scsi.PortNumber, d.scsi.PathID, d.scsi.TargetID, d.scsi.Lun))(in, outLen)
	case ioctlDiskGetLengthInfo:
		if h.mode != modeRead && h.mode != modeReadWrite {
			return nil, errno(errAccessDenied) // FILE_READ_ACCESS
		}
		return fixed(lengthInfoBuf(uint64(d.size)))(in, outLen)
	case ioctlDiskGetDriveLayoutEx:
		return fixed(d.layoutBuf())(in, outLen)
	case ioctlDiskGetDiskAttributes:
		var attrs uint64
		if d.offline {
			attrs |= diskAttributeOffline
		}
		return fixed(diskAttributesBuf(attrs))(in, outLen)
	}
	return nil, errno(errInvalidFunction)
}

// layoutBuf is the disk's DRIVE_LAYOUT_INFORMATION_EX.
func (d *modelDisk) layoutBuf() []byte {
	switch d.style {
	case partitionStyleGPT:
		entries := make([]gptEntry, 0, len(d.parts))
		for _, p := range d.parts {
			entries = append(entries, gptEntry{p.number, p.gptType, uint64(p.offset), uint64(p.size)})
		}
		b := gptLayoutBuf(entries...)
		// gptLayoutBuf describes a 1 GiB disk; UsableLength is this one's.
		put64(b, 32, uint64(d.size-modelGPTHead-modelGPTTail))
		return b
	case partitionStyleMBR:
		entries := make([]mbrEntry, 0, len(d.parts))
		for _, p := range d.parts {
			entries = append(entries, mbrEntry{p.number, p.mbrType, uint64(p.offset), uint64(p.size)})
		}
		return mbrLayoutBuf(entries...)
	}
	return rawLayoutBuf()
}

func (m *winModel) volumeIoctl(h *modelHandle, code uint32, outLen int) ([]byte, error) {
	v := h.vol
	switch code {
	case ioctlStorageGetDeviceNumber:
		return fixed(deviceNumberBuf(fileDeviceDisk, v.disk.number, v.part.number))(nil, outLen)
	case ioctlVolumeGetVolumeDiskExtents:
		b := extentsBuf(v.disk.number)
		put64(b, 8+8, uint64(v.part.offset)) // the real extent over the builder's placeholder
		put64(b, 8+16, uint64(v.part.size))
		return moreData(b)(nil, outLen)
	case ioctlDiskGetLengthInfo:
		if h.mode != modeRead && h.mode != modeReadWrite {
			return nil, errno(errAccessDenied)
		}
		return fixed(lengthInfoBuf(uint64(v.part.size)))(nil, outLen)
	}
	return nil, errno(errInvalidFunction)
}

// flush is FlushFileBuffers: on a volume it needs a handle opened for
// writing (Learn "FlushFileBuffers").
func (m *winModel) flush(h handle) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	mh, ok := m.handles[h]
	switch {
	case !ok:
		m.t.Errorf("model: FlushFileBuffers on handle %#x, which is not open", h)
		return errno(errInvalidHandle)
	case mh.vol != nil && mh.mode != modeReadWrite:
		return errno(errAccessDenied)
	case mh.vol != nil:
		mh.vol.flushes++
	}
	return nil
}

// mountPointPath checks the trailing backslash the mount point functions
// require (Learn: "The string must end with a trailing backslash").
func mountPointPath(mp string) error {
	if !strings.HasSuffix(mp, `\`) {
		return errno(modelErrInvalidName)
	}
	return nil
}

func (m *winModel) volumeNameForMountPoint(mp string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := mountPointPath(mp); err != nil {
		return "", err
	}
	root, elems, err := modelSplit(mp)
	if err != nil {
		return "", err
	}
	if len(elems) == 0 {
		v := m.rootVolume(root)
		if v == nil || !v.present() {
			return "", errno(errFileNotFound)
		}
		return v.guid, nil
	}
	pl, err := m.lookup(mp, false)
	switch {
	case err != nil:
		return "", err
	case pl.node == nil:
		return "", errno(errFileNotFound)
	case pl.node.volume != "":
		v := m.findVolume(pl.node.volume)
		if v == nil || !v.present() {
			return "", errno(errFileNotFound) // a dangling mounted folder
		}
		return v.guid, nil
	case pl.node.tag != 0:
		// A link is opened through: a link to a mounted folder or drive
		// root names that volume.
		if t, err := m.lookup(mp, true); err == nil && t.parent == nil {
			return t.vol.guid, nil
		}
	}
	return "", errno(errNotAReparsePoint)
}

// setVolumeMountPoint is SetVolumeMountPointW: the folder must be an
// existing empty directory on a formatted volume; a folder that is
// already a reparse point fails with ERROR_DIR_NOT_EMPTY even when empty
// (fact sheet §2.1).
func (m *winModel) setVolumeMountPoint(mp, vol string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := mountPointPath(mp); err != nil {
		return err
	}
	if !strings.HasSuffix(vol, `\`) || !hasPrefixFold(vol, `\\?\Volume{`) {
		return errno(errInvalidParameter)
	}
	pl, err := m.lookup(mp, false)
	switch {
	case err != nil:
		return err
	case pl.node == nil:
		return errno(errFileNotFound)
	case pl.parent == nil:
		return errno(errInvalidParameter) // drive letters are not modelled
	case !pl.node.dir:
		return errno(errDirectory)
	case pl.node.tag != 0 || len(pl.node.children) > 0:
		return errno(errDirNotEmpty)
	}
	v := m.findVolume(vol)
	if v == nil || !v.present() {
		return errno(errFileNotFound)
	}
	pl.node.mountAt(v.guid)
	return nil
}

// deleteVolumeMountPoint is DeleteVolumeMountPointW: the mounted folder
// becomes an empty directory again. On a directory that is not a mounted
// folder the model answers ERROR_NOT_A_REPARSE_POINT (Learn says it "does
// nothing"; the exact answer is unconfirmed).
func (m *winModel) deleteVolumeMountPoint(mp string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := mountPointPath(mp); err != nil {
		return err
	}
	pl, err := m.lookup(mp, false)
	switch {
	case err != nil:
		return err
	case pl.node == nil:
		return errno(errFileNotFound)
	case pl.parent == nil:
		return errno(errInvalidParameter)
	case pl.node.volume == "":
		return errno(errNotAReparsePoint)
	}
	pl.node.unmount()
	return nil
}

// fileSystemName is GetVolumeInformationW on a root: a drive root, a
// volume GUID path or a mounted folder, each with its trailing backslash.
func (m *winModel) fileSystemName(root string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := mountPointPath(root); err != nil {
		return "", err
	}
	pl, err := m.lookup(root, true)
	switch {
	case err != nil:
		return "", err
	case pl.parent != nil:
		return "", errno(modelErrDirNotRoot)
	}
	return pl.vol.fs, nil
}

// diskFreeSpace is GetDiskFreeSpaceExW: the size and free bytes of the
// volume holding dir (links followed).
func (m *winModel) diskFreeSpace(dir string) (uint64, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pl, err := m.lookup(dir, true)
	switch {
	case err != nil:
		return 0, 0, err
	case pl.node == nil:
		return 0, 0, errno(errFileNotFound)
	}
	total := pl.vol.part.size
	return uint64(total), uint64(total - pl.vol.used()), nil
}

// attributes is GetFileAttributesW, which reports a reparse point itself
// rather than what it leads to.
func (m *winModel) attributes(path string) (uint32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pl, err := m.lookup(path, false)
	switch {
	case err != nil:
		return 0, err
	case pl.node == nil:
		return 0, errno(errFileNotFound)
	}
	return pl.node.attributes(), nil
}

func (n *modelNode) attributes() uint32 {
	const fileAttributeArchive = 0x20
	var a uint32 = fileAttributeArchive
	if n.dir {
		a = fileAttributeDirectory
	}
	if n.tag != 0 {
		a |= fileAttributeReparsePoint
	}
	return a
}

// reparseTag is WIN32_FIND_DATAW.dwReserved0 from FindFirstFileW, which
// does not follow the last element.
func (m *winModel) reparseTag(path string) (uint32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pl, err := m.lookup(path, false)
	switch {
	case err != nil:
		return 0, err
	case pl.node == nil:
		return 0, errno(errFileNotFound)
	}
	return pl.node.tag, nil
}

// mkdir is CreateDirectoryW: one level, the parent must exist.
func (m *winModel) mkdir(path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	pl, err := m.lookup(path, false)
	switch {
	case err != nil:
		return err
	case pl.node != nil || pl.parent == nil:
		return errno(modelErrAlreadyExists)
	}
	pl.parent.children[strings.ToLower(pl.name)] = newModelDir(pl.name)
	return nil
}

// ---- WMI: the Storage Management API ----

// modelInstance is one WMI object: its properties, decoded the way
// wmi.Client decodes them (uint16/uint32 as int64, uint64 as decimal
// strings, NULL as nil), and the model object behind it.
type modelInstance struct {
	props wmi.Props
	disk  *modelDisk
	part  *modelPartition
	vol   *modelVolume
}

// MSFT_Disk.PartitionStyle and MSFT_Volume.FileSystemType values (fact
// sheet §1.6, §2.3).
var (
	msftPartitionStyle = map[uint32]int64{partitionStyleRAW: 0, partitionStyleMBR: 1, partitionStyleGPT: msftPartitionStyleGPT}
	msftFileSystemType = map[string]int64{"": 0, "FAT32": 6, "NTFS": 14, "ReFS": 15}
)

func u64(n int64) string { return strconv.FormatInt(n, 10) }

// instances lists the instances of a class the storage provider reports.
// Partitions of offline disks are listed (their table is readable); the
// volumes of offline disks are not (their devices are gone).
func (m *winModel) instances(class string) ([]modelInstance, error) {
	if !slices.ContainsFunc([]string{classDisk, classPartition, classVolume}, func(c string) bool { return strings.EqualFold(c, class) }) {
		return nil, &wmi.COMError{Op: "ExecQuery", HRESULT: 0x80041010} // WBEM_E_INVALID_CLASS
	}
	var out []modelInstance
	for _, d := range m.sortedDisks() {
		switch {
		case strings.EqualFold(class, classDisk):
			loc := any(nil)
			if a := d.scsi; d.busType == modelBusNVMe {
				loc = fmt.Sprintf("Integrated : Bus %d : Device 0 : Function 0 : Adapter 0", d.pciBus)
			} else if a != nil {
				loc = fmt.Sprintf("Integrated : Adapter %d : Port %d : Target %d : LUN %d", a.PortNumber, a.PathID, a.TargetID, a.Lun)
			}
			out = append(out, modelInstance{disk: d, props: wmi.Props{
				"Number": int64(d.number), "Path": d.iface, "Location": loc, "Size": u64(d.size),
				"IsOffline": d.offline, "PartitionStyle": msftPartitionStyle[d.style], "SerialNumber": d.serial,
				"BusType": int64(d.busType), "IsSystem": d.system, "IsBoot": d.system, "NumberOfPartitions": int64(len(d.parts)),
			}})
		case strings.EqualFold(class, classPartition):
			for _, p := range d.parts {
				props := wmi.Props{
					"DiskNumber": int64(d.number), "PartitionNumber": int64(p.number), "Offset": u64(p.offset), "Size": u64(p.size),
					"GptType": nil, "MbrType": nil, "DriveLetter": nil, "IsOffline": false,
				}
				if d.style == partitionStyleGPT {
					props["GptType"] = "{" + p.gptType + "}"
				} else {
					props["MbrType"] = int64(p.mbrType)
				}
				if l := m.letterOf(p.vol); l != 0 {
					props["DriveLetter"] = int64(l)
				}
				out = append(out, modelInstance{disk: d, part: p, props: props})
			}
		default: // MSFT_Volume
			for _, p := range d.parts {
				v := p.vol
				if v == nil || !v.present() {
					continue
				}
				props := wmi.Props{
					"UniqueId": v.guid, "Path": v.guid, "FileSystem": v.fs, "FileSystemType": msftFileSystemType[v.fs],
					"Size": u64(p.size), "SizeRemaining": "0", "DriveLetter": nil,
				}
				if v.root != nil {
					props["SizeRemaining"] = u64(p.size - v.used())
				}
				if l := m.letterOf(v); l != 0 {
					props["DriveLetter"] = int64(l)
				}
				out = append(out, modelInstance{disk: d, part: p, vol: v, props: props})
			}
		}
	}
	return out, nil
}

// letterOf returns v's drive letter, or 0.
func (m *winModel) letterOf(v *modelVolume) byte {
	for l, lv := range m.letters {
		if v != nil && lv == v {
			return l
		}
	}
	return 0
}

// modelCond is one WHERE condition of a query.
type modelCond struct {
	prop string
	op   string // "=" or "<>"
	lit  any    // string, bool or int64
}

// modelConditions parses the WHERE clause of a query wmi.WQL built:
// conditions "Prop op literal" joined by AND, string literals quoted with
// backslash escapes (wmi.Literal).
func modelConditions(text string) ([]modelCond, error) {
	i := strings.Index(text, " WHERE ")
	if i < 0 {
		return nil, nil
	}
	s := text[i+len(" WHERE "):]
	var out []modelCond
	for {
		f := strings.SplitN(s, " ", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("model: cannot parse the condition %q", s)
		}
		c := modelCond{prop: f[0], op: f[1]}
		s = f[2]
		if strings.HasPrefix(s, "'") {
			var b strings.Builder
			j := 1
			for ; j < len(s) && s[j] != '\''; j++ {
				if s[j] == '\\' {
					j++
				}
				b.WriteByte(s[j])
			}
			c.lit, s = b.String(), s[j+1:]
		} else {
			tok := s
			if k := strings.Index(s, " AND "); k >= 0 {
				tok = s[:k]
			}
			s = s[len(tok):]
			switch tok {
			case "TRUE", "FALSE":
				c.lit = tok == "TRUE"
			default:
				n, err := strconv.ParseInt(tok, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("model: literal %q: %w", tok, err)
				}
				c.lit = n
			}
		}
		out = append(out, c)
		if s == "" {
			return out, nil
		}
		if !strings.HasPrefix(s, " AND ") {
			return nil, fmt.Errorf("model: cannot parse %q after a condition", s)
		}
		s = s[len(" AND "):]
	}
}

// propOf reads a property without case, as CIM names compare.
func propOf(p wmi.Props, name string) (any, bool) {
	for k, v := range p {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

// matches applies the conditions. A NULL property matches neither = nor
// <> (SQL semantics; what WQL does with <> on NULL is unconfirmed, fact
// sheet §C.18). Strings compare without case; numbers held as strings
// (uint64) compare as numbers.
func matches(p wmi.Props, conds []modelCond) (bool, error) {
	for _, c := range conds {
		v, ok := propOf(p, c.prop)
		if !ok {
			return false, &wmi.COMError{Op: "ExecQuery", HRESULT: 0x80041017, Description: "no property " + c.prop} // WBEM_E_INVALID_QUERY
		}
		if v == nil {
			return false, nil
		}
		var eq bool
		switch x := v.(type) {
		case string:
			switch l := c.lit.(type) {
			case string:
				eq = strings.EqualFold(x, l)
			case int64:
				eq = x == strconv.FormatInt(l, 10)
			}
		case int64:
			switch l := c.lit.(type) {
			case int64:
				eq = x == l
			case bool:
				eq = (x != 0) == l
			}
		case bool:
			switch l := c.lit.(type) {
			case bool:
				eq = x == l
			case int64:
				eq = x == (l != 0)
			}
		}
		if eq != (c.op == "=") {
			return false, nil
		}
	}
	return true, nil
}

// selectInstances runs q against the provider's instances.
func (m *winModel) selectInstances(q *wmi.WQL) ([]modelInstance, string, error) {
	text, err := q.Build()
	if err != nil {
		return nil, "", err
	}
	conds, err := modelConditions(text)
	if err != nil {
		m.t.Error(err)
		return nil, text, err
	}
	all, err := m.instances(q.Class())
	if err != nil {
		return nil, text, err
	}
	var out []modelInstance
	for _, in := range all {
		ok, err := matches(in.props, conds)
		if err != nil {
			return nil, text, err
		}
		if ok {
			out = append(out, in)
		}
	}
	return out, text, nil
}

func (m *winModel) query(ctx context.Context, q *wmi.WQL) ([]wmi.Props, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	found, _, err := m.selectInstances(q)
	if err != nil {
		return nil, err
	}
	rows := []wmi.Props{}
	for _, in := range found {
		row := in.props
		if names := q.Properties(); len(names) > 0 {
			row = wmi.Props{}
			for _, n := range names {
				v, ok := propOf(in.props, n)
				if !ok {
					return nil, &wmi.COMError{Op: "ExecQuery", HRESULT: 0x80041017, Description: "no property " + n}
				}
				row[n] = v
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// modelArgs are a method's in-parameters by lower-cased name, as the
// caller gave them to wmi.Arg.
type modelArgs map[string]any

func (a modelArgs) has(name string) bool {
	v, ok := a[strings.ToLower(name)]
	return ok && v != nil
}

func (a modelArgs) str(name string) string {
	s, _ := a[strings.ToLower(name)].(string)
	return s
}

func (a modelArgs) flag(name string) bool {
	b, _ := a[strings.ToLower(name)].(bool)
	return b
}

// number reads an integer parameter of any Go integer type, or a decimal
// string (how 64-bit values travel through scripting).
func (a modelArgs) number(name string) (uint64, bool) {
	switch x := a[strings.ToLower(name)].(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case int:
		return uint64(x), x >= 0
	case int32:
		return uint64(x), x >= 0
	case int64:
		return uint64(x), x >= 0
	case string:
		n, err := strconv.ParseUint(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}

func (m *winModel) call(ctx context.Context, q *wmi.WQL, method string, in ...wmi.Param) (wmi.Props, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	args := modelArgs{}
	for _, p := range in {
		if _, _, err := wmi.Encode(p.Value()); err != nil {
			m.t.Errorf("model: %s.%s parameter %s cannot be sent over COM: %v", q.Class(), method, p.Name(), err)
		}
		args[strings.ToLower(p.Name())] = p.Value()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	found, text, err := m.selectInstances(q)
	switch {
	case err != nil:
		return nil, err
	case len(found) == 0:
		return nil, errdefs.Errorf(errdefs.ErrNotFound, "no %s instance matches %s", q.Class(), text)
	case len(found) > 1:
		return nil, fmt.Errorf("%d %s instances match %s; refusing to call %s on more than one", len(found), q.Class(), text, method)
	}
	out, code := m.invoke(found[0], q.Class(), method, args)
	if out == nil {
		out = wmi.Props{}
	}
	out["ReturnValue"] = int64(code)
	if code != wmi.Success {
		return out, &wmi.MethodError{Class: q.Class(), Method: method, Code: code}
	}
	return out, nil
}

// invoke runs a Storage Management method on one instance and returns
// its out-parameters and ReturnValue.
func (m *winModel) invoke(in modelInstance, class, method string, args modelArgs) (wmi.Props, wmi.ReturnCode) {
	key := strings.ToLower(class + "." + method)
	switch key {
	case "msft_disk.initialize":
		return nil, m.initialize(in.disk, args)
	case "msft_disk.createpartition":
		return m.createPartition(in.disk, args)
	case "msft_disk.online", "msft_disk.offline":
		if in.disk.system && key == "msft_disk.offline" {
			return nil, modelCriticalDisk
		}
		in.disk.offline = key == "msft_disk.offline"
		return nil, wmi.Success
	case "msft_disk.refresh":
		return nil, wmi.Success
	case "msft_partition.online":
		// Partitions the model creates are online at once (SAN policy
		// OnlineAll); the call only needs the disk online.
		if in.disk.offline {
			return nil, wmi.DiskOffline
		}
		return nil, wmi.Success
	case "msft_partition.getsupportedsize":
		lo, hi, code := m.supportedSize(in.disk, in.part)
		if code != wmi.Success {
			return nil, code
		}
		return wmi.Props{"SizeMin": u64(lo), "SizeMax": u64(hi)}, wmi.Success
	case "msft_partition.resize":
		return nil, m.resize(in.disk, in.part, args)
	case "msft_volume.format":
		return m.format(in.vol, args)
	case "msft_volume.flush":
		in.vol.flushes++
		return nil, wmi.Success
	}
	m.t.Errorf("model: %s.%s is not modelled", class, method)
	return nil, wmi.NotSupported
}

// initialize is MSFT_Disk.Initialize: PartitionStyle 1 (MBR) or 2 (GPT,
// the default). Whether GPT initialisation adds a Microsoft Reserved
// partition is unconfirmed (fact sheet §C.5); the model adds none, as the
// simulated host.
func (m *winModel) initialize(d *modelDisk, args modelArgs) wmi.ReturnCode {
	style := uint64(msftPartitionStyleGPT)
	if args.has("PartitionStyle") {
		style, _ = args.number("PartitionStyle")
	}
	switch {
	case d.offline:
		return wmi.DiskOffline
	case d.style != partitionStyleRAW:
		return wmi.DiskAlreadyInitialized
	case style == 1:
		d.style = partitionStyleMBR
	case style == msftPartitionStyleGPT:
		d.style = partitionStyleGPT
	default:
		return wmi.InvalidParameter
	}
	return wmi.Success
}

// createPartition is MSFT_Disk.CreatePartition: a partition after the
// last one, 1 MiB aligned, of Size bytes or (UseMaximumSize) up to the
// last usable 1 MiB boundary, with a new RAW volume unless it is a
// Microsoft Reserved partition.
func (m *winModel) createPartition(d *modelDisk, args modelArgs) (wmi.Props, wmi.ReturnCode) {
	switch {
	case d.offline:
		return nil, wmi.DiskOffline
	case d.style == partitionStyleRAW:
		return nil, wmi.DiskNotInitialized
	case args.flag("UseMaximumSize") == args.has("Size"):
		return nil, modelSizeOrMaximum
	case args.has("DriveLetter") && args.flag("AssignDriveLetter"):
		return nil, wmi.InvalidParameter
	}
	p := &modelPartition{number: 1}
	switch d.style {
	case partitionStyleGPT:
		if args.has("MbrType") {
			return nil, wmi.ParameterNotValidForPartitionType
		}
		p.gptType = gptBasicData
		if t := strings.ToLower(strings.Trim(args.str("GptType"), "{}")); t != "" {
			p.gptType = t
		}
	case partitionStyleMBR:
		if args.has("GptType") {
			return nil, wmi.ParameterNotValidForPartitionType
		}
		if len(d.parts) >= 4 {
			return nil, modelPartitionLimit
		}
		p.mbrType = modelMBRHuge
		if t, ok := args.number("MbrType"); ok {
			p.mbrType = uint8(t)
		}
	}
	start := modelMiB
	for _, q := range d.parts {
		start = max(start, (q.offset+q.size+modelMiB-1)/modelMiB*modelMiB)
		p.number = max(p.number, q.number+1)
	}
	end := d.lastUsable()
	if size, ok := args.number("Size"); ok {
		if start+int64(size) > end {
			return nil, modelNotEnoughCapacity
		}
		end = start + int64(size)
	}
	if end-start < modelMiB {
		return nil, modelNotEnoughCapacity
	}
	p.offset, p.size = start, end-start
	d.parts = append(d.parts, p)
	if p.hasVolume(d.style) {
		v := m.newVolume(d, p)
		if args.flag("AssignDriveLetter") {
			for l := byte('D'); l <= 'Z'; l++ {
				if m.letters[l] == nil {
					m.letters[l] = v
					break
				}
			}
		}
	}
	return wmi.Props{"CreatedPartition": fmt.Sprintf("MSFT_Partition (DiskNumber = %d, PartitionNumber = %d)", d.number, p.number)}, wmi.Success
}

// supportedSize is MSFT_Partition.GetSupportedSize: SizeMin is what the
// file system holds (the defragmenter cannot move below it), SizeMax the
// partition plus the free space right after it.
func (m *winModel) supportedSize(d *modelDisk, p *modelPartition) (lo, hi int64, code wmi.ReturnCode) {
	if d.offline {
		return 0, 0, wmi.DiskOffline
	}
	lo = p.size
	if v := p.vol; v != nil && v.root != nil {
		lo = v.used()
	}
	return lo, d.maxSize(p), wmi.Success
}

// resize is MSFT_Partition.Resize: the partition and its file system take
// the new total size, within GetSupportedSize's bounds; a change of less
// than 1 MiB is "Size Not Supported", as Windows refuses tiny extents
// (kubernetes-csi/csi-proxy#195).
func (m *winModel) resize(d *modelDisk, p *modelPartition, args modelArgs) wmi.ReturnCode {
	size, ok := args.number("Size")
	if !ok || size == 0 {
		return wmi.InvalidParameter
	}
	lo, hi, code := m.supportedSize(d, p)
	switch {
	case code != wmi.Success:
		return code
	case int64(size) < lo || int64(size) > hi:
		return wmi.SizeNotSupported
	case int64(size)-p.size < modelMiB && p.size-int64(size) < modelMiB:
		return wmi.SizeNotSupported
	}
	p.size = int64(size)
	return wmi.Success
}

// format is MSFT_Volume.Format: a new empty file system (fact sheet §2.3).
func (m *winModel) format(v *modelVolume, args modelArgs) (wmi.Props, wmi.ReturnCode) {
	fs := map[string]string{"NTFS": "NTFS", "REFS": "ReFS", "FAT32": "FAT32"}[strings.ToUpper(args.str("FileSystem"))]
	switch {
	case fs == "":
		return nil, wmi.FileSystemNotSupported
	case v.disk.system:
		return nil, modelSystemPartitionOp
	}
	v.fs, v.root = fs, newModelDir("")
	return wmi.Props{"FormattedVolume": fmt.Sprintf("MSFT_Volume (UniqueId = %q)", v.guid)}, wmi.Success
}

func (m *winModel) callStatic(ctx context.Context, class, method string, _ ...wmi.Param) (wmi.Props, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if strings.EqualFold(class, classStorageSetting) && strings.EqualFold(method, "UpdateHostStorageCache") {
		m.rescans++
		return wmi.Props{"ReturnValue": int64(0)}, nil
	}
	m.t.Errorf("model: static %s.%s is not modelled", class, method)
	return nil, &wmi.COMError{Op: class + "." + method, HRESULT: 0x8004100C} // WBEM_E_NOT_SUPPORTED
}

var _ system = (*winModel)(nil)

// ---- Operator actions on the model ----

// resizeDisk grows disk n, as expanding a cloud disk does; its partitions
// keep their sizes until ResizeVolume.
func (m *winModel) resizeDisk(n uint32, size int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.disks[n].size = size
}

// ---- The filesystem group on the model's file tree ----

// modelFS is filesystem.Host over the model's file tree, so driver flows
// that create staging directories and publish links can run against the
// Windows storage backend over the same world. It follows the Windows
// filesystem backend (internal/host/windows/files) in what it accepts; its errors
// are the model's Win32 codes mapped as the storage backend maps them.
type modelFS struct{ m *winModel }

var _ filesystem.Host = modelFS{}

// fsError maps a Win32 code to its errdefs kind (osError); other errors
// pass through.
func fsError(op string, err error) error {
	if _, ok := errnoOf(err); ok {
		return osError(op, err)
	}
	return err
}

func (f modelFS) PathExists(_ context.Context, path string) (bool, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	pl, err := f.m.lookup(path, false)
	switch {
	case isErrno(err, errFileNotFound, errPathNotFound):
		return false, nil
	case err != nil:
		return false, fsError("stat "+path, err)
	}
	return pl.node != nil, nil
}

func (f modelFS) Mkdir(_ context.Context, path string) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	return fsError("mkdir "+path, f.m.mkdirAll(path))
}

// Rmdir removes a reparse point itself (a mounted folder's volume keeps
// its data), a file, or a directory: empty, or with force its tree,
// without entering the reparse points inside.
func (f modelFS) Rmdir(_ context.Context, path string, force bool) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	pl, err := f.m.lookup(path, false)
	switch {
	case err != nil:
		return fsError("stat "+path, err)
	case pl.node == nil:
		return errdefs.Errorf(errdefs.ErrNotFound, "%q does not exist", path)
	case pl.parent == nil:
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q is the root of a drive and cannot be removed", path)
	case pl.node.tag == 0 && len(pl.node.children) > 0 && !force:
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "directory %q is not empty; remove it with force", path)
	}
	delete(pl.parent.children, strings.ToLower(pl.name))
	return nil
}

// RmdirContents empties the directory path leads to (links and mounted
// folders followed, as opening it would).
func (f modelFS) RmdirContents(_ context.Context, path string) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	pl, err := f.m.lookup(path, true)
	switch {
	case err != nil:
		return fsError("stat "+path, err)
	case pl.node == nil:
		return errdefs.Errorf(errdefs.ErrNotFound, "%q does not exist", path)
	case pl.node.children == nil:
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q is not a directory", path)
	}
	clear(pl.node.children)
	return nil
}

// CreateSymlink makes a directory link unless the source is an existing
// file, as the Windows filesystem backend does; an existing link to the
// same source is success.
func (f modelFS) CreateSymlink(_ context.Context, source, link string) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	pl, err := f.m.lookup(link, false)
	switch {
	case err != nil:
		return fsError("stat "+link, err)
	case pl.node != nil && pl.node.tag == reparseTagSymlink && hostpath.Windows.Equal(pl.node.target, source):
		return nil
	case pl.node != nil || pl.parent == nil:
		return errdefs.Errorf(errdefs.ErrAlreadyExists, "%q already exists and is not a link to %q", link, source)
	}
	dir := true
	if t, err := f.m.lookup(source, true); err == nil && t.node != nil && !t.node.dir {
		dir = false
	}
	return fsError("CreateSymbolicLink "+link, f.m.link(link, source, dir, false))
}

// IsSymlink is true for a link or junction whose target exists and for a
// mounted folder whose volume is present.
func (f modelFS) IsSymlink(_ context.Context, path string) (bool, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	pl, err := f.m.lookup(path, false)
	switch {
	case err != nil:
		return false, fsError("stat "+path, err)
	case pl.node == nil:
		return false, errdefs.Errorf(errdefs.ErrNotFound, "%q does not exist", path)
	case pl.node.volume != "":
		v := f.m.findVolume(pl.node.volume)
		return v != nil && v.present(), nil
	case pl.node.tag != 0:
		t, err := f.m.lookup(path, true)
		return err == nil && t.node != nil, nil
	}
	return false, nil
}

// ---- The Services over the backend and the model ----

// modelStack is a Windows node as driver code sees it: the disk, volume
// and filesystem Services over the real Windows storage backend and the
// model's file tree, all on one model world. Driver flows (with narrow
// interfaces matching the group Services' method signatures) run against
// it the way they run against the simulated host.
type modelStack struct {
	Model      *winModel
	Disk       *disk.Service
	Volume     *volume.Service
	Filesystem *filesystem.Service
}

// newModelStack builds the stack on a model of the same world cfg gives
// the simulated host: the same disks (numbers, sizes, locations, IDs,
// online state, partitions, file systems, drive letters) and working
// directories. Only the volume GUIDs differ.
func newModelStack(t testing.TB, cfg simulated.Config) *modelStack {
	h, err := simulated.New(cfg)
	if err != nil {
		t.Fatalf("simulated world for the model: %v", err)
	}
	m := newWinModel(t, modelDisksLike(h), h.WorkingDirs()...)
	b, err := newBackend(m, Config{})
	if err != nil {
		t.Fatal(err)
	}
	paths, err := hostpath.NewPolicy(hostpath.Windows, h.WorkingDirs())
	if err != nil {
		t.Fatal(err)
	}
	return &modelStack{
		Model:      m,
		Disk:       disk.NewService(b.Disk()),
		Volume:     volume.NewService(b.Volume(), paths),
		Filesystem: filesystem.NewService(modelFS{m}, paths),
	}
}

// modelDisksLike describes the simulated host's disks for the model.
func modelDisksLike(h *simulated.Host) []modelDiskSpec {
	letters := map[string]byte{}
	fs := map[string]string{}
	for _, v := range h.ListVolumes() {
		fs[v.ID] = v.FileSystem
		if v.DriveLetter != "" {
			letters[v.ID] = v.DriveLetter[0]
		}
	}
	types := map[string]string{"Basic": gptBasicData, "System": modelGPTSystem, "Reserved": gptMicrosoftReserved}
	var out []modelDiskSpec
	for _, d := range h.ListDisks() {
		spec := modelDiskSpec{
			Number: d.Number, Size: d.Size, Location: d.Location, BusType: d.BusType, Page83: d.Page83, Serial: d.Serial,
			Offline: !d.Online, System: d.System, Style: partitionStyleRAW,
		}
		if d.PartitionStyle == "GPT" {
			spec.Style = partitionStyleGPT
		}
		for _, p := range d.Partitions {
			spec.Partitions = append(spec.Partitions, modelPartitionSpec{
				Number: p.Number, Offset: p.Offset, Size: p.Size, GPTType: types[p.Type],
				FileSystem: fs[p.VolumeID], DriveLetter: letters[p.VolumeID],
			})
		}
		out = append(out, spec)
	}
	return out
}

// ---- Tests of the model itself ----

const (
	modelKubelet = `C:\var\lib\kubelet`
	modelStage   = modelKubelet + `\plugins\kubernetes.io\csi\disk.csi.example.com\pv1\globalmount`
	modelPublish = modelKubelet + `\pods\uid1\volumes\kubernetes.io~csi\pv1\mount`
)

// modelTestConfig is a small world: the system disk and two RAW disks.
func modelTestConfig() simulated.Config {
	cfg := simulated.DefaultConfig([]string{modelKubelet})
	cfg.Seed = 1
	return cfg
}

// modelFirstVolume partitions disk n and returns its volume ID.
func modelFirstVolume(t *testing.T, s *modelStack, n uint32) string {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Disk.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: n}); err != nil {
		t.Fatalf("PartitionDisk(%d): %v", n, err)
	}
	r, err := s.Volume.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: n})
	if err != nil || len(r.VolumeIDs) != 1 {
		t.Fatalf("ListVolumesOnDisk(%d) = %v, %v; want one volume", n, r, err)
	}
	return r.VolumeIDs[0]
}

// TestModelStageFlow runs a first NodeStage, publish and unstage through
// the backend over the model, and checks the model's state and the bytes
// it answers with after each step.
func TestModelStageFlow(t *testing.T) {
	ctx := context.Background()
	s := newModelStack(t, modelTestConfig())
	m := s.Model
	vol := modelFirstVolume(t, s, 1)

	d := m.disks[1]
	if d.style != partitionStyleGPT || len(d.parts) != 1 || d.parts[0].offset != modelMiB || d.parts[0].size != 1022*modelMiB {
		t.Fatalf("disk 1 after PartitionDisk: style %d, partitions %+v; want GPT with one 1022 MiB partition at 1 MiB", d.style, d.parts)
	}
	l, err := parseDriveLayout(d.layoutBuf())
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := l.dataPartition(); !ok || p.GPTType.String() != gptBasicData || p.Number != 1 {
		t.Errorf("layout bytes read back as %+v; want partition 1 of type basic data", l)
	}

	if _, err := s.Volume.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: vol}); err != nil {
		t.Fatal(err)
	}
	if v := m.findVolume(vol); v.fs != "NTFS" {
		t.Errorf("file system after FormatVolume = %q, want NTFS", v.fs)
	}
	if _, err := s.Filesystem.Mkdir(ctx, &filesystem.MkdirRequest{Path: hostpath.Windows.Dir(modelStage)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Volume.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: vol, TargetPath: modelStage}); err != nil {
		t.Fatal(err)
	}
	b, err := func() ([]byte, error) {
		h, err := m.open(modelStage, modeReparse)
		if err != nil {
			return nil, err
		}
		defer m.close(h)
		return m.ioctl(h, fsctlGetReparsePoint, nil, maxReparseDataSize)
	}()
	if err != nil {
		t.Fatal(err)
	}
	rp, err := parseReparsePoint(b)
	if err != nil || rp.Tag != reparseTagMountPoint || !strings.EqualFold(rp.Substitute, `\??\`+strings.TrimPrefix(vol, `\\?\`)) {
		t.Errorf("mount point reparse data = %+v, %v; want a mount point to %s", rp, err, vol)
	}

	if _, err := s.Filesystem.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{SourcePath: modelStage, TargetPath: modelPublish}); err == nil {
		t.Fatal("CreateSymlink with a missing parent succeeded")
	}
	if _, err := s.Filesystem.Mkdir(ctx, &filesystem.MkdirRequest{Path: hostpath.Windows.Dir(modelPublish)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Filesystem.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{SourcePath: modelStage, TargetPath: modelPublish}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{modelStage, modelPublish} {
		r, err := s.Volume.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: p})
		if err != nil || !strings.EqualFold(r.VolumeID, vol) {
			t.Errorf("GetVolumeIDFromTargetPath(%s) = %v, %v; want %s", p, r, err, vol)
		}
	}
	if err := m.writeFile(modelPublish+`\data`, 10<<20); err != nil {
		t.Fatal(err)
	}
	st, err := s.Volume.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: vol})
	if want := simulated.NTFSOverhead(1022*modelMiB) + 10<<20; err != nil || st.TotalBytes != 1022*modelMiB || st.UsedBytes != want {
		t.Errorf("GetVolumeStats = %+v, %v; want 1022 MiB total, %d used", st, err, want)
	}

	if _, err := s.Filesystem.Rmdir(ctx, &filesystem.RmdirRequest{Path: modelPublish}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Volume.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: vol, TargetPath: modelStage}); err != nil {
		t.Fatal(err)
	}
	if v := m.findVolume(vol); v.flushes != 1 || v.root.children["data"] == nil {
		t.Errorf("after unmount: %d flushes, files %v; want one flush and the file kept on the volume", v.flushes, v.root.children)
	}
	if a, err := m.attributes(modelStage); err != nil || a != fileAttributeDirectory {
		t.Errorf("staging dir after unmount: attributes %#x, %v; want a plain directory", a, err)
	}
	if _, err := s.Disk.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: 1, IsOnline: false}); err != nil {
		t.Fatal(err)
	}
	if !d.offline {
		t.Error("disk 1 is online after SetDiskState(offline)")
	}
}

// TestModelWin32Errors checks that seam calls fail with the codes Windows
// gives, so the backend's error mapping is exercised by real codes.
func TestModelWin32Errors(t *testing.T) {
	s := newModelStack(t, modelTestConfig())
	m := s.Model
	vol := modelFirstVolume(t, s, 1)
	dir := modelKubelet + `\d`
	if err := m.mkdir(dir); err != nil {
		t.Fatal(err)
	}
	if err := m.mkdir(dir + `\x`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		err  error
		want uint32
	}{
		{"mkdir of an existing directory", m.mkdir(dir), modelErrAlreadyExists},
		{"mkdir under a missing parent", m.mkdir(dir + `\no\x`), errPathNotFound},
		{"mount on a non-empty folder", m.setVolumeMountPoint(dir+`\`, vol), errDirNotEmpty},
		{"mount without the trailing backslash", m.setVolumeMountPoint(dir+`\x`, vol), modelErrInvalidName},
		{"unmount a plain folder", m.deleteVolumeMountPoint(dir + `\x\`), errNotAReparsePoint},
		{"unmount a missing folder", m.deleteVolumeMountPoint(dir + `\y\`), errFileNotFound},
		{"file system of a RAW volume", second(m.fileSystemName(vol)), errUnrecognizedVolume},
		{"free space of a RAW volume", third(m.diskFreeSpace(vol)), errUnrecognizedVolume},
		{"volume name of a plain folder", second(m.volumeNameForMountPoint(dir + `\`)), errNotAReparsePoint},
		{"attributes under a missing parent", second(m.attributes(dir + `\no\x`)), errPathNotFound},
		{"attributes of a missing file", second(m.attributes(dir + `\no`)), errFileNotFound},
		{"open a missing volume", second(m.open(`\\?\Volume{00000000-0000-4000-8000-000000000000}`, modeQuery)), errFileNotFound},
	} {
		if n, ok := errnoOf(c.err); !ok || n != c.want {
			t.Errorf("%s: %v, want Win32 error %d", c.name, c.err, c.want)
		}
	}
	h, err := m.open(dir, modeReparse)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.ioctl(h, fsctlGetReparsePoint, nil, maxReparseDataSize); !isErrno(err, errNotAReparsePoint) {
		t.Errorf("FSCTL_GET_REPARSE_POINT on a plain folder: %v, want ERROR_NOT_A_REPARSE_POINT", err)
	}
	m.close(h)
	if err := m.setVolumeMountPoint(dir+`\x\`, vol); err != nil {
		t.Fatal(err)
	}
	if err := m.setVolumeMountPoint(dir+`\x\`, vol); !isErrno(err, errDirNotEmpty) {
		t.Errorf("mount on a mounted folder: %v, want ERROR_DIR_NOT_EMPTY", err)
	}
	if _, err := m.attributes(dir + `\x\inside`); !isErrno(err, errUnrecognizedVolume) {
		t.Errorf("a path into a RAW volume: %v, want ERROR_UNRECOGNIZED_VOLUME", err)
	}
}

func second[T any](_ T, err error) error        { return err }
func third[T, U any](_ T, _ U, err error) error { return err }

// TestModelStorageCodes checks the Storage Management return codes the
// model's WMI methods give.
func TestModelStorageCodes(t *testing.T) {
	ctx := context.Background()
	s := newModelStack(t, modelTestConfig())
	m := s.Model
	for _, c := range []struct {
		name   string
		q      *wmi.WQL
		method string
		args   []wmi.Param
		want   wmi.ReturnCode
	}{
		{"partition a RAW disk", diskQuery(2), "CreatePartition", []wmi.Param{wmi.Arg("UseMaximumSize", true)}, wmi.DiskNotInitialized},
		{"initialise as GPT", diskQuery(2), "Initialize", []wmi.Param{wmi.Arg("PartitionStyle", uint16(2))}, wmi.Success},
		{"initialise twice", diskQuery(2), "Initialize", []wmi.Param{wmi.Arg("PartitionStyle", uint16(2))}, wmi.DiskAlreadyInitialized},
		{"neither Size nor UseMaximumSize", diskQuery(2), "CreatePartition", nil, modelSizeOrMaximum},
		{"an MBR type on GPT", diskQuery(2), "CreatePartition", []wmi.Param{wmi.Arg("UseMaximumSize", true), wmi.Arg("MbrType", uint16(7))}, wmi.ParameterNotValidForPartitionType},
		{"more than the disk", diskQuery(2), "CreatePartition", []wmi.Param{wmi.Arg("Size", uint64(3<<30))}, modelNotEnoughCapacity},
		{"a 1 GiB partition", diskQuery(2), "CreatePartition", []wmi.Param{wmi.Arg("Size", uint64(1<<30))}, wmi.Success},
		{"grow past the free space", partitionQuery(2, 1), "Resize", []wmi.Param{wmi.Arg("Size", uint64(3<<30))}, wmi.SizeNotSupported},
		{"grow by less than 1 MiB", partitionQuery(2, 1), "Resize", []wmi.Param{wmi.Arg("Size", uint64(1<<30+4096))}, wmi.SizeNotSupported},
		{"grow by 512 MiB", partitionQuery(2, 1), "Resize", []wmi.Param{wmi.Arg("Size", uint64(1536<<20))}, wmi.Success},
		{"take the system disk offline", diskQuery(0), "Offline", nil, modelCriticalDisk},
		{"take disk 2 offline", diskQuery(2), "Offline", nil, wmi.Success},
		{"partition an offline disk", diskQuery(2), "CreatePartition", []wmi.Param{wmi.Arg("UseMaximumSize", true)}, wmi.DiskOffline},
	} {
		_, err := m.call(ctx, c.q, c.method, c.args...)
		got := wmi.Success
		var me *wmi.MethodError
		if errors.As(err, &me) {
			got = me.Code
		} else if err != nil {
			t.Errorf("%s: %v, want a method result", c.name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: %s.%s returned %d, want %d", c.name, c.q.Class(), c.method, got, c.want)
		}
	}
	if p := m.disks[2].parts[0]; p.size != 1536<<20 {
		t.Errorf("partition size after Resize = %d, want 1.5 GiB", p.size)
	}
	// The offline disk's partition is listed, its volume is not.
	rows, err := m.query(ctx, wmi.Query(classPartition).Where("DiskNumber", 2).Select("Size", "GptType"))
	if err != nil || len(rows) != 1 || len(rows[0]) != 2 || rows[0]["GptType"] != "{"+gptBasicData+"}" {
		t.Errorf("partitions of offline disk 2: %v, %v; want its one basic data partition", rows, err)
	}
	if rows, err := m.query(ctx, wmi.Query(classVolume).Where("FileSystemType", 0)); err != nil || len(rows) != 0 {
		t.Errorf("RAW volumes: %v, %v; want none (disk 1 has no partition, disk 2 is offline)", rows, err)
	}
	if _, err := m.call(ctx, wmi.Query(classVolume).Where("UniqueId", volumeRoot(`\\?\Volume{00000000-0000-4000-8000-000000000000}`)), "Format"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("Format of a missing volume: %v, want not found", err)
	}
}

// TestModelMBRDisk checks MBR layouts: a disk with a data partition is
// already partitioned; an empty MBR disk gets a partition of the default
// type, without GptType.
func TestModelMBRDisk(t *testing.T) {
	ctx := context.Background()
	m := newWinModel(t, []modelDiskSpec{
		{Number: 0, Size: 4 << 30, System: true, Style: partitionStyleMBR, Partitions: []modelPartitionSpec{
			{Number: 1, Offset: modelMiB, Size: 3 << 30, MBRType: 0x07, FileSystem: "NTFS", DriveLetter: 'C'},
		}},
		{Number: 1, Size: 1 << 30, Style: partitionStyleMBR},
	}, modelKubelet)
	b, err := newBackend(m, Config{})
	if err != nil {
		t.Fatal(err)
	}
	disks := disk.NewService(b.Disk())
	paths, _ := hostpath.NewPolicy(hostpath.Windows, []string{modelKubelet})
	vols := volume.NewService(b.Volume(), paths)
	for _, n := range []uint32{0, 1} {
		if _, err := disks.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: n}); err != nil {
			t.Fatalf("PartitionDisk(%d): %v", n, err)
		}
	}
	if p := m.disks[0].parts; len(p) != 1 {
		t.Errorf("disk 0 has %d partitions after PartitionDisk, want its one", len(p))
	}
	if p := m.disks[1].parts; len(p) != 1 || p[0].mbrType != modelMBRHuge || p[0].offset != modelMiB {
		t.Errorf("disk 1 partitions = %+v; want one of type %#x at 1 MiB", p, modelMBRHuge)
	}
	r, err := vols.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: 1, PartitionNumber: 1})
	if err != nil || len(r.VolumeIDs) != 1 {
		t.Fatalf("ListVolumesOnDisk(1, 1) = %v, %v; want the new volume", r, err)
	}
	n, err := vols.GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: r.VolumeIDs[0]})
	if err != nil || n.DiskNumber != 1 {
		t.Errorf("GetDiskNumberFromVolumeID = %v, %v; want disk 1", n, err)
	}
	c, err := vols.GetClosestVolumeIDFromTargetPath(ctx, &volume.GetClosestVolumeIDFromTargetPathRequest{TargetPath: modelKubelet})
	if err != nil || !strings.EqualFold(c.VolumeID, m.letters['C'].guid) {
		t.Errorf("GetClosestVolumeIDFromTargetPath(%s) = %v, %v; want C:", modelKubelet, c, err)
	}
}

// TestModelLinks checks links the way Windows stores them: a junction is
// followed to a mounted folder, a file link cannot be walked through, a
// link loop ends, and removing a link leaves its target alone.
func TestModelLinks(t *testing.T) {
	ctx := context.Background()
	s := newModelStack(t, modelTestConfig())
	m := s.Model
	vol := modelFirstVolume(t, s, 1)
	if _, err := s.Volume.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: vol}); err != nil {
		t.Fatal(err)
	}
	if err := m.mkdirAll(hostpath.Windows.Dir(modelStage)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Volume.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: vol, TargetPath: modelStage}); err != nil {
		t.Fatal(err)
	}
	junction := modelKubelet + `\junction`
	if err := m.link(junction, modelStage, true, true); err != nil {
		t.Fatal(err)
	}
	r, err := s.Volume.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: junction})
	if err != nil || !strings.EqualFold(r.VolumeID, vol) {
		t.Errorf("GetVolumeIDFromTargetPath(junction) = %v, %v; want %s", r, err, vol)
	}
	if ok, err := s.Filesystem.IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: junction}); err != nil || !ok.IsSymlink {
		t.Errorf("IsSymlink(junction) = %v, %v; want true", ok, err)
	}
	loopA, loopB := modelKubelet+`\a`, modelKubelet+`\b`
	if err := m.link(loopA, loopB, true, false); err != nil {
		t.Fatal(err)
	}
	if err := m.link(loopB, loopA, true, false); err != nil {
		t.Fatal(err)
	}
	if _, err := m.attributes(loopA + `\x`); !isErrno(err, modelErrCantResolve) {
		t.Errorf("a path through a link loop: %v, want ERROR_CANT_RESOLVE_FILENAME", err)
	}
	if _, err := s.Volume.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: loopA}); errgrpc.Code(err) != errgrpc.Code(errdefs.ErrFailedPrecondition) {
		t.Errorf("GetVolumeIDFromTargetPath(loop) = %v, want FailedPrecondition", err)
	}
	file := modelKubelet + `\f`
	if err := m.writeFile(file, 1); err != nil {
		t.Fatal(err)
	}
	fileLink := modelKubelet + `\fl`
	if _, err := s.Filesystem.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{SourcePath: file, TargetPath: fileLink}); err != nil {
		t.Fatal(err)
	}
	if a, err := m.attributes(fileLink); err != nil || a&fileAttributeReparsePoint == 0 || a&fileAttributeDirectory != 0 {
		t.Errorf("attributes of a file link = %#x, %v; want a reparse point that is no directory", a, err)
	}
	if _, err := m.attributes(fileLink + `\x`); !isErrno(err, errDirectory) {
		t.Errorf("a path through a file link: %v, want ERROR_DIRECTORY", err)
	}
	if _, err := s.Filesystem.Rmdir(ctx, &filesystem.RmdirRequest{Path: junction}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Filesystem.PathExists(ctx, &filesystem.PathExistsRequest{Path: modelStage}); err != nil || !ok.Exists {
		t.Errorf("the mounted folder after removing a junction to it: exists %v, %v", ok, err)
	}
	if _, err := s.Filesystem.Rmdir(ctx, &filesystem.RmdirRequest{Path: modelKubelet + `\plugins`}); errgrpc.Code(err) != errgrpc.Code(errdefs.ErrFailedPrecondition) {
		t.Errorf("Rmdir of a non-empty directory without force: %v, want FailedPrecondition", err)
	}
}
