package blocktopo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// This file recognises what a block device holds by reading its first
// and last 512 KiB, the way blkid -p does but without libblkid or a udev
// database (neither exists on the nodes this runs on). The list covers
// what the backend creates (ext4, XFS), what it can mount (btrfs, ext2/3)
// and every common signature whose loss would destroy data (filesystems,
// swap, encryption, volume managers, RAID, caches, storage daemons,
// nested partition tables), so that "formatted" errs on the side of
// keeping data: a device holding swap, LUKS or an md member is formatted,
// just not mountable. Offsets follow each format's specification (cited
// per signature) and the checks libblkid makes (util-linux
// libblkid/src/superblocks/*.c); FormatVolume also asks blkid itself when
// it is installed (see FormatVolume).

// probeHead and probeTail are how much of the start and of the end of a
// device probe reads: the ZFS labels (two of 256 KiB at each end) are the
// largest areas looked at; md 0.90 and 1.0 superblocks lie in the last
// 128 KiB.
const (
	probeHead = 512 << 10
	probeTail = 512 << 10
)

// FSInfo is what probe found.
type FSInfo struct {
	// Type is blkid's name: its TYPE (ext2, ext3, ext4, xfs, btrfs,
	// swap, crypto_LUKS, LVM2_member, linux_raid_member, zfs_member, ...)
	// or, for a partition table found inside a volume, its PTTYPE (dos,
	// gpt, PMBR); "" for nothing known.
	Type string
	// Size is the filesystem's own idea of its size in bytes, 0 if unknown.
	Size int64
	// UUID is the filesystem's UUID in the byte order blkid prints it
	// (and /dev/disk/by-uuid names it); zero when the type has none this
	// probe reads (only ext2/3/4, XFS and btrfs have one here).
	UUID GUID
}

// MountType is the type to pass to mount(2), or "" when the content is not
// a filesystem this backend mounts.
func (f FSInfo) MountType() string {
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

// Probe reads the start and the end of a device of size bytes and
// reports the first filesystem or other content signature found. It does
// not report partition tables (see ProbeVolume): a whole disk's table is
// the GPT codec's business.
func Probe(r io.ReaderAt, size int64) (FSInfo, error) {
	head := make([]byte, min(probeHead, max(size, 0)))
	n, err := r.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return FSInfo{}, fmt.Errorf("read the first %d KiB: %w", len(head)>>10, err)
	}
	head = head[:n]
	tailOff := max(size-probeTail, 0)
	tail := make([]byte, size-tailOff)
	n, err = r.ReadAt(tail, tailOff)
	if err != nil && !errors.Is(err, io.EOF) {
		return FSInfo{}, fmt.Errorf("read the last %d KiB: %w", len(tail)>>10, err)
	}
	if info := probeBytes(head); info.Type != "" {
		return info, nil
	}
	return probeEnd(head, tail[:n], size), nil
}

// ProbeVolume is probe for what a volume holds: a partition table nested
// in it (blkid's PTTYPE) counts as content too, so a volume holding one is
// formatted and never erased.
func ProbeVolume(r io.ReaderAt, size int64) (FSInfo, error) {
	info, err := Probe(r, size)
	if err != nil || info.Type != "" {
		return info, err
	}
	head := make([]byte, 8192)
	n, err := r.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return FSInfo{}, fmt.Errorf("read the first 8 KiB: %w", err)
	}
	return FSInfo{Type: tableType(head[:n])}, nil
}

// tableType names the partition table at the start of a device as blkid's
// PTTYPE does: "gpt" for a GPT header at LBA 1 (512- or 4096-byte
// sectors), "PMBR" for a protective MBR without one, "dos" for an MBR
// partition table; "" for none.
func tableType(head []byte) string {
	for _, lbs := range []int{512, 4096} {
		if len(head) >= 2*lbs && string(head[lbs:lbs+8]) == gptSignature {
			return "gpt"
		}
	}
	switch ClassifyMBR(head) {
	case MBRProtective, MBRHybrid:
		return "PMBR"
	case MBRPartitions:
		return "dos"
	}
	return ""
}

// md RAID superblock magic (linux/raid/md_p.h MD_SB_MAGIC).
const mdMagic = 0xa92b4efc

// probeEnd looks for the signatures that are not all in the first 68 KiB:
// md RAID superblocks (0.90 and 1.0 at the end, 1.1 at 0, 1.2 at 4 KiB)
// and ZFS labels (uberblock rings at 128 KiB into labels 0-1 at the start
// and 2-3 at the end). tail holds the device's last bytes, size its size.
func probeEnd(head, tail []byte, size int64) FSInfo {
	tailOff := size - int64(len(tail))
	u32 := func(b []byte, off int64) (uint32, bool) {
		if off < 0 || off+4 > int64(len(b)) {
			return 0, false
		}
		return binary.LittleEndian.Uint32(b[off:]), true
	}
	isMD := func(b []byte, off int64) bool {
		v, ok := u32(b, off)
		return ok && (v == mdMagic || v == 0xfc4e2ba9) // 0.90 is in host order
	}
	// 1.1 at 0, 1.2 at 4 KiB (mdadm super1.c).
	if isMD(head, 0) || isMD(head, 4096) {
		return FSInfo{Type: "linux_raid_member"}
	}
	// 0.90: the last 64 KiB-aligned 64 KiB (MD_NEW_SIZE_SECTORS); 1.0: 8
	// KiB from the end, aligned down to 4 KiB.
	for _, off := range []int64{size&^(64<<10-1) - 64<<10, (size - 8192) &^ 4095} {
		if isMD(tail, off-tailOff) {
			return FSInfo{Type: "linux_raid_member"}
		}
	}
	// ZFS: count uberblocks (magic 0x00bab10c, either byte order) in the
	// 1 KiB steps of each label's ring; blkid wants 4.
	uberblocks := func(b []byte, label int64) int {
		found := 0
		for off := label + 128<<10; off+8 <= label+256<<10 && off+8 <= int64(len(b)); off += 1024 {
			if off < 0 {
				continue
			}
			if v := binary.LittleEndian.Uint64(b[off:]); v == 0x00bab10c || v == 0x0cb1ba0000000000 {
				found++
			}
		}
		return found
	}
	labelSize := int64(256 << 10)
	last := size &^ (labelSize - 1) // labels 2 and 3 end at the 256 KiB-aligned end
	for _, n := range []int{uberblocks(head, 0), uberblocks(head, labelSize), uberblocks(tail, last-2*labelSize-tailOff), uberblocks(tail, last-labelSize-tailOff)} {
		if n >= 4 {
			return FSInfo{Type: "zfs_member"}
		}
	}
	return FSInfo{}
}

// probeBytes looks for signatures in the first bytes of a device.
func probeBytes(b []byte) FSInfo {
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
		return FSInfo{Type: typ, Size: int64(blocks) * blockSize, UUID: GUID(b[sb+0x68 : sb+0x78])}
	}
	// XFS: "XFSB" at 0, big-endian block size and data block count.
	if at(0, "XFSB") && len(b) >= 48 {
		return FSInfo{Type: "xfs", Size: int64(be64(8)) * int64(be32(4)), UUID: GUID(b[32:48])}
	}
	// btrfs: superblock at 64 KiB, magic at offset 64, total_bytes at 112.
	if at(65536+64, "_BHRfS_M") && len(b) >= 65536+120 {
		return FSInfo{Type: "btrfs", Size: int64(le64(65536 + 112)), UUID: GUID(b[65536+32 : 65536+48])}
	}
	if at(0, "LUKS\xba\xbe") {
		return FSInfo{Type: "crypto_LUKS"}
	}
	// LVM2 physical volume: a "LABELONE" label in one of the first four
	// sectors, with "LVM2 001" 24 bytes into it.
	for s := 0; s < 4; s++ {
		if at(s*512, "LABELONE") && at(s*512+24, "LVM2 001") {
			return FSInfo{Type: "LVM2_member"}
		}
	}
	// swap: signature in the last 10 bytes of the first page, for each page
	// size Linux supports.
	for _, page := range []int{4096, 8192, 16384, 65536} {
		if at(page-10, "SWAPSPACE2") || at(page-10, "SWAP-SPACE") {
			return FSInfo{Type: "swap"}
		}
	}
	if at(3, "NTFS    ") {
		return FSInfo{Type: "ntfs"}
	}
	if len(b) >= 512 && b[510] == 0x55 && b[511] == 0xaa && (at(54, "FAT12   ") || at(54, "FAT16   ") || at(82, "FAT32   ")) {
		return FSInfo{Type: "vfat"}
	}
	if at(32769, "CD001") {
		return FSInfo{Type: "iso9660"}
	}
	// exFAT: "EXFAT   " as the file system name (exFAT specification
	// §3.1.2).
	if at(3, "EXFAT   ") {
		return FSInfo{Type: "exfat"}
	}
	// BitLocker: "-FVE-FS-" as the OEM name (Windows 7 and later), or
	// Vista's "MSWIN4.1" boot sector with the BitLocker GUID at 160.
	if at(3, "-FVE-FS-") || at(3, "MSWIN4.1") && at(160, "\x3b\xd6\x67\x49\x29\x2e\xd8\x4a\x83\x99\xf6\xa3\x39\xe3\xd0\x01") {
		return FSInfo{Type: "BitLocker"}
	}
	// F2FS: superblock at 1 KiB, magic 0xF2F52010 (include/linux/f2fs_fs.h).
	if len(b) >= 1028 && le32(1024) == 0xf2f52010 {
		return FSInfo{Type: "f2fs"}
	}
	// bcache: the cache_sb magic at 4 KiB + 24 (include/uapi/linux/bcache.h).
	if at(4096+24, "\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81") {
		return FSInfo{Type: "bcache"}
	}
	// Ceph BlueStore: its label starts with "bluestore block device"
	// (os/bluestore/bluestore_types.h).
	if at(0, "bluestore block device") {
		return FSInfo{Type: "ceph_bluestore"}
	}
	// LUKS2 keeps a second header at one of these offsets.
	for _, off := range []int{0x4000, 0x8000, 0x10000, 0x20000, 0x40000} {
		if at(off, "SKUL\xba\xbe") {
			return FSInfo{Type: "crypto_LUKS"}
		}
	}
	// minix: superblock at 1 KiB, magic at 16 (v1, v2) or 24 (v3). The
	// magic is only two bytes, so the inode and zone bitmaps must be
	// there too, as libblkid's minix.c checks.
	if len(b) >= 2048 {
		switch le16(1024 + 16) {
		case 0x137f, 0x138f, 0x2468, 0x2478:
			if le16(1024) > 0 && le16(1024+4) > 0 && le16(1024+6) > 0 {
				return FSInfo{Type: "minix"}
			}
		}
		if le16(1024+24) == 0x4d5a && le32(1024) > 0 && le16(1024+6) > 0 && le16(1024+8) > 0 {
			return FSInfo{Type: "minix"}
		}
	}
	return FSInfo{}
}

// ProbeDevice reports what the block device (or image file) at dev
// holds: Probe with the partition tables ProbeVolume adds, over the whole
// device.
func ProbeDevice(dev string) (FSInfo, error) {
	f, err := os.Open(dev)
	if err != nil {
		return FSInfo{}, err
	}
	defer f.Close() //nolint:errcheck // read-only: a close error changes nothing
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return FSInfo{}, fmt.Errorf("%s: find its size: %w", dev, err)
	}
	info, err := ProbeVolume(f, size)
	if err != nil {
		return FSInfo{}, fmt.Errorf("%s: %w", dev, err)
	}
	return info, nil
}
