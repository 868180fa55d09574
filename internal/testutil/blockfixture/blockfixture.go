// Package blockfixture holds what the tests of the Linux block packages
// (blocktopo, blockdev) share: copying the recorded sysfs fixture into a
// test's directory, writing fixture files, and the superblock patches that
// make a sparse file look like a formatted device. Both packages' tests read
// the same fixture (internal/host/linux/blocktopo/testdata/sysfs), so the
// helpers that lay it out live once, here.
package blockfixture

import (
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Numbers of the recorded fixture's disks: their diskseq, by which the
// backends number disks. blocktopo's and blockdev's tests both name them.
const (
	SDA   = 3
	SDB   = 4
	VDB   = 5
	NVMe  = 6
	Loop3 = 12
)

// ColonsOK tells whether the OS allows ':' in file names. SCSI addresses
// in sysfs names have colons; the fixture stores them as %3A so that it
// can be checked out on Windows, and CopyTree turns them back.
var ColonsOK = runtime.GOOS != "windows"

// CopyTree copies a fixture tree from src to dst, turning %3A in names
// back into ':' where the OS allows it.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if ColonsOK {
			rel = strings.ReplaceAll(rel, "%3A", ":")
		}
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
}

// WriteFile writes a fixture file (a sysfs attribute, say), creating its
// directories; it fails the test on error.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Patch is data to write at Off in a device image. It is an alias of an
// unnamed struct so that tests can write tables of {offset, bytes} pairs
// without field names, as they did when each package had its own.
type Patch = struct {
	Off  int
	Data []byte
}

// LE32 is v as 4 little-endian bytes.
func LE32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// LE64 is v as 8 little-endian bytes.
func LE64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// BE32 is v as 4 big-endian bytes.
func BE32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// BE64 is v as 8 big-endian bytes.
func BE64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// ExtSuperblock is the patches of an ext2/3/4 superblock (at byte 1024)
// with 4 KiB blocks, blocks blocks (the high word in s_blocks_count_hi
// when it has one) and the three feature words, which tell ext2, ext3 and
// ext4 apart. Offsets are those of the kernel's struct ext4_super_block.
func ExtSuperblock(blocks uint64, compat, incompat, roCompat uint32) []Patch {
	const sb = 1024
	ps := []Patch{
		{sb + 4, LE32(uint32(blocks))},
		{sb + 24, LE32(2)}, // s_log_block_size: 1024 << 2
		{sb + 56, []byte{0x53, 0xef}},
		{sb + 92, LE32(compat)},
		{sb + 96, LE32(incompat)},
		{sb + 100, LE32(roCompat)},
	}
	if blocks>>32 != 0 {
		ps = append(ps, Patch{sb + 0x150, LE32(uint32(blocks >> 32))})
	}
	return ps
}
