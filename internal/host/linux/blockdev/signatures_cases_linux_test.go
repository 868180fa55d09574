package blockdev

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"os/exec"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/blockfixture"
)

// This file writes one signature of every kind FormatVolume must never
// erase onto a device or image file: with the real tool where Debian's
// build/CI image has it (e2fsprogs, xfsprogs, util-linux), else as a
// minimal header at the offsets its format documents. blkid -p, the
// reference the issue names, confirms in signatures_linux_test.go that
// each constructed header is what it claims to be.

// sigCase is one kind of signature.
type sigCase struct {
	// name is the kind in test names.
	name string
	// blkid is what `blkid -p -o export` reports for it: "TYPE=xfs",
	// "PTTYPE=dos".
	blkid string
	// probe is what this package's probe reports (its Type).
	probe string
	// minSize is the smallest device the kind fits on.
	minSize int64
	// write puts the signature on the device or file at path, of size
	// bytes, whose content is zero.
	write func(t *testing.T, path string, size int64)
}

// tool runs a formatting tool on path, failing the test (skipping on a
// developer machine without the package, see testutil.RequireTool) if it
// cannot.
func tool(pkg string, argv ...string) func(t *testing.T, path string, size int64) {
	return func(t *testing.T, path string, _ int64) {
		t.Helper()
		testutil.RequireTool(t, pkg, argv[0])
		if out, err := exec.Command(argv[0], append(argv[1:], path)...).CombinedOutput(); err != nil {
			t.Fatalf("%v %s: %v: %s", argv, path, err, out)
		}
	}
}

// patches writes byte strings at offsets; a negative offset counts from
// the end of the device.
func patches(p ...blockfixture.Patch) func(t *testing.T, path string, size int64) {
	return func(t *testing.T, path string, size int64) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, q := range p {
			off := int64(q.Off)
			if off < 0 {
				off += size
			}
			if _, err := f.WriteAt(q.Data, off); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
}

func le16b(v uint16) []byte { b := make([]byte, 2); binary.LittleEndian.PutUint16(b, v); return b }

// at builds one byte slice from (offset, bytes) pairs, for headers with
// several fields.
func at(size int, fields ...any) []byte {
	b := make([]byte, size)
	for i := 0; i < len(fields); i += 2 {
		copy(b[fields[i].(int):], fields[i+1].([]byte))
	}
	return b
}

// signatureCases is the table: ≥ 12 kinds, each refused by FormatVolume
// whichever filesystem is asked for.
func signatureCases() []sigCase {
	const mb = 1 << 20
	return []sigCase{
		{"ext2", "TYPE=ext2", "ext2", 16 * mb, tool("e2fsprogs", "mkfs.ext2", "-q", "-F")},
		{"ext3", "TYPE=ext3", "ext3", 16 * mb, tool("e2fsprogs", "mkfs.ext3", "-q", "-F")},
		{"ext4", "TYPE=ext4", "ext4", 16 * mb, tool("e2fsprogs", "mkfs.ext4", "-q", "-F")},
		{"xfs", "TYPE=xfs", "xfs", 300 * mb, tool("xfsprogs", "mkfs.xfs", "-q", "-f")},
		{"minix", "TYPE=minix", "minix", 16 * mb, tool("util-linux", "mkfs.minix")},
		{"swap", "TYPE=swap", "swap", 16 * mb, tool("util-linux", "mkswap")},
		// btrfs: superblock at 64 KiB, magic "_BHRfS_M" at offset 0x40 of
		// it (btrfs on-disk format, "Superblock"); blkid also checks the
		// crc32c of the superblock (its first 32 bytes) when csum_type is
		// 0 (crc32c).
		{"btrfs", "TYPE=btrfs", "btrfs", 16 * mb, patches(blockfixture.Patch{65536, btrfsSuper()})},
		// vfat: a FAT16 boot sector (Microsoft FAT specification §3.1,
		// §3.2): BPB with 512-byte sectors, "FAT16   " at 54, 0x55AA.
		{"vfat", "TYPE=vfat", "vfat", 16 * mb, patches(blockfixture.Patch{0, fat16Boot()})},
		// NTFS: "NTFS    " OEM ID at 3, BPB, and an MFT record ("FILE")
		// where the BPB's MFT cluster says (libblkid ntfs.c reads it).
		{"ntfs", "TYPE=ntfs", "ntfs", 16 * mb, ntfsBoot()},
		// exFAT: "EXFAT   " at 3 and the boot region checksum in sector
		// 11 (Microsoft exFAT specification §3.1, §3.4).
		{"exfat", "TYPE=exfat", "exfat", 16 * mb, patches(blockfixture.Patch{0, exfatBootRegion()})},
		// F2FS: superblock at 1024, magic 0xF2F52010 (f2fs_fs.h).
		{"f2fs", "TYPE=f2fs", "f2fs", 16 * mb, patches(blockfixture.Patch{1024, at(512, 0, blockfixture.LE32(0xf2f52010), 4, le16b(1), 6, le16b(15), 8, blockfixture.LE32(9), 12, blockfixture.LE32(3), 16, blockfixture.LE32(9), 20, blockfixture.LE32(1))})},
		// LVM2 PV: "LABELONE" label in sector 1 with its CRC, "LVM2 001"
		// at 24 (LVM2 label_header, lib/label/label.h).
		{"LVM2 PV", "TYPE=LVM2_member", "LVM2_member", 16 * mb, patches(blockfixture.Patch{512, lvm2Label()})},
		// md RAID 0.90: superblock in the last 64 KiB-aligned 64 KiB
		// (md_p.h MD_NEW_SIZE_SECTORS), magic 0xa92b4efc, major version 0.
		{"md 0.90", "TYPE=linux_raid_member", "linux_raid_member", 16 * mb, md090()},
		// md RAID 1.2: superblock 4 KiB from the start (md_p.h struct
		// mdp_superblock_1), with super_offset 8 and its checksum.
		{"md 1.2", "TYPE=linux_raid_member", "linux_raid_member", 16 * mb, patches(blockfixture.Patch{4096, md1Super(8)})},
		// ZFS: uberblocks (magic 0x00bab10c) in the label's uberblock ring
		// at 128 KiB of label 0 (ZFS On-Disk Specification §1.2, §1.3);
		// libblkid ignores devices under 64 MiB, the ZFS minimum.
		{"zfs", "TYPE=zfs_member", "zfs_member", 64 * mb, zfsLabel()},
		// bcache: 16-byte magic at 4096+24 (bcache.h struct cache_sb).
		{"bcache", "TYPE=bcache", "bcache", 16 * mb, patches(blockfixture.Patch{4096, bcacheSuper()})},
		// LUKS1: "LUKS\xba\xbe", version 1 (LUKS On-Disk Format 1.2.3).
		{"LUKS", "TYPE=crypto_LUKS", "crypto_LUKS", 16 * mb, patches(blockfixture.Patch{0, at(592, 0, []byte("LUKS\xba\xbe"), 6, []byte{0, 1}, 8, []byte("aes"), 40, []byte("xts-plain64"), 72, []byte("sha256"), 168, []byte("0b6d8f9a-53c5-4bd4-9a4b-5d4a2e2ba4c1"))})},
		// BitLocker: "-FVE-FS-" OEM ID at 3 of a boot sector (libblkid
		// bitlocker.c; Windows 7 and later layout).
		{"BitLocker", "TYPE=BitLocker", "BitLocker", 16 * mb, patches(blockfixture.Patch{0, bitlockerBoot()}, blockfixture.Patch{1 << 20, fveMetadata()})},
		// Ceph BlueStore: "bluestore block device" at 0 (ceph
		// os/bluestore/bluestore_types.h, bluestore_bdev_label_t).
		{"ceph bluestore", "TYPE=ceph_bluestore", "ceph_bluestore", 16 * mb, patches(blockfixture.Patch{0, []byte("bluestore block device\n")})},
		// ISO 9660: primary volume descriptor (type 1, "CD001") at
		// sector 16 of 2 KiB, terminator (type 255) after it (ECMA-119 §8).
		{"iso9660", "TYPE=iso9660", "iso9660", 16 * mb, patches(blockfixture.Patch{32768, isoPVD()}, blockfixture.Patch{34816, []byte("\xffCD001\x01")})},
		// A nested DOS partition table: one Linux partition entry and the
		// boot signature 0x55AA (the MBR layout).
		{"dos table", "PTTYPE=dos", "dos", 16 * mb, patches(blockfixture.Patch{0, dosMBR()})},
		// A nested GPT, written by this package's GPT codec.
		{"gpt table", "PTTYPE=gpt", "gpt", 16 * mb, nestedGPT()},
	}
}

func btrfsSuper() []byte {
	sb := make([]byte, 4096)
	copy(sb[0x20:], []byte{0x5d, 0x2c, 0x4b, 0x6a, 0x1e, 0x3f, 0x44, 0x8e, 0x9c, 0x1a, 0x2b, 0x3c, 0x4d, 0x5e, 0x6f, 0x70}) // fsid
	binary.LittleEndian.PutUint64(sb[0x30:], 65536)                                                                         // bytenr
	copy(sb[0x40:], "_BHRfS_M")
	binary.LittleEndian.PutUint64(sb[0x48:], 7)      // generation
	binary.LittleEndian.PutUint64(sb[0x70:], 16<<20) // total_bytes
	binary.LittleEndian.PutUint32(sb[0x90:], 4096)   // sectorsize
	binary.LittleEndian.PutUint32(sb[0x94:], 16384)  // nodesize
	binary.LittleEndian.PutUint32(sb[0x9c:], 4096)   // stripesize
	crc := crc32.Checksum(sb[0x20:], crc32.MakeTable(crc32.Castagnoli))
	binary.LittleEndian.PutUint32(sb[0:], crc)
	return sb
}

func fat16Boot() []byte {
	b := make([]byte, 512)
	copy(b, []byte{0xeb, 0x3c, 0x90})
	copy(b[3:], "MSDOS5.0")
	binary.LittleEndian.PutUint16(b[11:], 512) // bytes per sector
	b[13] = 4                                  // sectors per cluster
	binary.LittleEndian.PutUint16(b[14:], 4)   // reserved sectors
	b[16] = 2                                  // FATs
	binary.LittleEndian.PutUint16(b[17:], 512) // root entries
	binary.LittleEndian.PutUint16(b[19:], 0)   // total sectors (16-bit): see 32-bit
	b[21] = 0xf8                               // media
	binary.LittleEndian.PutUint16(b[22:], 32)  // sectors per FAT
	binary.LittleEndian.PutUint16(b[24:], 32)  // sectors per track
	binary.LittleEndian.PutUint16(b[26:], 64)  // heads
	binary.LittleEndian.PutUint32(b[32:], 32768)
	b[36] = 0x80
	b[38] = 0x29 // extended boot signature
	binary.LittleEndian.PutUint32(b[39:], 0x1234abcd)
	copy(b[43:], "NO NAME    ")
	copy(b[54:], "FAT16   ")
	b[510], b[511] = 0x55, 0xaa
	return b
}

func ntfsBoot() func(t *testing.T, path string, size int64) {
	b := make([]byte, 512)
	copy(b, []byte{0xeb, 0x52, 0x90})
	copy(b[3:], "NTFS    ")
	binary.LittleEndian.PutUint16(b[11:], 512) // bytes per sector
	b[13] = 8                                  // sectors per cluster
	b[21] = 0xf8
	binary.LittleEndian.PutUint64(b[40:], 32767) // total sectors
	binary.LittleEndian.PutUint64(b[48:], 4)     // MFT cluster
	binary.LittleEndian.PutUint64(b[56:], 2)     // MFT mirror cluster
	b[64] = 0xf6                                 // clusters per MFT record: 2^10 = 1024 bytes
	b[68] = 1                                    // clusters per index record
	binary.LittleEndian.PutUint64(b[72:], 0x0123456789abcdef)
	fillBootCode(b, 84)
	mft := make([]byte, 1024)
	copy(mft, "FILE")
	binary.LittleEndian.PutUint16(mft[20:], 56) // first attribute
	binary.LittleEndian.PutUint32(mft[56:], 0xffffffff)
	// Record 0 ($MFT) and record 3 ($Volume), which libblkid reads too.
	return patches(blockfixture.Patch{0, b}, blockfixture.Patch{4 * 8 * 512, mft}, blockfixture.Patch{4*8*512 + 3*1024, mft})
}

func exfatBootRegion() []byte {
	const ss = 512
	r := make([]byte, 12*ss)
	b := r[:ss]
	copy(b, []byte{0xeb, 0x76, 0x90})
	copy(b[3:], "EXFAT   ")
	binary.LittleEndian.PutUint64(b[72:], 32768) // volume length (sectors)
	binary.LittleEndian.PutUint32(b[80:], 128)   // FAT offset
	binary.LittleEndian.PutUint32(b[84:], 128)   // FAT length
	binary.LittleEndian.PutUint32(b[88:], 256)   // cluster heap offset
	binary.LittleEndian.PutUint32(b[92:], 4064)  // cluster count
	binary.LittleEndian.PutUint32(b[96:], 5)     // root directory cluster
	binary.LittleEndian.PutUint32(b[100:], 0x5eed1234)
	binary.LittleEndian.PutUint16(b[104:], 0x0100) // revision 1.0
	b[108] = 9                                     // bytes per sector shift
	b[109] = 3                                     // sectors per cluster shift
	b[110] = 1                                     // FATs
	b[112] = 0x80
	fillBootCode(b, 120)
	for s := 1; s <= 8; s++ { // extended boot sectors
		r[s*ss+510], r[s*ss+511] = 0x55, 0xaa
	}
	// Boot checksum over sectors 0-10, skipping VolumeFlags (106-107)
	// and PercentInUse (112), repeated through sector 11 (§3.4).
	var sum uint32
	for i := 0; i < 11*ss; i++ {
		if i == 106 || i == 107 || i == 112 {
			continue
		}
		sum = (sum&1)<<31 | sum>>1
		sum += uint32(r[i])
	}
	for i := 0; i < ss; i += 4 {
		binary.LittleEndian.PutUint32(r[11*ss+i:], sum)
	}
	return r
}

func lvm2Label() []byte {
	l := make([]byte, 512)
	copy(l, "LABELONE")
	binary.LittleEndian.PutUint64(l[8:], 1)   // sector
	binary.LittleEndian.PutUint32(l[20:], 32) // offset of the PV header
	copy(l[24:], "LVM2 001")
	copy(l[32:], "AbCdEfGhIjKlMnOpQrStUvWxYz012345") // PV UUID
	binary.LittleEndian.PutUint64(l[64:], 16<<20)
	// LVM's CRC (lib/misc/crc.c: initial 0xf597a6cf, no final xor) over
	// the label from offset 20 to the end of the sector.
	binary.LittleEndian.PutUint32(l[16:], lvmCRC(l[20:]))
	return l
}

// lvmCRC is LVM2's calc_crc: CRC-32 (IEEE, reflected) with the initial
// value 0xf597a6cf and no final inversion.
func lvmCRC(b []byte) uint32 {
	// crc32.Update inverts the value on the way in and out; undo both.
	return ^crc32.Update(^uint32(0xf597a6cf), crc32.IEEETable, b)
}

func md090() func(t *testing.T, path string, size int64) {
	return func(t *testing.T, path string, size int64) {
		t.Helper()
		sb := make([]byte, 4096)
		binary.LittleEndian.PutUint32(sb[0:], 0xa92b4efc)
		binary.LittleEndian.PutUint32(sb[4:], 0)  // major
		binary.LittleEndian.PutUint32(sb[8:], 90) // minor
		binary.LittleEndian.PutUint32(sb[20:], 0x11223344)
		binary.LittleEndian.PutUint32(sb[28:], 1) // level
		binary.LittleEndian.PutUint32(sb[36:], 2) // raid disks
		off := size&^(64<<10-1) - 64<<10
		patches(blockfixture.Patch{int(off), sb})(t, path, size)
	}
}

// md1Super is an md 1.x superblock (struct mdp_superblock_1) for a
// superblock at sector superOffset, with its checksum (mdadm super1.c
// calc_sb_1_csum).
func md1Super(superOffset uint64) []byte {
	sb := make([]byte, 1024)
	binary.LittleEndian.PutUint32(sb[0:], 0xa92b4efc)
	binary.LittleEndian.PutUint32(sb[4:], 1) // major version
	copy(sb[16:], []byte{0x8a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f, 0x60, 0x71, 0x82, 0x93, 0xa4, 0xb5, 0xc6, 0xd7, 0xe8, 0xf9})
	copy(sb[32:], "node:0")
	binary.LittleEndian.PutUint32(sb[72:], 1)     // level
	binary.LittleEndian.PutUint32(sb[92:], 2)     // raid disks
	binary.LittleEndian.PutUint64(sb[128:], 2048) // data offset
	binary.LittleEndian.PutUint64(sb[136:], 16384)
	binary.LittleEndian.PutUint64(sb[144:], superOffset)
	binary.LittleEndian.PutUint32(sb[220:], 2) // max_dev
	var sum uint64
	for i := 0; i < 256+2*2; i += 4 {
		sum += uint64(binary.LittleEndian.Uint32(sb[i:]))
	}
	binary.LittleEndian.PutUint32(sb[216:], uint32(sum&0xffffffff)+uint32(sum>>32))
	return sb
}

func zfsLabel() func(t *testing.T, path string, size int64) {
	var ps []blockfixture.Patch
	for i := int64(0); i < 8; i++ {
		ub := make([]byte, 1024)
		binary.LittleEndian.PutUint64(ub[0:], 0x00bab10c)
		binary.LittleEndian.PutUint64(ub[8:], 5000) // version
		binary.LittleEndian.PutUint64(ub[16:], uint64(100+i))
		ps = append(ps, blockfixture.Patch{int(128<<10 + i*1024), ub})
	}
	return patches(ps...)
}

func bcacheSuper() []byte {
	sb := make([]byte, 512)
	binary.LittleEndian.PutUint64(sb[8:], 8)  // offset (sectors)
	binary.LittleEndian.PutUint64(sb[16:], 1) // version: backing device
	copy(sb[24:], []byte{0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81})
	copy(sb[40:], []byte{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01})
	return sb
}

func bitlockerBoot() []byte {
	b := make([]byte, 512)
	copy(b, []byte{0xeb, 0x58, 0x90})
	copy(b[3:], "-FVE-FS-")
	binary.LittleEndian.PutUint16(b[11:], 512)
	b[13] = 8
	b[21] = 0xf8
	copy(b[160:], []byte{0x3b, 0xd6, 0x67, 0x49, 0x29, 0x2e, 0xd8, 0x4a, 0x83, 0x99, 0xf6, 0xa3, 0x39, 0xe3, 0xd0, 0x01}) // BitLocker GUID
	binary.LittleEndian.PutUint64(b[176:], 1<<20)                                                                         // FVE metadata offset
	fillBootCode(b, 200)
	return b
}

// fveMetadata is the start of a BitLocker FVE metadata block: its
// signature and version 2.
func fveMetadata() []byte { return at(64, 0, []byte("-FVE-FS-"), 8, le16b(64), 10, le16b(2)) }

// fillBootCode fills a boot sector's code area from off to the 0x55AA
// signature with HLT (0xF4), as formatting tools do: boot code is what
// tells a volume boot record from an MBR whose partition entries share
// those bytes.
func fillBootCode(b []byte, off int) {
	for i := off; i < 510; i++ {
		b[i] = 0xf4
	}
	b[510], b[511] = 0x55, 0xaa
}

func isoPVD() []byte {
	b := make([]byte, 2048)
	b[0] = 1
	copy(b[1:], "CD001")
	b[6] = 1
	copy(b[40:], "CSI_NODE_PROXY_TEST             ")
	return b
}

func dosMBR() []byte {
	b := make([]byte, 512)
	binary.LittleEndian.PutUint32(b[440:], 0x5ca1ab1e) // disk signature
	e := b[446:]
	e[0] = 0x00
	e[4] = 0x83 // Linux
	binary.LittleEndian.PutUint32(e[8:], 2048)
	binary.LittleEndian.PutUint32(e[12:], 8192)
	b[510], b[511] = 0x55, 0xaa
	return b
}

func nestedGPT() func(t *testing.T, path string, size int64) {
	return func(t *testing.T, path string, size int64) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		tb := blocktopo.NewGPT(512, mustGUID("a1b2c3d4-0000-4000-8000-00000000abcd"))
		tb.Entries = append(tb.Entries, blocktopo.GPTEntry{Index: 1, Type: blocktopo.TypeLinuxData, ID: mustGUID("a1b2c3d4-0000-4000-8000-00000000ef01"), First: 2048, Last: 4095, Name: "nested"})
		if _, err := f.WriteAt(blocktopo.ProtectiveMBR(nil, 512, uint64(size/512)), 0); err != nil {
			t.Fatal(err)
		}
		if err := blocktopo.WriteTable(f, tb, size); err != nil {
			t.Fatal(err)
		}
	}
}

// mustGUID parses a GUID the test spells out.
func mustGUID(s string) blocktopo.GUID {
	g, err := blocktopo.ParseGUID(s)
	if err != nil {
		panic(err)
	}
	return g
}
