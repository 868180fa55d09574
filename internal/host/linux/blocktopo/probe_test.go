package blocktopo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/blockfixture"
)

func TestProbe(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		size    int
		patches []blockfixture.Patch
		want    FSInfo
		mount   string
	}{
		{"blank", 1 << 20, nil, FSInfo{}, ""},
		{"short device", 1024, nil, FSInfo{}, ""},
		{"ext4", 1 << 20, blockfixture.ExtSuperblock(262144, 0x4, 0x40|0x200, 0), FSInfo{Type: "ext4", Size: 1 << 30}, "ext4"},
		{"ext4 64bit", 1 << 20, blockfixture.ExtSuperblock(1<<32+1, 0x4, 0x40|0x80, 0), FSInfo{Type: "ext4", Size: (1<<32 + 1) * 4096}, "ext4"},
		{"ext3", 1 << 20, blockfixture.ExtSuperblock(1000, 0x4, 0, 0), FSInfo{Type: "ext3", Size: 1000 * 4096}, "ext4"},
		{"ext2", 1 << 20, blockfixture.ExtSuperblock(1000, 0, 0, 0), FSInfo{Type: "ext2", Size: 1000 * 4096}, "ext4"},
		{"xfs", 1 << 20, []blockfixture.Patch{{0, []byte("XFSB")}, {4, blockfixture.BE32(4096)}, {8, blockfixture.BE64(131072)}}, FSInfo{Type: "xfs", Size: 512 << 20}, "xfs"},
		{"btrfs", 1 << 20, []blockfixture.Patch{{65536 + 64, []byte("_BHRfS_M")}, {65536 + 112, blockfixture.LE64(3 << 30)}}, FSInfo{Type: "btrfs", Size: 3 << 30}, "btrfs"},
		{"swap", 1 << 20, []blockfixture.Patch{{4086, []byte("SWAPSPACE2")}}, FSInfo{Type: "swap"}, ""},
		{"swap 64k pages", 1 << 20, []blockfixture.Patch{{65526, []byte("SWAPSPACE2")}}, FSInfo{Type: "swap"}, ""},
		{"LUKS", 1 << 20, []blockfixture.Patch{{0, []byte("LUKS\xba\xbe")}}, FSInfo{Type: "crypto_LUKS"}, ""},
		{"LVM PV", 1 << 20, []blockfixture.Patch{{512, []byte("LABELONE")}, {536, []byte("LVM2 001")}}, FSInfo{Type: "LVM2_member"}, ""},
		{"NTFS", 1 << 20, []blockfixture.Patch{{3, []byte("NTFS    ")}}, FSInfo{Type: "ntfs"}, "ntfs3"},
		{"FAT32", 1 << 20, []blockfixture.Patch{{82, []byte("FAT32   ")}, {510, []byte{0x55, 0xaa}}}, FSInfo{Type: "vfat"}, "vfat"},
		{"ISO 9660", 1 << 20, []blockfixture.Patch{{32769, []byte("CD001")}}, FSInfo{Type: "iso9660"}, "iso9660"},
		{"FAT label without boot signature", 1 << 20, []blockfixture.Patch{{82, []byte("FAT32   ")}}, FSInfo{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := make([]byte, tc.size)
			for _, p := range tc.patches {
				copy(img[p.Off:], p.Data)
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
