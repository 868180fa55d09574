package blockdev

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"time"
)

// extCheckReason reads an ext2/3/4 superblock (the 1024 bytes at offset
// 1024 of the volume) and says why e2fsck -p would check the filesystem
// rather than report it clean and stop, or "" when the superblock records
// a filesystem that needs no check. It follows e2fsprogs' check_if_skip
// (e2fsck/unix.c, tag v1.47.0) and the kernel's on-disk format
// (Documentation/filesystems/ext4/super.rst, Linux v6.6): a check is due
// when the filesystem was not cleanly unmounted, recorded errors, has a
// journal to replay or orphans to release, has reached its mount count or
// check interval, or its superblock fails its checksum. Anything it does
// not recognise counts as a reason, so an odd superblock is checked.
func extCheckReason(sb []byte, now time.Time) string {
	if len(sb) < 1024 {
		return "the superblock is short"
	}
	le16 := func(off int) uint16 { return binary.LittleEndian.Uint16(sb[off:]) }
	le32 := func(off int) uint32 { return binary.LittleEndian.Uint32(sb[off:]) }
	const (
		stateValid  = 0x1 // EXT4_VALID_FS: cleanly unmounted
		stateError  = 0x2 // EXT4_ERROR_FS: errors detected
		stateOrphan = 0x4 // EXT4_ORPHAN_FS: orphans being recovered

		incompatRecover = 0x4     // needs_recovery: the journal holds transactions to replay
		incompatJournal = 0x8     // journal_dev: the volume is an external journal, not a filesystem
		roCompatCsum    = 0x400   // metadata_csum: the superblock carries a crc32c
		roCompatOrphan  = 0x10000 // orphan_present: the orphan file holds inodes
	)
	if le16(0x38) != 0xef53 {
		return "no ext superblock magic"
	}
	incompat, roCompat := le32(0x60), le32(0x64)
	if roCompat&roCompatCsum != 0 {
		// ext4_superblock_csum: crc32c seeded with ~0 over the bytes
		// before s_checksum, stored without the final inversion Go's
		// crc32 applies.
		want := ^crc32.Checksum(sb[:0x3fc], crc32.MakeTable(crc32.Castagnoli))
		if got := le32(0x3fc); got != want {
			return fmt.Sprintf("the superblock checksum is %#x, the superblock sums to %#x", got, want)
		}
	}
	state := le16(0x3a)
	switch {
	case state&stateError != 0 || le32(0x194) != 0: // s_error_count
		return "the filesystem recorded errors"
	case state&stateValid == 0:
		return "the filesystem was not cleanly unmounted"
	case state&stateOrphan != 0 || le32(0xe8) != 0 || roCompat&roCompatOrphan != 0: // s_last_orphan
		return "the filesystem has orphan inodes to release"
	case incompat&incompatRecover != 0:
		return "the journal needs recovery"
	case incompat&incompatJournal != 0:
		return "the volume is an external journal device"
	}
	if mounts, maxMounts := le16(0x34), int16(le16(0x36)); maxMounts > 0 && mounts >= uint16(maxMounts) {
		return fmt.Sprintf("the filesystem has been mounted %d times without a check (s_max_mnt_count %d)", mounts, maxMounts)
	}
	if interval := int64(le32(0x44)); interval != 0 {
		last := time.Unix(int64(le32(0x40))|int64(sb[0x277])<<32, 0) // s_lastcheck, s_lastcheck_hi
		switch {
		case last.After(now):
			return "the filesystem's last check is in the future"
		case now.Sub(last) >= time.Duration(interval)*time.Second:
			return "the filesystem's check interval has passed"
		}
	}
	return ""
}
