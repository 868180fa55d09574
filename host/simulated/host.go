package simulated

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// Host is an in-memory Windows node. It is safe for concurrent use: one
// mutex guards the whole world, and no method blocks while holding it.
//
// The group backends are views over the one world, reached with Disk,
// Volume, Filesystem, SMB, ISCSI and System. The other methods change or
// inspect the world the way a test or an operator would: attach, grow and
// detach disks, put files on volumes and shares, break SMB mappings.
type Host struct {
	mu sync.Mutex
	w  *world // guarded by mu
}

// Compile-time checks that the views implement the backend interfaces.
var (
	_ disk.Host        = diskView{}
	_ volume.Host      = volumeView{}
	_ filesystem.Host  = fsView{}
	_ smb.Host         = smbView{}
	_ smbmappings.Host = smbMappingsView{}
	_ iscsi.Host       = iscsiView{}
	_ system.Host      = systemView{}
)

// Disk returns the disk group backend.
func (h *Host) Disk() disk.Host { return diskView{h} }

// Volume returns the volume group backend.
func (h *Host) Volume() volume.Host { return volumeView{h} }

// Filesystem returns the filesystem group backend.
func (h *Host) Filesystem() filesystem.Host { return fsView{h} }

// SMB returns the SMB group backend.
func (h *Host) SMB() smb.Host { return smbView{h} }

// SMBMappingsGroup returns the SMB mappings group backend (csi-node-proxy's
// own group: listing the SMB global mappings and the links into them).
// It is not called SMBMappings, the name of the snapshot tests take.
func (h *Host) SMBMappingsGroup() smbmappings.Host { return smbMappingsView{h} }

// ISCSI returns the iSCSI group backend.
func (h *Host) ISCSI() iscsi.Host { return iscsiView{h} }

// System returns the system group backend.
func (h *Host) System() system.Host { return systemView{h} }

// do runs f on the world under the lock, after checking that ctx is still
// live. f never blocks.
func (h *Host) do(ctx context.Context, f func(w *world) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return f(h.w)
}

// read is do for the calls that return what they find: f runs on the
// world under the lock and its result is returned, or the zero T with
// f's error.
func read[T any](ctx context.Context, h *Host, f func(w *world) (T, error)) (T, error) {
	var out T
	err := h.do(ctx, func(w *world) error {
		var err error
		out, err = f(w)
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

// locked runs f on the world under the lock, for the context-free helpers.
func (h *Host) locked(f func(w *world) error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return f(h.w)
}

// Byte sizes and the disk layout every partitioning follows.
const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30

	// partAlign is the partition alignment; the first partition starts at
	// 1 MiB, after the protective MBR and the primary GPT, as Windows
	// places it.
	partAlign = mib
	// gptTail is what the end of a disk keeps for the backup GPT (16.5
	// KiB, rounded up to the alignment).
	gptTail = mib
	// clusterSize is the NTFS allocation unit files are rounded up to.
	clusterSize = 4 * kib
)

// NTFSOverhead is the space a freshly formatted NTFS volume of size bytes
// reports as used: 8 MiB plus 1/256 of the size (MFT, log file, bitmaps),
// never more than the volume. VolumeStats reports this plus the files on
// the volume, each rounded up to 4 KiB clusters.
func NTFSOverhead(size int64) int64 { return min(8*mib+size/256, size) }

// fatOverhead is the FAT32 equivalent: two FATs of 4 bytes per 4 KiB
// cluster plus 1 MiB of reserved sectors.
func fatOverhead(size int64) int64 { return min(mib+size/512, size) }

func alignDown(n, a int64) int64 { return n / a * a }
func alignUp(n, a int64) int64   { return (n + a - 1) / a * a }

// world is everything the simulated host knows. All access holds Host.mu.
type world struct {
	rng *rand.Rand

	disks   map[uint32]*diskState // attached disks by number
	letters map[byte]string       // drive letter -> volume ID
	rescans int

	workingDirs []string

	shares   map[string]*share   // lower-case \\server\share -> share
	mappings map[string]*mapping // lower-case \\server\share -> global mapping
	// now is the clock SMB mappings are stamped with; nil is time.Now
	// (SetClock).
	now func() time.Time

	portals      map[string]iscsi.Portal // registered portals by portalKey
	targets      []*target
	mutualSecret string

	services map[string]*service // lower-case name -> service
	bios     string
}

type partKind int

const (
	partBasic    partKind = iota // a data partition
	partSystem                   // the EFI system partition
	partReserved                 // the Microsoft Reserved partition (no volume)
)

func (k partKind) String() string {
	switch k {
	case partSystem:
		return "System"
	case partReserved:
		return "Reserved"
	}
	return "Basic"
}

type diskState struct {
	number   uint32
	size     int64
	online   bool
	readOnly bool // MSFT_Disk.IsReadOnly
	gpt      bool
	system   bool
	nvme     bool      // on the NVMe bus: location holds the PCI bus number
	location *location // nil: ListDiskLocations does not report the disk
	nsid     uint32    // NVMe only: the namespace ID as Windows numbers it, 0 none
	product  string    // NVMe only: the product as the device instance ID spells it
	page83   string
	serial   string
	parts    []*partition // sorted by offset
	target   *target      // the iSCSI target providing the disk, or nil
}

type partition struct {
	number       uint32
	offset, size int64
	kind         partKind
	vol          *volumeState // nil for the MSR partition
}

type volumeState struct {
	id      string // canonical \\?\Volume{guid}\
	disk    *diskState
	part    *partition
	fs      string // "", "NTFS" or "FAT32"
	root    *node  // the file tree; nil while the volume is RAW
	sysUsed int64  // bytes taken by files the simulation does not model
	flushes int
}

// lastUsable is the end of the space partitions may use.
func (d *diskState) lastUsable() int64 { return alignDown(d.size-gptTail, partAlign) }

// maxSize is the largest size p can grow to without moving.
func (d *diskState) maxSize(p *partition) int64 {
	end := d.lastUsable()
	for _, q := range d.parts {
		if q.offset > p.offset && q.offset < end {
			end = q.offset
		}
	}
	return end - p.offset
}

// used is what VolumeStats reports as used.
func (v *volumeState) used() int64 {
	var meta int64
	switch v.fs {
	case "NTFS":
		meta = NTFSOverhead(v.part.size)
	case "FAT32":
		meta = fatOverhead(v.part.size)
	}
	return min(meta+v.sysUsed+treeBytes(v.root), v.part.size)
}

// New builds a simulated host from cfg after validating it; zero fields
// get the defaults described on Config.
func New(cfg Config) (*Host, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := &world{
		disks:    map[uint32]*diskState{},
		letters:  map[byte]string{},
		shares:   map[string]*share{},
		mappings: map[string]*mapping{},
		portals:  map[string]iscsi.Portal{},
		services: map[string]*service{},
		bios:     cfg.BIOSSerial,
	}
	seed := cfg.Seed
	if seed == 0 {
		var b [8]byte
		_, _ = crand.Read(b[:]) // never fails (crypto/rand panics rather)
		seed = binary.LittleEndian.Uint64(b[:])
	}
	w.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	if w.bios == "" {
		w.bios = DefaultBIOSSerial
	}
	if !cfg.NoSystemDisk {
		size := cfg.SystemDiskSize
		if size == 0 {
			size = DefaultSystemDiskSize
		}
		w.addSystemDisk(int64(size))
	}
	// Disks with a fixed number first, so the automatic ones do not take
	// those numbers.
	for _, fixed := range []bool{true, false} {
		for _, spec := range cfg.Disks {
			if (spec.Number != nil) != fixed {
				continue
			}
			if _, err := w.attachNew(spec); err != nil {
				return nil, err
			}
		}
	}
	for _, wd := range cfg.WorkingDirs {
		p, _ := hostpath.Windows.Clean(wd) // Validate checked it
		if err := w.mkdirAll(&walker{w: w, server: true}, p); err != nil {
			return nil, fmt.Errorf("create working dir %q: %w", wd, err)
		}
		w.workingDirs = append(w.workingDirs, p)
	}
	for _, s := range cfg.SMBShares {
		if err := w.addShare(s); err != nil {
			return nil, err
		}
	}
	for _, t := range cfg.ISCSITargets {
		w.addTarget(t)
	}
	specs := cfg.Services
	if specs == nil {
		specs = DefaultServices()
	}
	for _, s := range specs {
		w.addService(s)
	}
	return &Host{w: w}, nil
}

// newGUID returns a random version 4 GUID in lower case, as Windows shows
// volume GUIDs.
func (w *world) newGUID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], w.rng.Uint64())
	binary.LittleEndian.PutUint64(b[8:], w.rng.Uint64())
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (w *world) newVolume(d *diskState, p *partition) *volumeState {
	v := &volumeState{id: `\\?\Volume{` + w.newGUID() + `}\`, disk: d, part: p}
	p.vol = v
	return v
}

// format gives v an empty filesystem, erasing what it held.
func (v *volumeState) format(fs string) {
	v.fs = fs
	v.root = newDir("")
	v.sysUsed = 0
}

// addSystemDisk creates disk 0 the way Windows Setup lays out a UEFI
// system disk: EFI system partition (FAT32, 100 MiB), Microsoft Reserved
// (16 MiB, no volume), and the C: volume (NTFS) on the rest.
func (w *world) addSystemDisk(size int64) {
	d := &diskState{
		number: 0, size: size, online: true, gpt: true, system: true,
		location: &location{"0", "0", "0", "0"},
		page83:   "60022480000000000000000000000000",
		serial:   "SIM-SYSTEM-0000",
	}
	efi := &partition{number: 1, offset: partAlign, size: 100 * mib, kind: partSystem}
	w.newVolume(d, efi).format("FAT32")
	efi.vol.sysUsed = 30 * mib // boot manager files
	msr := &partition{number: 2, offset: efi.offset + efi.size, size: 16 * mib, kind: partReserved}
	c := &partition{number: 3, offset: msr.offset + msr.size, kind: partBasic}
	c.size = d.lastUsable() - c.offset
	w.newVolume(d, c).format("NTFS")
	c.vol.sysUsed = min(12*gib, c.size/4) // the Windows installation
	for _, name := range []string{"Windows", "Program Files", "ProgramData", "Users"} {
		c.vol.root.children[strings.ToLower(name)] = newDir(name)
	}
	d.parts = []*partition{efi, msr, c}
	w.disks[0] = d
	w.letters['C'] = c.vol.id
}

// buildDisk makes a disk from a validated spec, without attaching it.
func (w *world) buildDisk(spec DiskSpec) *diskState {
	nvme, _ := parseBusType(spec.BusType)
	loc, _ := parseLocation(spec.Location, nvme)
	d := &diskState{
		size:     int64(spec.Size),
		online:   !spec.Offline,
		readOnly: spec.ReadOnly,
		nvme:     nvme,
		location: loc,
		nsid:     spec.NamespaceID,
		product:  spec.Product,
		page83:   spec.Page83,
		serial:   spec.Serial,
	}
	fs, _ := fileSystemName(spec.FileSystem)
	if spec.Partitioned || fs != "" {
		_ = w.partition(d) // cannot fail: a new disk has room
		if fs != "" {
			d.parts[0].vol.format(fs)
		}
	}
	return d
}

// attachNew validates spec, builds the disk and attaches it, honouring its
// number and drive letter.
func (w *world) attachNew(spec DiskSpec) (uint32, error) {
	if err := spec.validate(false); err != nil {
		return 0, errdefs.Errorf(errdefs.ErrInvalidArgument, "disk spec: %v", err)
	}
	n := w.freeNumber()
	if spec.Number != nil {
		n = *spec.Number
		if _, used := w.disks[n]; used {
			return 0, errdefs.Errorf(errdefs.ErrAlreadyExists, "disk %d already exists", n)
		}
	}
	letter, _ := driveLetter(spec.DriveLetter)
	if letter != 0 {
		if id, used := w.letters[letter]; used && w.findVolume(id) != nil {
			return 0, errdefs.Errorf(errdefs.ErrAlreadyExists, "drive %c: is already in use by volume %s", letter, id)
		}
	}
	d := w.buildDisk(spec)
	d.number = n
	w.disks[n] = d
	if letter != 0 {
		w.letters[letter] = d.parts[0].vol.id
	}
	return n, nil
}

// freeNumber returns the lowest disk number not in use, as Windows assigns
// them when a disk arrives.
func (w *world) freeNumber() uint32 {
	var n uint32
	for {
		if _, used := w.disks[n]; !used {
			return n
		}
		n++
	}
}

// disk returns the attached disk n.
func (w *world) disk(n uint32) (*diskState, error) {
	d, ok := w.disks[n]
	if !ok {
		return nil, errdefs.Errorf(errdefs.ErrNotFound, "disk %d does not exist", n)
	}
	return d, nil
}

func (w *world) sortedDisks() []*diskState {
	out := make([]*diskState, 0, len(w.disks))
	for _, d := range w.disks {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].number < out[j].number })
	return out
}

// findVolume returns the volume with id (compared without case) on an
// attached disk, or nil.
func (w *world) findVolume(id string) *volumeState {
	for _, d := range w.disks {
		for _, p := range d.parts {
			if p.vol != nil && strings.EqualFold(p.vol.id, id) {
				return p.vol
			}
		}
	}
	return nil
}

// volume returns the volume with id, as a volume call sees it: present
// on an attached disk that is online. The volume of an offline disk is
// errdefs.ErrNotFound, as on Windows, where taking a disk offline removes
// its volume devices (FindFirstVolume no longer lists them, MSFT_Volume
// has no instance, opening \?\Volume{…} fails) and the Windows backend
// and upstream both answer that the volume does not exist. The message
// names the offline disk, which Windows cannot, so a driver author sees
// why.
func (w *world) volume(id string) (*volumeState, error) {
	v := w.findVolume(id)
	if v == nil {
		return nil, errdefs.Errorf(errdefs.ErrNotFound, "volume %s does not exist", id)
	}
	if !v.disk.online {
		return nil, errdefs.Errorf(errdefs.ErrNotFound, "volume %s does not exist: disk %d is offline, and Windows removes an offline disk's volumes until it is online again", v.id, v.disk.number)
	}
	return v, nil
}

// letterOf returns v's drive letter, or 0.
func (w *world) letterOf(v *volumeState) byte {
	for l, id := range w.letters {
		if strings.EqualFold(id, v.id) {
			return l
		}
	}
	return 0
}

// partition initialises d with GPT if it is RAW and creates a data
// partition with a RAW volume in the free space after the last partition,
// unless d already has a data partition.
func (w *world) partition(d *diskState) error {
	if !d.gpt {
		d.gpt = true
		d.parts = nil
	}
	start := partAlign
	var next uint32 = 1
	for _, p := range d.parts {
		if p.kind == partBasic {
			return nil
		}
		start = max(start, alignUp(p.offset+p.size, partAlign))
		next = max(next, p.number+1)
	}
	end := d.lastUsable()
	if end-start < partAlign {
		return errdefs.Errorf(errdefs.ErrOutOfRange, "disk %d has no free space for a data partition", d.number)
	}
	p := &partition{number: next, offset: start, size: end - start, kind: partBasic}
	w.newVolume(d, p)
	d.parts = append(d.parts, p)
	return nil
}
