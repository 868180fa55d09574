package blockdev

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// This file recognises what a block device holds by reading its first
// 68 KiB, the way blkid does but without libblkid or a udev database
// (neither exists on the nodes this runs on). The list covers what the
// backend creates (ext4, XFS), what it can mount (btrfs, ext2/3) and every
// common signature whose loss would destroy data, so that "formatted" errs
// on the side of keeping data: a device holding swap, LUKS or an LVM PV is
// formatted, just not mountable.

// probeSize is how much of the device probe reads: up to the btrfs
// superblock at 64 KiB plus its header.
const probeSize = 68 << 10

// fsInfo is what probe found.
type fsInfo struct {
	// Type is the blkid-style name: ext2, ext3, ext4, xfs, btrfs, swap,
	// crypto_LUKS, LVM2_member, ntfs, vfat, iso9660; "" for nothing known.
	Type string
	// Size is the filesystem's own idea of its size in bytes, 0 if unknown.
	Size int64
	// UUID is the filesystem's UUID in the byte order blkid prints it
	// (and /dev/disk/by-uuid names it); zero when the type has none this
	// probe reads (only ext2/3/4, XFS and btrfs have one here).
	UUID guid
}

// mountType is the type to pass to mount(2), or "" when the content is not
// a filesystem this backend mounts.
func (f fsInfo) mountType() string {
	switch f.Type {
	case "ext2", "ext3", "ext4":
		return "ext4" // the ext4 driver mounts all three
	case "xfs", "btrfs", "vfat", "iso9660":
		return f.Type
	case "ntfs":
		return "ntfs3" // the in-kernel NTFS driver
	}
	return ""
}

// probe reads the start of a device and reports the first signature found.
func probe(r io.ReaderAt) (fsInfo, error) {
	b := make([]byte, probeSize)
	n, err := r.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return fsInfo{}, fmt.Errorf("read the first %d KiB: %w", probeSize>>10, err)
	}
	return probeBytes(b[:n]), nil
}

// probeBytes looks for signatures in the first bytes of a device.
func probeBytes(b []byte) fsInfo {
	at := func(off int, sig string) bool {
		return off+len(sig) <= len(b) && string(b[off:off+len(sig)]) == sig
	}
	le16 := func(off int) uint16 { return binary.LittleEndian.Uint16(b[off:]) }
	le32 := func(off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
	le64 := func(off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	be32 := func(off int) uint32 { return binary.BigEndian.Uint32(b[off:]) }
	be64 := func(off int) uint64 { return binary.BigEndian.Uint64(b[off:]) }

	// ext2/3/4: superblock at 1024, magic 0xEF53 at offset 56 of it.
	if len(b) >= 2048 && le16(1024+56) == 0xef53 {
		sb := 1024
		blockSize := int64(1024) << le32(sb+24)
		blocks := uint64(le32(sb + 4))
		compat, incompat, roCompat := le32(sb+92), le32(sb+96), le32(sb+100)
		if incompat&0x80 != 0 { // 64bit: the high half of the block count
			blocks |= uint64(le32(sb+0x150)) << 32
		}
		typ := "ext2"
		switch {
		// extents, 64bit, flex_bg, or huge_file/dir_nlink/extra_isize: ext4
		case incompat&(0x40|0x80|0x200) != 0 || roCompat&(0x8|0x20|0x40) != 0:
			typ = "ext4"
		case compat&0x4 != 0: // has_journal
			typ = "ext3"
		}
		return fsInfo{Type: typ, Size: int64(blocks) * blockSize, UUID: guid(b[sb+0x68 : sb+0x78])}
	}
	// XFS: "XFSB" at 0, big-endian block size and data block count.
	if at(0, "XFSB") && len(b) >= 48 {
		return fsInfo{Type: "xfs", Size: int64(be64(8)) * int64(be32(4)), UUID: guid(b[32:48])}
	}
	// btrfs: superblock at 64 KiB, magic at offset 64, total_bytes at 112.
	if at(65536+64, "_BHRfS_M") && len(b) >= 65536+120 {
		return fsInfo{Type: "btrfs", Size: int64(le64(65536 + 112)), UUID: guid(b[65536+32 : 65536+48])}
	}
	if at(0, "LUKS\xba\xbe") {
		return fsInfo{Type: "crypto_LUKS"}
	}
	// LVM2 physical volume: a "LABELONE" label in one of the first four
	// sectors, with "LVM2 001" 24 bytes into it.
	for s := 0; s < 4; s++ {
		if at(s*512, "LABELONE") && at(s*512+24, "LVM2 001") {
			return fsInfo{Type: "LVM2_member"}
		}
	}
	// swap: signature in the last 10 bytes of the first page, for each page
	// size Linux supports.
	for _, page := range []int{4096, 8192, 16384, 65536} {
		if at(page-10, "SWAPSPACE2") || at(page-10, "SWAP-SPACE") {
			return fsInfo{Type: "swap"}
		}
	}
	if at(3, "NTFS    ") {
		return fsInfo{Type: "ntfs"}
	}
	if len(b) >= 512 && b[510] == 0x55 && b[511] == 0xaa && (at(54, "FAT12   ") || at(54, "FAT16   ") || at(82, "FAT32   ")) {
		return fsInfo{Type: "vfat"}
	}
	if at(32769, "CD001") {
		return fsInfo{Type: "iso9660"}
	}
	return fsInfo{}
}
