package blockdev

import (
	"encoding/binary"
)

// The fake mkfs and the signature cases write superblocks into fixture
// devices the way blocktopo's probe tests do; these are the same small
// helpers on this side of the package boundary.

// patch is data to write at off in a device image.
type patch struct {
	off  int
	data []byte
}

func le32b(v uint32) []byte { b := make([]byte, 4); binary.LittleEndian.PutUint32(b, v); return b }
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
