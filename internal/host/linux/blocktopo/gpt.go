package blocktopo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sort"
	"unicode/utf16"
)

// This file reads and writes GUID partition tables (UEFI 2.10 §5.3). The
// backend keeps its own small codec instead of go-diskfs's because it must
// rewrite tables it did not create without losing anything (entry sizes
// other than 128, names, unknown attribute bits), must expose the usable
// area, and must never trigger a partition re-read (BLKRRPART deletes the
// partitions added with BLKPG on kernels without a GPT parser). The tests
// cross-check the codec against go-diskfs in both directions.

const (
	gptSignature      = "EFI PART"
	gptRevision       = 0x00010000
	gptHeaderSize     = 92
	gptDefaultEntries = 128
	gptMinEntrySize   = 128
	// gptMaxArray bounds the entry array we are willing to read, so a
	// corrupt header cannot make us allocate gigabytes.
	gptMaxArray = 1 << 20
	// mib is the alignment of partitions the backend creates or grows.
	mib = 1 << 20
)

// ErrNoGPT reports a disk with no GPT signature in either header.
var ErrNoGPT = errors.New("no GPT")

// ErrDamagedGPT reports a GPT signature whose header or entries fail their
// checks in both copies.
var ErrDamagedGPT = errors.New("the GPT is damaged")

// GPT is a GUID partition table as read from (or about to be written
// to) a disk. Only used entries are kept; Write regenerates the array.
type GPT struct {
	sectorSize int64
	// DiskGUID is the disk's GUID: a loop disk's Page83.
	DiskGUID    GUID
	firstUsable uint64
	lastUsable  uint64
	entriesLBA  uint64 // where the primary entry array starts
	numEntries  uint32
	entrySize   uint32
	// Entries are the used entries, sorted by index.
	Entries []GPTEntry
	// fromBackup is set when the primary header or array was damaged and
	// the table came from the backup at the end of the disk.
	fromBackup bool
}

// GPTEntry is one used partition entry.
type GPTEntry struct {
	// Index is the 1-based slot in the entry array: the kernel's
	// partition number.
	Index int
	// Type is the partition type GUID (TypeLinuxData, ...).
	Type GUID
	// ID is the unique partition GUID: the volume ID (VolumeID).
	ID GUID
	// First and Last are the partition's first and last LBA (inclusive).
	First, Last uint64
	// Attrs are the attribute bits, kept as read.
	Attrs uint64
	// Name is the partition name.
	Name string
	// raw is the entry as read, so bytes past the standard 128 (entry
	// sizes above 128) and the exact name encoding survive a rewrite.
	raw []byte
}

// Sectors is the entry's length in logical sectors.
func (e *GPTEntry) Sectors() uint64 { return e.Last - e.First + 1 }

// arraySectors is the size of the entry array in logical sectors.
func (t *GPT) arraySectors() uint64 {
	n := uint64(t.numEntries) * uint64(t.entrySize)
	return (n + uint64(t.sectorSize) - 1) / uint64(t.sectorSize)
}

// lastUsableFor is the last usable LBA of the table rewritten for a disk of
// diskSectors logical sectors (backup array and header at the very end).
func (t *GPT) lastUsableFor(diskSectors uint64) uint64 {
	// LBAs run 0..diskSectors-1: the backup header takes the last one and
	// the backup array the arraySectors before it.
	reserved := 1 + t.arraySectors() + 1
	if diskSectors < reserved+t.firstUsable {
		return 0
	}
	return diskSectors - reserved
}

// Clone returns a copy of the table that shares nothing with it: a
// change to a disk's table (a new partition, a grown one, new
// identities) is made on a Clone, so the Snapshot it came from stays as
// it was read. The Clone of nil is nil.
func (t *GPT) Clone() *GPT {
	if t == nil {
		return nil
	}
	c := *t
	c.Entries = make([]GPTEntry, len(t.Entries))
	for i, e := range t.Entries {
		e.raw = append([]byte(nil), e.raw...)
		c.Entries[i] = e
	}
	return &c
}

// Entry returns the used entry at index, or nil.
func (t *GPT) Entry(index int) *GPTEntry {
	for i := range t.Entries {
		if t.Entries[i].Index == index {
			return &t.Entries[i]
		}
	}
	return nil
}

// FreeIndex returns the lowest unused slot.
func (t *GPT) FreeIndex() (int, bool) {
	for i := 1; i <= int(t.numEntries); i++ {
		if t.Entry(i) == nil {
			return i, true
		}
	}
	return 0, false
}

// NewGPT returns an empty table for a disk: 128 entries of 128 bytes right
// after the primary header, as every partitioning tool writes it.
func NewGPT(sectorSize int64, diskGUID GUID) *GPT {
	t := &GPT{
		sectorSize: sectorSize,
		DiskGUID:   diskGUID,
		entriesLBA: 2,
		numEntries: gptDefaultEntries,
		entrySize:  gptMinEntrySize,
	}
	t.firstUsable = t.entriesLBA + t.arraySectors()
	return t
}

// gptHeader is a parsed header sector.
type gptHeader struct {
	myLBA, altLBA           uint64
	firstUsable, lastUsable uint64
	diskGUID                GUID
	entriesLBA              uint64
	numEntries, entrySize   uint32
	entriesCRC              uint32
}

// errNoSignature marks a header sector without "EFI PART".
var errNoSignature = errors.New("no GPT signature")

// parseGPTHeader validates a header sector read at lba.
func parseGPTHeader(b []byte, lba uint64) (*gptHeader, error) {
	if len(b) < gptHeaderSize || string(b[0:8]) != gptSignature {
		return nil, errNoSignature
	}
	size := binary.LittleEndian.Uint32(b[12:16])
	if size < gptHeaderSize || int(size) > len(b) {
		return nil, fmt.Errorf("header size %d is invalid", size)
	}
	h := append([]byte(nil), b[:size]...)
	want := binary.LittleEndian.Uint32(h[16:20])
	binary.LittleEndian.PutUint32(h[16:20], 0)
	if got := crc32.ChecksumIEEE(h); got != want {
		return nil, fmt.Errorf("header CRC is %#08x, the header says %#08x", got, want)
	}
	hdr := &gptHeader{
		myLBA:       binary.LittleEndian.Uint64(b[24:32]),
		altLBA:      binary.LittleEndian.Uint64(b[32:40]),
		firstUsable: binary.LittleEndian.Uint64(b[40:48]),
		lastUsable:  binary.LittleEndian.Uint64(b[48:56]),
		diskGUID:    guidFromDisk(b[56:72]),
		entriesLBA:  binary.LittleEndian.Uint64(b[72:80]),
		numEntries:  binary.LittleEndian.Uint32(b[80:84]),
		entrySize:   binary.LittleEndian.Uint32(b[84:88]),
		entriesCRC:  binary.LittleEndian.Uint32(b[88:92]),
	}
	switch {
	case hdr.myLBA != lba:
		return nil, fmt.Errorf("header at LBA %d says it is at LBA %d", lba, hdr.myLBA)
	case hdr.firstUsable > hdr.lastUsable:
		return nil, fmt.Errorf("first usable LBA %d is after last usable LBA %d", hdr.firstUsable, hdr.lastUsable)
	case hdr.entrySize < gptMinEntrySize || hdr.entrySize%8 != 0:
		return nil, fmt.Errorf("partition entry size %d is invalid", hdr.entrySize)
	case hdr.numEntries == 0 || uint64(hdr.numEntries)*uint64(hdr.entrySize) > gptMaxArray:
		return nil, fmt.Errorf("%d partition entries of %d bytes is out of range", hdr.numEntries, hdr.entrySize)
	}
	return hdr, nil
}

// ReadGPT reads the table of a disk of diskSize bytes, falling back to the
// backup header when the primary is damaged. It returns ErrNoGPT when
// neither header has the GPT signature.
func ReadGPT(r io.ReaderAt, sectorSize, diskSize int64) (*GPT, error) {
	diskSectors := uint64(diskSize / sectorSize)
	if diskSectors < 3 {
		return nil, ErrNoGPT
	}
	t, primaryErr := readGPTAt(r, sectorSize, 1, diskSectors)
	if primaryErr == nil {
		return t, nil
	}
	// The backup header normally sits in the last sector; after a disk grew
	// it is where the primary header says (if that much is readable).
	alt := diskSectors - 1
	if hdr, err := readHeader(r, sectorSize, 1); err == nil && hdr.altLBA < diskSectors {
		alt = hdr.altLBA
	}
	t, backupErr := readGPTAt(r, sectorSize, alt, diskSectors)
	if backupErr == nil {
		t.fromBackup = true
		t.entriesLBA = 2 // rewrite the primary array in its usual place
		return t, nil
	}
	if errors.Is(primaryErr, errNoSignature) && errors.Is(backupErr, errNoSignature) {
		return nil, ErrNoGPT
	}
	return nil, fmt.Errorf("%w: primary: %w; backup at LBA %d: %w", ErrDamagedGPT, primaryErr, alt, backupErr)
}

func readHeader(r io.ReaderAt, sectorSize int64, lba uint64) (*gptHeader, error) {
	b := make([]byte, sectorSize)
	if _, err := r.ReadAt(b, int64(lba)*sectorSize); err != nil {
		return nil, fmt.Errorf("read LBA %d: %w", lba, err)
	}
	return parseGPTHeader(b, lba)
}

func readGPTAt(r io.ReaderAt, sectorSize int64, lba, diskSectors uint64) (*GPT, error) {
	hdr, err := readHeader(r, sectorSize, lba)
	if err != nil {
		return nil, err
	}
	arrayLen := int64(hdr.numEntries) * int64(hdr.entrySize)
	if hdr.entriesLBA >= diskSectors || hdr.lastUsable >= diskSectors {
		return nil, fmt.Errorf("header points past the end of the disk (%d sectors)", diskSectors)
	}
	array := make([]byte, arrayLen)
	if _, err := r.ReadAt(array, int64(hdr.entriesLBA)*sectorSize); err != nil {
		return nil, fmt.Errorf("read partition entries at LBA %d: %w", hdr.entriesLBA, err)
	}
	if got := crc32.ChecksumIEEE(array); got != hdr.entriesCRC {
		return nil, fmt.Errorf("partition entries CRC is %#08x, the header says %#08x", got, hdr.entriesCRC)
	}
	t := &GPT{
		sectorSize:  sectorSize,
		DiskGUID:    hdr.diskGUID,
		firstUsable: hdr.firstUsable,
		lastUsable:  hdr.lastUsable,
		entriesLBA:  hdr.entriesLBA,
		numEntries:  hdr.numEntries,
		entrySize:   hdr.entrySize,
	}
	for i := 0; i < int(hdr.numEntries); i++ {
		raw := array[i*int(hdr.entrySize) : (i+1)*int(hdr.entrySize)]
		e := decodeEntry(i+1, raw)
		if e == nil {
			continue
		}
		if e.First > e.Last || e.First < hdr.firstUsable || e.Last > hdr.lastUsable {
			return nil, fmt.Errorf("partition %d (LBA %d-%d) lies outside the usable area %d-%d", e.Index, e.First, e.Last, hdr.firstUsable, hdr.lastUsable)
		}
		t.Entries = append(t.Entries, *e)
	}
	return t, nil
}

// decodeEntry returns nil for an unused (zero type) entry.
func decodeEntry(index int, raw []byte) *GPTEntry {
	typ := guidFromDisk(raw[0:16])
	if typ.IsZero() {
		return nil
	}
	u := make([]uint16, 0, 36)
	for i := 56; i+1 < 128; i += 2 {
		c := binary.LittleEndian.Uint16(raw[i : i+2])
		if c == 0 {
			break
		}
		u = append(u, c)
	}
	return &GPTEntry{
		Index: index,
		Type:  typ,
		ID:    guidFromDisk(raw[16:32]),
		First: binary.LittleEndian.Uint64(raw[32:40]),
		Last:  binary.LittleEndian.Uint64(raw[40:48]),
		Attrs: binary.LittleEndian.Uint64(raw[48:56]),
		Name:  string(utf16.Decode(u)),
		raw:   append([]byte(nil), raw...),
	}
}

// encodeEntry writes e into a slot of size bytes, starting from the bytes
// it was read with so that anything this codec does not model survives.
func encodeEntry(e *GPTEntry, size uint32) ([]byte, error) {
	b := make([]byte, size)
	copy(b, e.raw)
	e.Type.putDisk(b[0:16])
	e.ID.putDisk(b[16:32])
	binary.LittleEndian.PutUint64(b[32:40], e.First)
	binary.LittleEndian.PutUint64(b[40:48], e.Last)
	binary.LittleEndian.PutUint64(b[48:56], e.Attrs)
	if e.raw == nil {
		u := utf16.Encode([]rune(e.Name))
		if len(u) > 36 {
			return nil, fmt.Errorf("partition name %q is longer than 36 UTF-16 code units", e.Name)
		}
		for i, c := range u {
			binary.LittleEndian.PutUint16(b[56+2*i:], c)
		}
	}
	return b, nil
}

// gptWriter is what writeGPT needs: positioned writes and a flush to stable
// storage between the backup and the primary copy.
type gptWriter interface {
	io.WriterAt
	Sync() error
}

// writeGPT writes t to a disk of diskSize bytes: backup array, backup header
// (at the last sector), flush, then primary array and header, flush. A crash
// at any point leaves at least one consistent copy, which ReadGPT finds. The
// last usable LBA follows the disk size, so writing a table read before the
// disk grew moves the backup to the new end.
func writeGPT(w gptWriter, t *GPT, diskSize int64) error {
	ss := uint64(t.sectorSize)
	diskSectors := uint64(diskSize) / ss
	last := t.lastUsableFor(diskSectors)
	if last == 0 || last < t.firstUsable {
		return fmt.Errorf("a disk of %d bytes is too small for a GPT", diskSize)
	}
	if t.entriesLBA < 2 || t.entriesLBA+t.arraySectors() > t.firstUsable {
		return fmt.Errorf("entry array at LBA %d overlaps the usable area starting at LBA %d", t.entriesLBA, t.firstUsable)
	}
	sort.Slice(t.Entries, func(i, j int) bool { return t.Entries[i].Index < t.Entries[j].Index })
	array := make([]byte, uint64(t.numEntries)*uint64(t.entrySize))
	for i := range t.Entries {
		e := &t.Entries[i]
		if e.Index < 1 || e.Index > int(t.numEntries) {
			return fmt.Errorf("partition index %d is outside 1-%d", e.Index, t.numEntries)
		}
		if e.First < t.firstUsable || e.Last > last || e.First > e.Last {
			return fmt.Errorf("partition %d (LBA %d-%d) does not fit the usable area %d-%d", e.Index, e.First, e.Last, t.firstUsable, last)
		}
		if i > 0 && t.Entries[i-1].Index == e.Index {
			return fmt.Errorf("two partitions use index %d", e.Index)
		}
		b, err := encodeEntry(e, t.entrySize)
		if err != nil {
			return err
		}
		copy(array[(e.Index-1)*int(t.entrySize):], b)
	}
	t.lastUsable = last
	arrayCRC := crc32.ChecksumIEEE(array)
	altLBA := diskSectors - 1
	backupArrayLBA := altLBA - t.arraySectors()
	header := func(my, alt, entries uint64) []byte {
		b := make([]byte, ss)
		copy(b[0:8], gptSignature)
		binary.LittleEndian.PutUint32(b[8:12], gptRevision)
		binary.LittleEndian.PutUint32(b[12:16], gptHeaderSize)
		binary.LittleEndian.PutUint64(b[24:32], my)
		binary.LittleEndian.PutUint64(b[32:40], alt)
		binary.LittleEndian.PutUint64(b[40:48], t.firstUsable)
		binary.LittleEndian.PutUint64(b[48:56], last)
		t.DiskGUID.putDisk(b[56:72])
		binary.LittleEndian.PutUint64(b[72:80], entries)
		binary.LittleEndian.PutUint32(b[80:84], t.numEntries)
		binary.LittleEndian.PutUint32(b[84:88], t.entrySize)
		binary.LittleEndian.PutUint32(b[88:92], arrayCRC)
		binary.LittleEndian.PutUint32(b[16:20], crc32.ChecksumIEEE(b[:gptHeaderSize]))
		return b
	}
	writes := []struct {
		what string
		off  uint64
		data []byte
		sync bool
	}{
		{"backup partition entries", backupArrayLBA * ss, array, false},
		{"backup GPT header", altLBA * ss, header(altLBA, 1, backupArrayLBA), true},
		{"primary partition entries", t.entriesLBA * ss, array, false},
		{"primary GPT header", ss, header(1, altLBA, t.entriesLBA), true},
	}
	for _, wr := range writes {
		if _, err := w.WriteAt(wr.data, int64(wr.off)); err != nil {
			return fmt.Errorf("write %s: %w", wr.what, err)
		}
		if wr.sync {
			if err := w.Sync(); err != nil {
				return fmt.Errorf("flush %s: %w", wr.what, err)
			}
		}
	}
	t.fromBackup = false
	return nil
}

// ProtectiveMBR returns sector 0 for a GPT disk of diskSectors sectors: one
// partition of type 0xEE covering the disk, so MBR-only tools leave it
// alone. bootCode (the first 440 bytes of the old sector 0) is kept.
func ProtectiveMBR(old []byte, sectorSize int64, diskSectors uint64) []byte {
	b := make([]byte, sectorSize)
	if len(old) >= 440 {
		copy(b[:440], old[:440])
	}
	e := b[446:462]
	e[1], e[2], e[3] = 0x00, 0x02, 0x00 // CHS of LBA 1
	e[4] = 0xee
	e[5], e[6], e[7] = 0xff, 0xff, 0xff // CHS "too large"
	binary.LittleEndian.PutUint32(e[8:12], 1)
	n := diskSectors - 1
	if n > 0xffffffff {
		n = 0xffffffff
	}
	binary.LittleEndian.PutUint32(e[12:16], uint32(n))
	b[510], b[511] = 0x55, 0xaa
	return b
}

// tableFile is what WriteTable needs: writeGPT's positioned writes and
// flush, plus reading sector 0.
type tableFile interface {
	gptWriter
	io.ReaderAt
}

// WriteTable writes the GPT (see writeGPT), then makes a protective MBR
// cover the disk's current size: a disk that grew keeps the old size in
// its 0xEE entry otherwise, which sfdisk and fdisk report as an error. A
// hybrid MBR, or sector 0 without a protective MBR, is left as it is.
func WriteTable(f tableFile, t *GPT, diskSize int64) error {
	if err := writeGPT(f, t, diskSize); err != nil {
		return err
	}
	sector0 := make([]byte, t.sectorSize)
	if _, err := f.ReadAt(sector0, 0); err != nil {
		return fmt.Errorf("read the protective MBR: %w", err)
	}
	if ClassifyMBR(sector0) != MBRProtective {
		return nil
	}
	want := uint64(diskSize/t.sectorSize) - 1
	if want > 0xffffffff {
		want = 0xffffffff
	}
	for i := 0; i < 4; i++ {
		e := sector0[446+16*i : 446+16*(i+1)]
		if e[4] != 0xee || binary.LittleEndian.Uint32(e[8:12]) != 1 || binary.LittleEndian.Uint32(e[12:16]) == uint32(want) {
			continue
		}
		binary.LittleEndian.PutUint32(e[12:16], uint32(want))
		if _, err := f.WriteAt(sector0, 0); err != nil {
			return fmt.Errorf("resize the protective MBR: %w", err)
		}
		return f.Sync()
	}
	return nil
}

// MBRKind classifies sector 0.
type MBRKind int

// The kinds of sector 0 ClassifyMBR tells apart.
const (
	MBRNone       MBRKind = iota // no boot signature, or no partitions
	MBRProtective                // a GPT's protective MBR
	MBRHybrid                    // 0xEE plus other partitions: leave it alone
	MBRPartitions                // a DOS partition table
)

// ClassifyMBR reads the partition entries of sector 0.
func ClassifyMBR(sector0 []byte) MBRKind {
	if len(sector0) < 512 || sector0[510] != 0x55 || sector0[511] != 0xaa {
		return MBRNone
	}
	var ee, other int
	for i := 0; i < 4; i++ {
		e := sector0[446+16*i : 446+16*(i+1)]
		switch e[4] {
		case 0:
		case 0xee:
			ee++
		default:
			// FAT and NTFS boot sectors also end in 55AA; their "partition
			// entries" are boot code. A real entry has a valid boot flag.
			if e[0] != 0 && e[0] != 0x80 {
				return MBRNone
			}
			other++
		}
	}
	switch {
	case ee > 0 && other == 0:
		return MBRProtective
	case ee > 0:
		return MBRHybrid
	case other > 0:
		return MBRPartitions
	}
	return MBRNone
}

// alignUnit is 1 MiB in sectors.
func alignUnit(sectorSize int64) uint64 {
	if sectorSize >= mib {
		return 1
	}
	return uint64(mib / sectorSize)
}

func alignUp(x, a uint64) uint64   { return (x + a - 1) / a * a }
func alignDown(x, a uint64) uint64 { return x / a * a }

// LargestFree returns the largest 1 MiB-aligned free extent (inclusive LBAs)
// of the table on a disk of diskSectors sectors.
func (t *GPT) LargestFree(diskSectors uint64) (first, last uint64, ok bool) {
	a := alignUnit(t.sectorSize)
	end := t.lastUsableFor(diskSectors)
	if end == 0 {
		return 0, 0, false
	}
	used := append([]GPTEntry(nil), t.Entries...)
	sort.Slice(used, func(i, j int) bool { return used[i].First < used[j].First })
	cursor := t.firstUsable
	consider := func(lo, hi uint64) { // free LBAs lo..hi inclusive
		s := alignUp(lo, a)
		e := alignDown(hi+1, a)
		if e <= s {
			return
		}
		if !ok || e-s > last+1-first {
			first, last, ok = s, e-1, true
		}
	}
	for _, u := range used {
		if u.First > cursor {
			consider(cursor, u.First-1)
		}
		if u.Last+1 > cursor {
			cursor = u.Last + 1
		}
	}
	if cursor <= end {
		consider(cursor, end)
	}
	return first, last, ok
}

// GrowLimit returns the last LBA entry e may grow to on a disk of
// diskSectors sectors: up to the next partition or the end of the usable
// area, with the end aligned to 1 MiB. It never returns less than e.Last.
func (t *GPT) GrowLimit(e *GPTEntry, diskSectors uint64) uint64 {
	limit := t.lastUsableFor(diskSectors)
	for _, o := range t.Entries {
		if o.Index != e.Index && o.First > e.Last && o.First-1 < limit {
			limit = o.First - 1
		}
	}
	end := alignDown(limit+1, alignUnit(t.sectorSize))
	if end == 0 || end-1 < e.Last {
		return e.Last
	}
	return end - 1
}
