package blocktopo

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// image builds a device image of size bytes with the given patches.
type patch struct {
	off  int
	data []byte
}

func le32b(v uint32) []byte { b := make([]byte, 4); binary.LittleEndian.PutUint32(b, v); return b }
func le64b(v uint64) []byte { b := make([]byte, 8); binary.LittleEndian.PutUint64(b, v); return b }
func be32b(v uint32) []byte { b := make([]byte, 4); binary.BigEndian.PutUint32(b, v); return b }
func be64b(v uint64) []byte { b := make([]byte, 8); binary.BigEndian.PutUint64(b, v); return b }

// extSuperblock patches an ext superblock: 4 KiB blocks, the block count,
// and the feature words.
func extSuperblock(blocks uint64, compat, incompat, roCompat uint32) []patch {
	sb := 1024
	ps := []patch{
		{sb + 4, le32b(uint32(blocks))},
		{sb + 24, le32b(2)}, // 1024 << 2
		{sb + 56, []byte{0x53, 0xef}},
		{sb + 92, le32b(compat)},
		{sb + 96, le32b(incompat)},
		{sb + 100, le32b(roCompat)},
	}
	if blocks>>32 != 0 {
		ps = append(ps, patch{sb + 0x150, le32b(uint32(blocks >> 32))})
	}
	return ps
}

func TestProbe(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		size    int
		patches []patch
		want    FSInfo
		mount   string
	}{
		{"blank", 1 << 20, nil, FSInfo{}, ""},
		{"short device", 1024, nil, FSInfo{}, ""},
		{"ext4", 1 << 20, extSuperblock(262144, 0x4, 0x40|0x200, 0), FSInfo{Type: "ext4", Size: 1 << 30}, "ext4"},
		{"ext4 64bit", 1 << 20, extSuperblock(1<<32+1, 0x4, 0x40|0x80, 0), FSInfo{Type: "ext4", Size: (1<<32 + 1) * 4096}, "ext4"},
		{"ext3", 1 << 20, extSuperblock(1000, 0x4, 0, 0), FSInfo{Type: "ext3", Size: 1000 * 4096}, "ext4"},
		{"ext2", 1 << 20, extSuperblock(1000, 0, 0, 0), FSInfo{Type: "ext2", Size: 1000 * 4096}, "ext4"},
		{"xfs", 1 << 20, []patch{{0, []byte("XFSB")}, {4, be32b(4096)}, {8, be64b(131072)}}, FSInfo{Type: "xfs", Size: 512 << 20}, "xfs"},
		{"btrfs", 1 << 20, []patch{{65536 + 64, []byte("_BHRfS_M")}, {65536 + 112, le64b(3 << 30)}}, FSInfo{Type: "btrfs", Size: 3 << 30}, "btrfs"},
		{"swap", 1 << 20, []patch{{4086, []byte("SWAPSPACE2")}}, FSInfo{Type: "swap"}, ""},
		{"swap 64k pages", 1 << 20, []patch{{65526, []byte("SWAPSPACE2")}}, FSInfo{Type: "swap"}, ""},
		{"LUKS", 1 << 20, []patch{{0, []byte("LUKS\xba\xbe")}}, FSInfo{Type: "crypto_LUKS"}, ""},
		{"LVM PV", 1 << 20, []patch{{512, []byte("LABELONE")}, {536, []byte("LVM2 001")}}, FSInfo{Type: "LVM2_member"}, ""},
		{"NTFS", 1 << 20, []patch{{3, []byte("NTFS    ")}}, FSInfo{Type: "ntfs"}, "ntfs3"},
		{"FAT32", 1 << 20, []patch{{82, []byte("FAT32   ")}, {510, []byte{0x55, 0xaa}}}, FSInfo{Type: "vfat"}, "vfat"},
		{"ISO 9660", 1 << 20, []patch{{32769, []byte("CD001")}}, FSInfo{Type: "iso9660"}, "iso9660"},
		{"FAT label without boot signature", 1 << 20, []patch{{82, []byte("FAT32   ")}}, FSInfo{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := make([]byte, tc.size)
			for _, p := range tc.patches {
				copy(img[p.off:], p.data)
			}
			path := filepath.Join(dir, tc.name)
			if err := os.WriteFile(path, img, 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ProbeDevice(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("probe = %+v, want %+v", got, tc.want)
			}
			if m := got.MountType(); m != tc.mount {
				t.Fatalf("mountType = %q, want %q", m, tc.mount)
			}
		})
	}
	if _, err := ProbeDevice(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("probing a missing device succeeded")
	}
}
