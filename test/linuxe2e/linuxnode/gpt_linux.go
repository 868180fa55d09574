package linuxnode

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// GPT is what the tests read from a disk's primary GPT themselves, as an
// independent witness of what the proxy reports (no blkid needed).
type GPT struct {
	// DiskGUID is the disk GUID in lower case: the loop device's Page83 in
	// ListDiskIDs once it is partitioned.
	DiskGUID string
	// Partitions are the used entries, in table order.
	Partitions []GPTPartition
	// Digest is a SHA-256 of the protective MBR, the header and the entry
	// array: a second PartitionDisk must leave it as it was.
	Digest string
}

// GPTPartition is one used GPT entry.
type GPTPartition struct {
	// Index is the 1-based entry number (the kernel's partition number).
	Index int
	// TypeGUID and ID (the unique GUID: the proxy's volume ID) in lower
	// case.
	TypeGUID, ID string
	// First and Last are LBAs, inclusive.
	First, Last uint64
}

// ReadGPT reads the primary GPT of the disk at path.
func ReadGPT(path string) (*GPT, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read-only
	lbs, err := unix.IoctlGetInt(int(f.Fd()), unix.BLKSSZGET)
	if err != nil {
		return nil, fmt.Errorf("BLKSSZGET %s: %w", path, err)
	}
	hdr := make([]byte, lbs)
	if _, err := f.ReadAt(hdr, int64(lbs)); err != nil {
		return nil, err
	}
	if !bytes.Equal(hdr[:8], []byte("EFI PART")) {
		return nil, errors.New(path + " has no GPT")
	}
	entriesLBA := binary.LittleEndian.Uint64(hdr[72:])
	count := binary.LittleEndian.Uint32(hdr[80:])
	size := binary.LittleEndian.Uint32(hdr[84:])
	if size < 128 || count > 1024 {
		return nil, fmt.Errorf("%s: implausible GPT header (%d entries of %d bytes)", path, count, size)
	}
	entries := make([]byte, int(count)*int(size))
	if _, err := f.ReadAt(entries, int64(entriesLBA)*int64(lbs)); err != nil {
		return nil, err
	}
	mbr := make([]byte, lbs)
	if _, err := f.ReadAt(mbr, 0); err != nil {
		return nil, err
	}
	h := sha256.New()
	h.Write(mbr)
	h.Write(hdr)
	h.Write(entries)
	g := &GPT{DiskGUID: guidString(hdr[56:72]), Digest: hex.EncodeToString(h.Sum(nil))}
	var zero [16]byte
	for i := 0; i < int(count); i++ {
		e := entries[i*int(size):]
		if bytes.Equal(e[:16], zero[:]) {
			continue
		}
		g.Partitions = append(g.Partitions, GPTPartition{
			Index:    i + 1,
			TypeGUID: guidString(e[0:16]),
			ID:       guidString(e[16:32]),
			First:    binary.LittleEndian.Uint64(e[32:]),
			Last:     binary.LittleEndian.Uint64(e[40:]),
		})
	}
	return g, nil
}

// guidString formats a GUID stored in GPT's mixed-endian layout.
func guidString(b []byte) string {
	return fmt.Sprintf("%08x-%04x-%04x-%x-%x",
		binary.LittleEndian.Uint32(b[0:4]), binary.LittleEndian.Uint16(b[4:6]), binary.LittleEndian.Uint16(b[6:8]), b[8:10], b[10:16])
}
