package storage

import (
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
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
//
// The world and its types are here; the paths and the file tree (and
// modelFS over it) are in model_tree_test.go, the Win32 seam calls in
// model_seam_test.go, WMI in model_wmi_test.go, and the group Services over
// the model with the tests of the model itself in model_stack_test.go.
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
	// readOnly is DISK_ATTRIBUTE_READ_ONLY, MSFT_Disk.IsReadOnly.
	readOnly bool
	system   bool // holds the boot and system partitions
	style    uint32
	parts    []*modelPartition // sorted by offset
	scsi     *scsiAddress      // nil: IOCTL_SCSI_GET_ADDRESS is not supported
	ids      []storageID       // the device's VPD page 0x83 descriptors
	serial   string
	busType  uint32
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
	// NamespaceID and Product, for an NVMe disk, make its device
	// interface path Azure's NVMe form, in the layout of
	// azuredisk-csi-driver's examples (@ d983d613
	// pkg/os/disk/disk_nvme_test.go), ending in the namespace ID:
	// constructed, not captured from a node. 0 keeps the Hyper-V form.
	NamespaceID uint32
	Product     string
	// Page83 is the device's page 0x83 identifier: hex for a binary (NAA)
	// identifier, anything else an ASCII (T10 vendor ID) one; "" for none.
	Page83  string
	Serial  string
	Offline bool
	// ReadOnly attaches the disk with DISK_ATTRIBUTE_READ_ONLY set.
	ReadOnly bool
	System   bool
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

// modelInterfacePath is the device interface path of the disk spec
// describes: the form Hyper-V SCSI disks show (fact sheet §1.1), whose
// instance part is unique per disk, or Azure's NVMe form with the
// namespace ID (see modelDiskSpec.NamespaceID).
func modelInterfacePath(spec modelDiskSpec) string {
	if spec.NamespaceID > 0 {
		return fmt.Sprintf(`\\?\scsi#disk&ven_nvme&prod_%s#6&ca10229&0&%06d#{53f56307-b6bf-11d0-94f2-00a0c91efb8b}`, spec.Product, spec.NamespaceID)
	}
	return fmt.Sprintf(`\\?\scsi#disk&ven_msft&prod_virtual_disk#5&2a7b6c9&0&%06d#{53f56307-b6bf-11d0-94f2-00a0c91efb8b}`, spec.Number)
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
		iface:    modelInterfacePath(spec),
		size:     spec.Size,
		offline:  spec.Offline,
		readOnly: spec.ReadOnly,
		system:   spec.System,
		style:    spec.Style,
		ids:      modelDeviceIDs(spec.Page83),
		serial:   spec.Serial,
		busType:  modelBusSCSI,
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

// ---- Operator actions on the model ----

// resizeDisk grows disk n, as expanding a cloud disk does; its partitions
// keep their sizes until ResizeVolume.
func (m *winModel) resizeDisk(n uint32, size int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.disks[n].size = size
}
