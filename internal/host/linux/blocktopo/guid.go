package blocktopo

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
)

// GUID is a GUID in canonical byte order: the order of its string form
// 01234567-89ab-cdef-0123-456789abcdef. GPT stores the first three fields
// little-endian on disk ("mixed endian"); guidFromDisk and putDisk convert.
type GUID [16]byte

// ParseGUID reads the 36-character form in either case.
func ParseGUID(s string) (GUID, error) {
	var g GUID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return g, fmt.Errorf("%q is not a GUID of the form 01234567-89ab-cdef-0123-456789abcdef", s)
	}
	h := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
	if _, err := hex.Decode(g[:], []byte(h)); err != nil {
		return g, fmt.Errorf("%q is not a GUID: %w", s, err)
	}
	return g, nil
}

// String returns the lower-case 36-character form, which is also the
// volume ID of a partition (see VolumeID).
func (g GUID) String() string {
	h := hex.EncodeToString(g[:])
	return strings.Join([]string{h[0:8], h[8:12], h[12:16], h[16:20], h[20:32]}, "-")
}

// IsZero tells whether g is the all-zero GUID (none set).
func (g GUID) IsZero() bool { return g == GUID{} }

// guidFromDisk decodes 16 bytes in GPT's mixed-endian layout.
func guidFromDisk(b []byte) GUID {
	var g GUID
	binary.BigEndian.PutUint32(g[0:4], binary.LittleEndian.Uint32(b[0:4]))
	binary.BigEndian.PutUint16(g[4:6], binary.LittleEndian.Uint16(b[4:6]))
	binary.BigEndian.PutUint16(g[6:8], binary.LittleEndian.Uint16(b[6:8]))
	copy(g[8:], b[8:16])
	return g
}

// putDisk encodes g into b[0:16] in GPT's mixed-endian layout.
func (g GUID) putDisk(b []byte) {
	binary.LittleEndian.PutUint32(b[0:4], binary.BigEndian.Uint32(g[0:4]))
	binary.LittleEndian.PutUint16(b[4:6], binary.BigEndian.Uint16(g[4:6]))
	binary.LittleEndian.PutUint16(b[6:8], binary.BigEndian.Uint16(g[6:8]))
	copy(b[8:16], g[8:])
}

// RandomGUID returns a random (version 4) GUID.
func RandomGUID() (GUID, error) {
	var g GUID
	if _, err := rand.Read(g[:]); err != nil {
		return g, fmt.Errorf("random GUID: %w", err)
	}
	g[6] = g[6]&0x0f | 0x40
	g[8] = g[8]&0x3f | 0x80
	return g, nil
}

// Partition type GUIDs the backend recognises.
var (
	// TypeLinuxData is what PartitionDisk creates: the partition holds a
	// Linux filesystem. (Windows creates Basic Data; a Linux node formats
	// ext4 or XFS, so the Linux type is the honest one.)
	TypeLinuxData = mustGUID("0fc63daf-8483-4772-8e79-3d69d8477de4")
	// TypeMicrosoftReserved partitions carry no volume (Windows lists none
	// for them either), so they are skipped when listing volumes and do not
	// count as data partitions.
	TypeMicrosoftReserved = mustGUID("e3c9e316-0b5c-4db8-817d-f92df00215ae")
	// TypeBIOSBoot and TypeEFISystem hold boot loaders: never formatted.
	TypeBIOSBoot  = mustGUID("21686148-6449-6e6f-744e-656564454649")
	TypeEFISystem = mustGUID("c12a7328-f81f-11d2-ba4b-00a0c93ec93b")
)

func mustGUID(s string) GUID {
	g, err := ParseGUID(s)
	if err != nil {
		panic(err)
	}
	return g
}
