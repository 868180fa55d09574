package storage

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf16"
)

// IOCTL and FSCTL codes (winioctl.h, ntddscsi.h; fact sheet §B1). x/sys
// defines none of the storage ones. The test checks each against the
// CTL_CODE formula.
const (
	ioctlStorageGetDeviceNumber     = 0x002D1080 // any access; disk or volume
	ioctlStorageQueryProperty       = 0x002D1400 // any access; disk
	ioctlSCSIGetAddress             = 0x00041018 // any access; disk
	ioctlDiskGetLengthInfo          = 0x0007405C // FILE_READ_ACCESS; disk or volume
	ioctlDiskGetDriveLayoutEx       = 0x00070050 // any access; disk
	ioctlDiskGetDiskAttributes      = 0x000700F0 // any access; disk
	ioctlDiskIsWritable             = 0x00070024 // any access; disk or volume
	ioctlVolumeGetVolumeDiskExtents = 0x00560000 // any access; volume
	fsctlGetReparsePoint            = 0x000900A8 // any access; file opened with FILE_FLAG_OPEN_REPARSE_POINT
)

// STORAGE_PROPERTY_ID values (winioctl.h).
const (
	storageDeviceProperty   = 0 // STORAGE_DEVICE_DESCRIPTOR
	storageDeviceIDProperty = 2 // STORAGE_DEVICE_ID_DESCRIPTOR
)

// fileDeviceDisk is FILE_DEVICE_DISK, STORAGE_DEVICE_NUMBER.DeviceType of
// disks and of the volumes on them.
const fileDeviceDisk = 7

// diskAttributeOffline is DISK_ATTRIBUTE_OFFLINE in GET_DISK_ATTRIBUTES.
const diskAttributeOffline = 0x1

// diskAttributeReadOnly is DISK_ATTRIBUTE_READ_ONLY in GET_DISK_ATTRIBUTES
// (fact sheet windows-apis.md, IOCTL_DISK_GET_DISK_ATTRIBUTES).
const diskAttributeReadOnly = 0x2

// Reparse tags and file attributes (winnt.h; fact sheet §3.1).
const (
	fileAttributeDirectory    = 0x10
	fileAttributeReparsePoint = 0x400
	reparseTagMountPoint      = 0xA0000003 // junctions and volume mount points
	reparseTagSymlink         = 0xA000000C
	symlinkFlagRelative       = 1
	maxReparseDataSize        = 16 * 1024 // MAXIMUM_REPARSE_DATA_BUFFER_SIZE
)

// Limits on the output buffers the backend is willing to allocate when a
// driver asks for more: far beyond any real descriptor, small enough that
// a confused driver cannot make the proxy allocate without bound.
const (
	maxDescriptorSize = 1 << 20
	maxExtents        = 4096
	maxLayoutEntries  = 4096
)

var le = binary.LittleEndian

// storagePropertyQuery builds STORAGE_PROPERTY_QUERY (winioctl.h), 12
// bytes: PropertyId u32 @0, QueryType u32 @4 (PropertyStandardQuery = 0),
// AdditionalParameters[1] @8 plus padding.
func storagePropertyQuery(propertyID uint32) []byte {
	b := make([]byte, 12)
	le.PutUint32(b[0:], propertyID)
	le.PutUint32(b[4:], 0)
	return b
}

// deviceNumber is STORAGE_DEVICE_NUMBER (winioctl.h), 12 bytes:
// DeviceType u32 @0, DeviceNumber u32 @4, PartitionNumber u32 @8.
type deviceNumber struct {
	DeviceType      uint32
	DeviceNumber    uint32
	PartitionNumber uint32 // 0 for a whole disk, 0xFFFFFFFF if not partitionable
}

func parseDeviceNumber(b []byte) (deviceNumber, error) {
	if len(b) < 12 {
		return deviceNumber{}, fmt.Errorf("STORAGE_DEVICE_NUMBER is %d bytes, want 12", len(b))
	}
	return deviceNumber{le.Uint32(b[0:]), le.Uint32(b[4:]), le.Uint32(b[8:])}, nil
}

// scsiAddress is SCSI_ADDRESS (ntddscsi.h), 8 bytes: Length u32 @0,
// PortNumber u8 @4, PathId u8 @5, TargetId u8 @6, Lun u8 @7.
type scsiAddress struct {
	PortNumber, PathID, TargetID, Lun uint8
}

func parseSCSIAddress(b []byte) (scsiAddress, error) {
	if len(b) < 8 {
		return scsiAddress{}, fmt.Errorf("SCSI_ADDRESS is %d bytes, want 8", len(b))
	}
	return scsiAddress{b[4], b[5], b[6], b[7]}, nil
}

// parseLengthInfo reads GET_LENGTH_INFORMATION (winioctl.h): Length i64 @0.
func parseLengthInfo(b []byte) (int64, error) {
	if len(b) < 8 {
		return 0, fmt.Errorf("GET_LENGTH_INFORMATION is %d bytes, want 8", len(b))
	}
	n := int64(le.Uint64(b))
	if n < 0 {
		return 0, fmt.Errorf("GET_LENGTH_INFORMATION reports a negative length %d", n)
	}
	return n, nil
}

// parseDiskAttributes reads GET_DISK_ATTRIBUTES (winioctl.h), 16 bytes:
// Version u32 @0, Reserved1 u32 @4, Attributes u64 @8.
func parseDiskAttributes(b []byte) (uint64, error) {
	if len(b) < 16 {
		return 0, fmt.Errorf("GET_DISK_ATTRIBUTES is %d bytes, want 16", len(b))
	}
	return le.Uint64(b[8:]), nil
}

// descriptor bounds a STORAGE_DESCRIPTOR_HEADER-led buffer (Version u32
// @0, Size u32 @4) to what both the header and the bytes returned allow.
func descriptor(b []byte, what string, minSize int) ([]byte, error) {
	if len(b) < minSize {
		return nil, fmt.Errorf("%s is %d bytes, want at least %d", what, len(b), minSize)
	}
	if size := int(le.Uint32(b[4:])); size < len(b) {
		if size < minSize {
			return nil, fmt.Errorf("%s header says %d bytes, want at least %d", what, size, minSize)
		}
		b = b[:size]
	}
	return b, nil
}

// parseSerialNumber reads the serial number from STORAGE_DEVICE_DESCRIPTOR
// (Learn "STORAGE_DEVICE_DESCRIPTOR structure (winioctl.h)"): Version u32
// @0, Size u32 @4, DeviceType u8 @8, DeviceTypeModifier u8 @9,
// RemovableMedia u8 @10, CommandQueueing u8 @11, VendorIdOffset u32 @12,
// ProductIdOffset u32 @16, ProductRevisionOffset u32 @20,
// SerialNumberOffset u32 @24, BusType u32 @28, RawPropertiesLength u32
// @32, RawDeviceProperties @36; sizeof 40.
//
// SerialNumberOffset is a byte offset from the start of the descriptor to
// a NUL-terminated ASCII string; 0 means no serial number. An offset that
// points outside the descriptor is read as no serial number too: a driver
// bug on one disk must not fail ListDiskIDs for every disk. Surrounding
// spaces are trimmed, because ATA/SCSI serial fields are space-padded and
// drivers compare serials for equality (gcp-pd) or containment (aws-ebs).
// Whether MSFT_Disk.SerialNumber, which upstream reports, is trimmed the
// same way is unconfirmed (fact sheet §C.2).
func parseSerialNumber(b []byte) (string, error) {
	b, err := descriptor(b, "STORAGE_DEVICE_DESCRIPTOR", 28)
	if err != nil {
		return "", err
	}
	off := int(le.Uint32(b[24:]))
	if off == 0 || off >= len(b) {
		return "", nil
	}
	s := b[off:]
	if i := strings.IndexByte(string(s), 0); i >= 0 {
		s = s[:i]
	}
	return strings.Trim(string(s), " \t"), nil
}

// STORAGE_IDENTIFIER code sets and associations (ntddstor.h).
const (
	codeSetBinary     = 1
	codeSetASCII      = 2
	associationDevice = 0
)

// parsePage83 reads the page 0x83 identifier from STORAGE_DEVICE_ID_DESCRIPTOR
// the way upstream csi-proxy's GetDiskPage83ID does, because drivers
// compare the result byte for byte (fact sheet §1.3).
//
// Layout (MS-CSVP 2.2.9 and 2.2.10; Learn "STORAGE_IDENTIFIER structure
// (ntddstor.h)"): the descriptor is Version u32 @0, Size u32 @4,
// NumberOfIdentifiers u32 @8, Identifiers @12. Each STORAGE_IDENTIFIER is
// CodeSet u32 @0, Type u32 @4, IdentifierSize u16 @8, NextOffset u16 @10
// (from the start of this identifier to the next), Association u32 @12,
// Identifier[IdentifierSize] @16.
//
// The rule: walk the identifiers in the order the device gives them and
// take the first whose Association is the device (0) and whose CodeSet is
// binary or ASCII, whatever its Type. Binary becomes lowercase hex without
// separators; ASCII is returned as the raw bytes, untrimmed. None found is
// "". Unlike upstream, the walk never reads past the buffer: a truncated
// identifier is an error, and a NextOffset of 0 ends the walk (upstream
// would read the same identifier again).
func parsePage83(b []byte) (string, error) {
	b, err := descriptor(b, "STORAGE_DEVICE_ID_DESCRIPTOR", 12)
	if err != nil {
		return "", err
	}
	count := le.Uint32(b[8:])
	off := 12
	for i := uint32(0); i < count; i++ {
		if off+16 > len(b) {
			return "", fmt.Errorf("STORAGE_IDENTIFIER %d at offset %d runs past the %d-byte descriptor", i, off, len(b))
		}
		id := b[off:]
		codeSet := le.Uint32(id[0:])
		size := int(le.Uint16(id[8:]))
		next := int(le.Uint16(id[10:]))
		assoc := le.Uint32(id[12:])
		if off+16+size > len(b) {
			return "", fmt.Errorf("STORAGE_IDENTIFIER %d at offset %d claims %d bytes, past the %d-byte descriptor", i, off, size, len(b))
		}
		if assoc == associationDevice && (codeSet == codeSetBinary || codeSet == codeSetASCII) {
			value := id[16 : 16+size]
			if codeSet == codeSetASCII {
				return string(value), nil
			}
			return hex.EncodeToString(value), nil
		}
		if next == 0 {
			break
		}
		off += next
	}
	return "", nil
}

// diskExtent is DISK_EXTENT (winioctl.h), 24 bytes: DiskNumber u32 @0,
// StartingOffset i64 @8, ExtentLength i64 @16.
type diskExtent struct {
	DiskNumber     uint32
	StartingOffset int64
	ExtentLength   int64
}

// extentCount reads NumberOfDiskExtents from a (possibly partial)
// VOLUME_DISK_EXTENTS, which is what ERROR_MORE_DATA leaves behind.
func extentCount(b []byte) (int, bool) {
	if len(b) < 4 {
		return 0, false
	}
	return int(le.Uint32(b)), true
}

// parseDiskExtents reads VOLUME_DISK_EXTENTS (winioctl.h):
// NumberOfDiskExtents u32 @0, padding, Extents[] @8, 24 bytes each.
func parseDiskExtents(b []byte) ([]diskExtent, error) {
	n, ok := extentCount(b)
	if !ok {
		return nil, fmt.Errorf("VOLUME_DISK_EXTENTS is %d bytes, want at least 8", len(b))
	}
	if n > maxExtents || 8+24*n > len(b) {
		return nil, fmt.Errorf("VOLUME_DISK_EXTENTS claims %d extents in %d bytes", n, len(b))
	}
	out := make([]diskExtent, n)
	for i := range out {
		e := b[8+24*i:]
		out[i] = diskExtent{le.Uint32(e[0:]), int64(le.Uint64(e[8:])), int64(le.Uint64(e[16:]))}
	}
	return out, nil
}

// PARTITION_STYLE (winioctl.h). The numbering differs from
// MSFT_Disk.PartitionStyle (0 RAW, 1 MBR, 2 GPT).
const (
	partitionStyleMBR = 0
	partitionStyleGPT = 1
	partitionStyleRAW = 2
)

// GPT partition types (Learn "CreatePartition method of the MSFT_Disk
// class"; PARTITION_INFORMATION_GPT).
const (
	gptBasicData         = "ebd0a0a2-b9e5-4433-87c0-68b6b72699c7"
	gptMicrosoftReserved = "e3c9e316-0b5c-4db8-817d-f92df00215ae"
)

// MBR partition types that are containers, not data partitions
// (PARTITION_EXTENDED, PARTITION_XINT13_EXTENDED, and the LDM/Linux
// extended type 0x85).
var mbrContainerTypes = map[uint8]bool{0x05: true, 0x0F: true, 0x85: true}

// guid is a GUID as Windows lays it out: Data1 u32, Data2 u16, Data3 u16
// little-endian, then Data4[8].
type guid [16]byte

// String formats the GUID in lowercase, without braces.
func (g guid) String() string {
	return fmt.Sprintf("%08x-%04x-%04x-%x-%x", le.Uint32(g[0:]), le.Uint16(g[4:]), le.Uint16(g[6:]), g[8:10], g[10:16])
}

// parseGUID reads a GUID written as text, with or without braces, in
// either case, into Windows' layout.
func parseGUID(s string) (guid, error) {
	t := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "{"), "}")
	h, err := hex.DecodeString(strings.ReplaceAll(t, "-", ""))
	if err != nil || len(h) != 16 || len(t) != 36 || t[8] != '-' || t[13] != '-' || t[18] != '-' || t[23] != '-' {
		return guid{}, fmt.Errorf("%q is not a GUID", s)
	}
	var g guid
	le.PutUint32(g[0:], binary.BigEndian.Uint32(h[0:4]))
	le.PutUint16(g[4:], binary.BigEndian.Uint16(h[4:6]))
	le.PutUint16(g[6:], binary.BigEndian.Uint16(h[6:8]))
	copy(g[8:], h[8:])
	return g, nil
}

// partition is one PARTITION_INFORMATION_EX entry.
type partition struct {
	Style           uint32
	StartingOffset  int64
	PartitionLength int64
	Number          uint32 // 1-based; 0 for unused MBR slots
	MBRType         uint8
	GPTType         guid
}

// isData tells whether the partition is one PartitionDisk counts as
// already done: on GPT anything but an unused entry or the Microsoft
// Reserved partition (what upstream's GptType <> MSR query matches), on
// MBR any used entry that is not an extended-partition container.
func (p partition) isData() bool {
	switch p.Style {
	case partitionStyleGPT:
		t := p.GPTType.String()
		return p.GPTType != (guid{}) && t != gptMicrosoftReserved
	case partitionStyleMBR:
		return p.MBRType != 0 && !mbrContainerTypes[p.MBRType]
	}
	return false
}

// driveLayout is DRIVE_LAYOUT_INFORMATION_EX reduced to what the backend
// uses.
type driveLayout struct {
	Style      uint32
	Partitions []partition
}

// dataPartition returns the first data partition in partition-number
// order.
func (l driveLayout) dataPartition() (partition, bool) {
	var best partition
	found := false
	for _, p := range l.Partitions {
		if p.isData() && p.Number != 0 && (!found || p.Number < best.Number) {
			best, found = p, true
		}
	}
	return best, found
}

// hasPartition tells whether a partition numbered n exists.
func (l driveLayout) hasPartition(n uint32) bool {
	for _, p := range l.Partitions {
		if p.Number == n && (p.Style != partitionStyleMBR || p.MBRType != 0) {
			return true
		}
	}
	return false
}

// layoutSize is the output size for n partition entries.
func layoutSize(n int) int { return 48 + 144*n }

// parseDriveLayout reads DRIVE_LAYOUT_INFORMATION_EX (winioctl.h; fact
// sheet §1.6): PartitionStyle u32 @0, PartitionCount u32 @4, a 40-byte
// MBR/GPT union @8, PartitionEntry[] @48, each a 144-byte
// PARTITION_INFORMATION_EX: PartitionStyle u32 @0, StartingOffset i64 @8,
// PartitionLength i64 @16, PartitionNumber u32 @24, RewritePartition u8
// @28, IsServicePartition u8 @29, union @32 — MBR: PartitionType u8 @32,
// BootIndicator u8 @33, RecognizedPartition u8 @34, HiddenSectors u32 @36,
// PartitionId GUID @40; GPT: PartitionType GUID @32, PartitionId GUID
// @48, Attributes u64 @64, Name[36] UTF-16 @72.
func parseDriveLayout(b []byte) (driveLayout, error) {
	if len(b) < 48 {
		return driveLayout{}, fmt.Errorf("DRIVE_LAYOUT_INFORMATION_EX is %d bytes, want at least 48", len(b))
	}
	l := driveLayout{Style: le.Uint32(b[0:])}
	count := int(le.Uint32(b[4:]))
	if count > maxLayoutEntries || layoutSize(count) > len(b) {
		return driveLayout{}, fmt.Errorf("DRIVE_LAYOUT_INFORMATION_EX claims %d partitions in %d bytes", count, len(b))
	}
	for i := 0; i < count; i++ {
		e := b[48+144*i:]
		p := partition{
			Style:           le.Uint32(e[0:]),
			StartingOffset:  int64(le.Uint64(e[8:])),
			PartitionLength: int64(le.Uint64(e[16:])),
			Number:          le.Uint32(e[24:]),
		}
		switch p.Style {
		case partitionStyleMBR:
			p.MBRType = e[32]
		case partitionStyleGPT:
			copy(p.GPTType[:], e[32:48])
		}
		l.Partitions = append(l.Partitions, p)
	}
	return l, nil
}

// reparsePoint is the part of REPARSE_DATA_BUFFER the backend reads.
type reparsePoint struct {
	Tag uint32
	// Substitute is the target as an NT path (\??\C:\dir,
	// \??\Volume{GUID}\, \??\UNC\server\share) or, for a relative
	// symlink, as stored.
	Substitute string
	// Print is the display form; often empty for mounted folders.
	Print    string
	Relative bool
}

// parseReparsePoint reads REPARSE_DATA_BUFFER (Learn "REPARSE_DATA_BUFFER
// structure"; fact sheet §3.4): ReparseTag u32 @0, ReparseDataLength u16
// @4, Reserved u16 @6, then for symlinks SubstituteNameOffset u16 @8,
// SubstituteNameLength u16 @10, PrintNameOffset u16 @12, PrintNameLength
// u16 @14, Flags u32 @16, PathBuffer @20; for mount points and junctions
// the same four u16 and PathBuffer @16. Offsets and lengths are in bytes
// from PathBuffer and exclude the NUL.
func parseReparsePoint(b []byte) (reparsePoint, error) {
	if len(b) < 8 {
		return reparsePoint{}, fmt.Errorf("REPARSE_DATA_BUFFER is %d bytes, want at least 8", len(b))
	}
	r := reparsePoint{Tag: le.Uint32(b[0:])}
	var pathBuf int
	switch r.Tag {
	case reparseTagSymlink:
		if len(b) < 20 {
			return reparsePoint{}, fmt.Errorf("symbolic link reparse data is %d bytes, want at least 20", len(b))
		}
		r.Relative = le.Uint32(b[16:])&symlinkFlagRelative != 0
		pathBuf = 20
	case reparseTagMountPoint:
		if len(b) < 16 {
			return reparsePoint{}, fmt.Errorf("mount point reparse data is %d bytes, want at least 16", len(b))
		}
		pathBuf = 16
	default:
		return r, nil // a tag whose data the backend does not read
	}
	var err error
	if r.Substitute, err = utf16At(b, pathBuf, int(le.Uint16(b[8:])), int(le.Uint16(b[10:]))); err != nil {
		return reparsePoint{}, fmt.Errorf("substitute name: %w", err)
	}
	if r.Print, err = utf16At(b, pathBuf, int(le.Uint16(b[12:])), int(le.Uint16(b[14:]))); err != nil {
		return reparsePoint{}, fmt.Errorf("print name: %w", err)
	}
	return r, nil
}

// utf16At decodes length bytes of UTF-16LE at base+off.
func utf16At(b []byte, base, off, length int) (string, error) {
	start := base + off
	if off%2 != 0 || length%2 != 0 || start+length > len(b) {
		return "", fmt.Errorf("%d bytes at offset %d do not fit the %d-byte buffer as UTF-16", length, start, len(b))
	}
	u := make([]uint16, length/2)
	for i := range u {
		u[i] = le.Uint16(b[start+2*i:])
	}
	return string(utf16.Decode(u)), nil
}

// STORAGE_BUS_TYPE values (winioctl.h) the backend tells apart.
const (
	busTypeSCSI = 1
	busTypeNVMe = 17
)

// parseBusType reads BusType (u32 @28) from STORAGE_DEVICE_DESCRIPTOR
// (layout at parseSerialNumber).
func parseBusType(b []byte) (uint32, error) {
	b, err := descriptor(b, "STORAGE_DEVICE_DESCRIPTOR", 32)
	if err != nil {
		return 0, err
	}
	return le.Uint32(b[28:]), nil
}
