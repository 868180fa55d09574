package storage

import (
	"encoding/binary"
	"encoding/hex"
	"strings"
	"unicode/utf16"
)

// Builders for the IOCTL output buffers the tests feed the backend. Each
// writes the documented layout byte by byte (amd64, little-endian), with
// the structure and its offsets named, so a test reads like the
// documentation it checks against. None uses the parsers under test.

func put16(b []byte, off int, v uint16) { binary.LittleEndian.PutUint16(b[off:], v) }
func put32(b []byte, off int, v uint32) { binary.LittleEndian.PutUint32(b[off:], v) }
func put64(b []byte, off int, v uint64) { binary.LittleEndian.PutUint64(b[off:], v) }

// deviceNumberBuf is STORAGE_DEVICE_NUMBER: DeviceType u32 @0,
// DeviceNumber u32 @4, PartitionNumber u32 @8.
func deviceNumberBuf(devType, number, part uint32) []byte {
	b := make([]byte, 12)
	put32(b, 0, devType)
	put32(b, 4, number)
	put32(b, 8, part)
	return b
}

// scsiAddressBuf is SCSI_ADDRESS: Length u32 @0 (= 8), PortNumber u8 @4,
// PathId u8 @5, TargetId u8 @6, Lun u8 @7.
func scsiAddressBuf(port, path, target, lun uint8) []byte {
	b := make([]byte, 8)
	put32(b, 0, 8)
	b[4], b[5], b[6], b[7] = port, path, target, lun
	return b
}

// lengthInfoBuf is GET_LENGTH_INFORMATION: Length i64 @0.
func lengthInfoBuf(n uint64) []byte {
	b := make([]byte, 8)
	put64(b, 0, n)
	return b
}

// diskAttributesBuf is GET_DISK_ATTRIBUTES: Version u32 @0 (= 16),
// Reserved1 u32 @4, Attributes u64 @8.
func diskAttributesBuf(attrs uint64) []byte {
	b := make([]byte, 16)
	put32(b, 0, 16)
	put64(b, 8, attrs)
	return b
}

// storageID is one STORAGE_IDENTIFIER to encode.
type storageID struct {
	codeSet, typ, assoc uint32
	value               []byte
	nextOffset          int // 0: computed (16 + len(value), 4-aligned)
}

// deviceIDDescriptorBuf is STORAGE_DEVICE_ID_DESCRIPTOR: Version u32 @0,
// Size u32 @4, NumberOfIdentifiers u32 @8, Identifiers @12; each
// STORAGE_IDENTIFIER is CodeSet u32 @0, Type u32 @4, IdentifierSize u16 @8,
// NextOffset u16 @10, Association u32 @12, Identifier @16 (MS-CSVP 2.2.9,
// 2.2.10). Identifiers are padded to 4 bytes, as storport lays them out.
func deviceIDDescriptorBuf(ids ...storageID) []byte {
	b := make([]byte, 12)
	for _, id := range ids {
		next := id.nextOffset
		if next == 0 {
			next = (16 + len(id.value) + 3) &^ 3
		}
		e := make([]byte, max(next, 16+len(id.value)))
		put32(e, 0, id.codeSet)
		put32(e, 4, id.typ)
		put16(e, 8, uint16(len(id.value)))
		put16(e, 10, uint16(next))
		put32(e, 12, id.assoc)
		copy(e[16:], id.value)
		b = append(b, e...)
	}
	put32(b, 0, 12+1) // MS-CSVP: Version is the size through Identifiers[0]
	put32(b, 4, uint32(len(b)))
	put32(b, 8, uint32(len(ids)))
	return b
}

// deviceDescriptorBuf is STORAGE_DEVICE_DESCRIPTOR: Version u32 @0, Size
// u32 @4, DeviceType u8 @8, DeviceTypeModifier u8 @9, RemovableMedia u8
// @10, CommandQueueing u8 @11, VendorIdOffset u32 @12, ProductIdOffset u32
// @16, ProductRevisionOffset u32 @20, SerialNumberOffset u32 @24, BusType
// u32 @28, RawPropertiesLength u32 @32, RawDeviceProperties @36 (sizeof
// 40); the NUL-terminated strings follow. An empty string gets offset 0.
func deviceDescriptorBuf(busType uint32, vendor, product, revision, serial string) []byte {
	b := make([]byte, 40)
	put32(b, 0, 40)
	b[8] = 0 // DIRECT_ACCESS_DEVICE
	put32(b, 28, busType)
	for i, s := range []string{vendor, product, revision, serial} {
		if s == "" {
			continue
		}
		put32(b, 12+4*i, uint32(len(b)))
		b = append(b, s...)
		b = append(b, 0)
	}
	put32(b, 4, uint32(len(b)))
	return b
}

// gptEntry and mbrEntry describe PARTITION_INFORMATION_EX entries.
type gptEntry struct {
	number         uint32
	typ            string // GUID without braces
	offset, length uint64
}

type mbrEntry struct {
	number         uint32
	typ            uint8
	offset, length uint64
}

// guidBytes lays a GUID string out as Windows stores it: Data1 u32, Data2
// u16, Data3 u16 little-endian, Data4 as written.
func guidBytes(s string) []byte {
	h, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
	if err != nil || len(h) != 16 {
		panic("bad GUID " + s)
	}
	b := make([]byte, 16)
	put32(b, 0, binary.BigEndian.Uint32(h[0:4]))
	put16(b, 4, binary.BigEndian.Uint16(h[4:6]))
	put16(b, 6, binary.BigEndian.Uint16(h[6:8]))
	copy(b[8:], h[8:])
	return b
}

// gptLayoutBuf is DRIVE_LAYOUT_INFORMATION_EX for a GPT disk:
// PartitionStyle u32 @0 (PARTITION_STYLE_GPT = 1), PartitionCount u32 @4,
// DRIVE_LAYOUT_INFORMATION_GPT @8 (DiskId GUID @8, StartingUsableOffset
// i64 @24, UsableLength i64 @32, MaxPartitionCount u32 @40),
// PartitionEntry[] @48, each PARTITION_INFORMATION_EX (144 bytes):
// PartitionStyle u32 @0, StartingOffset i64 @8, PartitionLength i64 @16,
// PartitionNumber u32 @24, RewritePartition u8 @28, IsServicePartition u8
// @29, PARTITION_INFORMATION_GPT @32 (PartitionType GUID @32, PartitionId
// GUID @48, Attributes u64 @64, Name[36] WCHAR @72).
func gptLayoutBuf(entries ...gptEntry) []byte {
	b := make([]byte, 48+144*len(entries))
	put32(b, 0, partitionStyleGPT)
	put32(b, 4, uint32(len(entries)))
	copy(b[8:], guidBytes("11111111-2222-3333-4444-555555555555"))
	put64(b, 24, 17408)        // 34 sectors of 512 bytes
	put64(b, 32, 1<<30-34*512) // usable length of a 1 GiB disk
	put32(b, 40, 128)
	for i, e := range entries {
		p := b[48+144*i:]
		put32(p, 0, partitionStyleGPT)
		put64(p, 8, e.offset)
		put64(p, 16, e.length)
		put32(p, 24, e.number)
		copy(p[32:], guidBytes(e.typ))
		copy(p[48:], guidBytes("99999999-8888-7777-6666-555555555555"))
		for j, r := range utf16.Encode([]rune("Basic data partition")) {
			put16(p, 72+2*j, r)
		}
	}
	return b
}

// mbrLayoutBuf is DRIVE_LAYOUT_INFORMATION_EX for an MBR disk:
// PartitionStyle u32 @0 (PARTITION_STYLE_MBR = 0), PartitionCount u32 @4
// (a multiple of 4), DRIVE_LAYOUT_INFORMATION_MBR @8 (Signature u32 @8,
// CheckSum u32 @12), entries @48 with PARTITION_INFORMATION_MBR @32
// (PartitionType u8 @32, BootIndicator u8 @33, RecognizedPartition u8 @34,
// HiddenSectors u32 @36, PartitionId GUID @40). Unused slots have type 0
// and number 0.
func mbrLayoutBuf(entries ...mbrEntry) []byte {
	slots := (len(entries) + 3) / 4 * 4
	if slots == 0 {
		slots = 4
	}
	b := make([]byte, 48+144*slots)
	put32(b, 0, partitionStyleMBR)
	put32(b, 4, uint32(slots))
	put32(b, 8, 0xA1B2C3D4)
	for i, e := range entries {
		p := b[48+144*i:]
		put32(p, 0, partitionStyleMBR)
		put64(p, 8, e.offset)
		put64(p, 16, e.length)
		put32(p, 24, e.number)
		p[32] = e.typ
		p[34] = 1
	}
	for i := len(entries); i < slots; i++ {
		put32(b[48+144*i:], 0, partitionStyleMBR)
	}
	return b
}

// rawLayoutBuf is DRIVE_LAYOUT_INFORMATION_EX of an uninitialised disk:
// PARTITION_STYLE_RAW (2) and no entries.
func rawLayoutBuf() []byte {
	b := make([]byte, 48)
	put32(b, 0, partitionStyleRAW)
	return b
}

// extentsBuf is VOLUME_DISK_EXTENTS: NumberOfDiskExtents u32 @0, padding,
// Extents[] @8, each DISK_EXTENT (24 bytes): DiskNumber u32 @0,
// StartingOffset i64 @8, ExtentLength i64 @16.
func extentsBuf(disks ...uint32) []byte {
	b := make([]byte, 8+24*len(disks))
	put32(b, 0, uint32(len(disks)))
	for i, d := range disks {
		e := b[8+24*i:]
		put32(e, 0, d)
		put64(e, 8, 1<<20)
		put64(e, 16, 1<<30)
	}
	return b
}

// symlinkReparseBuf is REPARSE_DATA_BUFFER for IO_REPARSE_TAG_SYMLINK:
// ReparseTag u32 @0, ReparseDataLength u16 @4, Reserved u16 @6,
// SubstituteNameOffset u16 @8, SubstituteNameLength u16 @10,
// PrintNameOffset u16 @12, PrintNameLength u16 @14, Flags u32 @16,
// PathBuffer @20 (substitute name, then print name, as CreateSymbolicLink
// stores them; lengths in bytes without the NUL).
func symlinkReparseBuf(substitute, print string, relative bool) []byte {
	b := linkReparseBuf(reparseTagSymlink, 20, substitute, print)
	if relative {
		put32(b, 16, symlinkFlagRelative)
	}
	return b
}

// mountPointReparseBuf is REPARSE_DATA_BUFFER for
// IO_REPARSE_TAG_MOUNT_POINT (junctions and mounted folders): the same
// header and four u16 as a symlink, without Flags; PathBuffer @16.
func mountPointReparseBuf(substitute, print string) []byte {
	return linkReparseBuf(reparseTagMountPoint, 16, substitute, print)
}

// linkReparseBuf is the layout both link kinds share: the tag, the data
// length (all after the 8-byte header), the substitute and print names'
// offsets and lengths, and PathBuffer at head (the fields before it left
// zero for the caller).
func linkReparseBuf(tag uint32, head int, substitute, print string) []byte {
	path, subLen, printOff, printLen := pathBuffer(substitute, print)
	b := make([]byte, head, head+len(path))
	put32(b, 0, tag)
	put16(b, 4, uint16(head-8+len(path)))
	put16(b, 8, 0)
	put16(b, 10, subLen)
	put16(b, 12, printOff)
	put16(b, 14, printLen)
	return append(b, path...)
}

// pathBuffer encodes "substitute\0print\0" in UTF-16LE.
func pathBuffer(substitute, print string) (buf []byte, subLen, printOff, printLen uint16) {
	enc := func(s string) []byte {
		u := utf16.Encode([]rune(s))
		out := make([]byte, 2*len(u)+2)
		for i, c := range u {
			put16(out, 2*i, c)
		}
		return out
	}
	s, p := enc(substitute), enc(print)
	return append(s, p...), uint16(len(s) - 2), uint16(len(s)), uint16(len(p) - 2)
}
