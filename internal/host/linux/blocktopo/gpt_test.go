package blocktopo

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	diskfsgpt "github.com/diskfs/go-diskfs/partition/gpt"
)

// memDisk is a disk image in memory.
type memDisk struct {
	b     []byte
	syncs int
}

func newMemDisk(size int64) *memDisk { return &memDisk{b: make([]byte, size)} }

func (m *memDisk) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(m.b)) {
		return 0, io.EOF
	}
	n := copy(p, m.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m *memDisk) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(m.b)) {
		return 0, fmt.Errorf("write of %d bytes at %d past the end (%d)", len(p), off, len(m.b))
	}
	return copy(m.b[off:], p), nil
}

func (m *memDisk) Sync() error { m.syncs++; return nil }

// grow appends zeros, as growing a cloud disk does.
func (m *memDisk) grow(size int64) { m.b = append(m.b, make([]byte, size-int64(len(m.b)))...) }

func TestGUIDMixedEndian(t *testing.T) {
	// The Linux filesystem type GUID as it appears on disk (UEFI spec
	// layout: first three fields little-endian).
	onDisk, _ := hex.DecodeString("af3dc60f838472478e793d69d8477de4")
	g := guidFromDisk(onDisk)
	if got, want := g.String(), "0fc63daf-8483-4772-8e79-3d69d8477de4"; got != want {
		t.Fatalf("guidFromDisk = %s, want %s", got, want)
	}
	if g != TypeLinuxData {
		t.Fatal("TypeLinuxData does not match its on-disk form")
	}
	back := make([]byte, 16)
	g.putDisk(back)
	if !bytes.Equal(back, onDisk) {
		t.Fatalf("putDisk = %x, want %x", back, onDisk)
	}
	up, err := ParseGUID("0FC63DAF-8483-4772-8E79-3D69D8477DE4")
	if err != nil || up != g {
		t.Fatalf("ParseGUID upper case = %v, %v", up, err)
	}
	for _, bad := range []string{"", "0fc63daf84834772", "0fc63daf-8483-4772-8e79-3d69d8477dez", "{0fc63daf-8483-4772-8e79-3d69d8477de4}"} {
		if _, err := ParseGUID(bad); err == nil {
			t.Errorf("ParseGUID(%q) succeeded", bad)
		}
	}
	r, err := RandomGUID()
	if err != nil {
		t.Fatal(err)
	}
	if r[6]>>4 != 4 || r[8]>>6 != 2 {
		t.Fatalf("RandomGUID %s is not a version 4 variant 1 GUID", r)
	}
}

// newTestTable builds a table with one data partition over the whole disk.
func newTestTable(t *testing.T, disk *memDisk, sectorSize int64) *GPT {
	t.Helper()
	tab := NewGPT(sectorSize, mustGUID("11111111-2222-3333-4444-555555555555"))
	first, last, ok := tab.LargestFree(uint64(int64(len(disk.b)) / sectorSize))
	if !ok {
		t.Fatal("no free space")
	}
	tab.Entries = append(tab.Entries, GPTEntry{Index: 1, Type: TypeLinuxData, ID: mustGUID("aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"), First: first, Last: last, Name: "csi-node-proxy"})
	if err := writeGPT(disk, tab, int64(len(disk.b))); err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestGPTRoundTrip(t *testing.T) {
	for _, ss := range []int64{512, 4096} {
		t.Run(fmt.Sprint(ss), func(t *testing.T) {
			size := int64(64 << 20)
			disk := newMemDisk(size)
			newTestTable(t, disk, ss)
			if disk.syncs != 2 {
				t.Errorf("writeGPT synced %d times, want 2 (after the backup, after the primary)", disk.syncs)
			}
			got, err := ReadGPT(disk, ss, size)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Entries) != 1 {
				t.Fatalf("read %d entries, want 1", len(got.Entries))
			}
			e := got.Entries[0]
			a := alignUnit(ss)
			if e.First != a || (e.Last+1)%a != 0 {
				t.Errorf("partition LBA %d-%d is not 1 MiB aligned (unit %d sectors)", e.First, e.Last, a)
			}
			if e.Name != "csi-node-proxy" || e.Type != TypeLinuxData || e.ID.String() != "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee" {
				t.Errorf("entry = %+v", e)
			}
			if got.lastUsable != uint64(size/ss)-2-got.arraySectors() {
				t.Errorf("last usable LBA %d", got.lastUsable)
			}
			if got.DiskGUID.String() != "11111111-2222-3333-4444-555555555555" || got.fromBackup {
				t.Errorf("disk GUID %s, fromBackup %v", got.DiskGUID, got.fromBackup)
			}
		})
	}
}

func TestGPTDamage(t *testing.T) {
	const size = 16 << 20
	if _, err := ReadGPT(newMemDisk(size), 512, size); !errors.Is(err, ErrNoGPT) {
		t.Fatalf("blank disk: %v, want ErrNoGPT", err)
	}

	disk := newMemDisk(size)
	newTestTable(t, disk, 512)
	disk.b[512+100] ^= 0xff // inside the primary header's reserved bytes: its CRC still covers only 92 bytes
	disk.b[1024] ^= 0xff    // the primary entry array: its CRC fails
	got, err := ReadGPT(disk, 512, size)
	if err != nil {
		t.Fatalf("damaged primary: %v", err)
	}
	if !got.fromBackup || len(got.Entries) != 1 || got.entriesLBA != 2 {
		t.Fatalf("damaged primary: fromBackup=%v entries=%d entriesLBA=%d", got.fromBackup, len(got.Entries), got.entriesLBA)
	}
	// Rewriting repairs the primary.
	if err := writeGPT(disk, got, size); err != nil {
		t.Fatal(err)
	}
	if again, err := ReadGPT(disk, 512, size); err != nil || again.fromBackup {
		t.Fatalf("after rewrite: %v, fromBackup %v", err, again != nil && again.fromBackup)
	}

	disk.b[1024] ^= 0xff
	disk.b[size-512-16384] ^= 0xff // backup array
	_, err = ReadGPT(disk, 512, size)
	if !errors.Is(err, ErrDamagedGPT) || !strings.Contains(err.Error(), "CRC") {
		t.Fatalf("both copies damaged: %v, want ErrDamagedGPT naming the CRC", err)
	}

	// A header claiming an absurd array is refused before any allocation.
	hdr := make([]byte, 512)
	copy(hdr, gptSignature)
	if _, err := parseGPTHeader(hdr, 1); err == nil {
		t.Fatal("a header with size 0 parsed")
	}
}

func TestGPTGrowDisk(t *testing.T) {
	const small, big = 32 << 20, 96 << 20
	disk := newMemDisk(small)
	newTestTable(t, disk, 512)
	disk.grow(big)
	// The primary still points at the old backup, which ReadGPT does not
	// need; the table reads as before.
	tab, err := ReadGPT(disk, 512, big)
	if err != nil {
		t.Fatal(err)
	}
	e := &tab.Entries[0]
	limit := tab.GrowLimit(e, big/512)
	if (limit+1)%2048 != 0 || limit <= e.Last || limit > tab.lastUsableFor(big/512) {
		t.Fatalf("grow limit %d (old end %d, usable end %d)", limit, e.Last, tab.lastUsableFor(big/512))
	}
	e.Last = limit
	if err := writeGPT(disk, tab, big); err != nil {
		t.Fatal(err)
	}
	// The backup moved to the new end: damage the primary and read again.
	disk.b[1024] ^= 0xff
	got, err := ReadGPT(disk, 512, big)
	if err != nil || !got.fromBackup || got.Entries[0].Last != limit {
		t.Fatalf("after growth, backup read: %v (fromBackup %v)", err, got != nil && got.fromBackup)
	}
	// Writing a table that no longer fits (the disk shrank) is refused.
	if err := writeGPT(newMemDisk(small), tab, small); err == nil {
		t.Fatal("writeGPT accepted a partition past the end of the disk")
	}
}

func TestLargestFreeAndGrowLimit(t *testing.T) {
	const sectors = 100 << 11 // 100 MiB
	tab := NewGPT(512, GUID{})
	tab.Entries = []GPTEntry{
		{Index: 2, Type: TypeLinuxData, First: 2048, Last: 10*2048 - 1},      // 1-10 MiB
		{Index: 1, Type: TypeLinuxData, First: 40 * 2048, Last: 50*2048 + 7}, // 40-50 MiB, unaligned end
	}
	first, last, ok := tab.LargestFree(sectors)
	if !ok || first != 51*2048 || (last+1)%2048 != 0 {
		t.Fatalf("largestFree = %d-%d %v, want from 51 MiB, aligned", first, last, ok)
	}
	if l := tab.GrowLimit(&tab.Entries[0], sectors); l != 40*2048-1 {
		t.Errorf("growLimit before the next partition = %d, want %d", l, 40*2048-1)
	}
	if i, ok := tab.FreeIndex(); !ok || i != 3 {
		t.Errorf("freeIndex = %d %v", i, ok)
	}
	full := NewGPT(512, GUID{})
	full.Entries = []GPTEntry{{Index: 1, Type: TypeLinuxData, First: 34, Last: full.lastUsableFor(sectors)}}
	if _, _, ok := full.LargestFree(sectors); ok {
		t.Error("largestFree found space on a full disk")
	}
	if l := full.GrowLimit(&full.Entries[0], sectors); l != full.Entries[0].Last {
		t.Errorf("growLimit of a partition past the aligned end = %d, want its own end", l)
	}
}

func TestClassifyMBR(t *testing.T) {
	prot := ProtectiveMBR(nil, 512, 1<<20)
	if k := ClassifyMBR(prot); k != MBRProtective {
		t.Errorf("protective MBR classified %d", k)
	}
	dos := make([]byte, 512)
	dos[510], dos[511] = 0x55, 0xaa
	dos[446+4] = 0x83 // Linux
	if k := ClassifyMBR(dos); k != MBRPartitions {
		t.Errorf("DOS table classified %d", k)
	}
	hybrid := append([]byte(nil), prot...)
	hybrid[446+16+4] = 0x0c
	if k := ClassifyMBR(hybrid); k != MBRHybrid {
		t.Errorf("hybrid MBR classified %d", k)
	}
	fat := make([]byte, 512)
	fat[510], fat[511] = 0x55, 0xaa
	fat[446], fat[446+4] = 0x1f, 0x33 // boot code, not a boot flag
	if k := ClassifyMBR(fat); k != MBRNone {
		t.Errorf("boot sector classified %d", k)
	}
	if k := ClassifyMBR(make([]byte, 512)); k != MBRNone {
		t.Errorf("zero sector classified %d", k)
	}
}

// TestGPTAgainstGoDiskfs checks the codec against an independent one in
// both directions.
func TestGPTAgainstGoDiskfs(t *testing.T) {
	const size = 64 << 20
	dir := t.TempDir()

	// Ours, read by go-diskfs.
	ours := filepath.Join(dir, "ours.img")
	disk := newMemDisk(size)
	copy(disk.b, ProtectiveMBR(nil, 512, size/512))
	tab := newTestTable(t, disk, 512)
	if err := os.WriteFile(ours, disk.b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(ours)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	theirs, err := diskfsgpt.Read(f, 512, 512)
	if err != nil {
		t.Fatalf("go-diskfs cannot read our table: %v", err)
	}
	if !strings.EqualFold(theirs.GUID, tab.DiskGUID.String()) || !theirs.ProtectiveMBR || len(theirs.Partitions) != 1 {
		t.Fatalf("go-diskfs read GUID %s, protective %v, %d partitions", theirs.GUID, theirs.ProtectiveMBR, len(theirs.Partitions))
	}
	p := theirs.Partitions[0]
	e := tab.Entries[0]
	if p.Index != 1 || p.Start != e.First || p.End != e.Last || !strings.EqualFold(p.GUID, e.ID.String()) || !strings.EqualFold(string(p.Type), TypeLinuxData.String()) || p.Name != e.Name {
		t.Fatalf("go-diskfs read %+v, we wrote %+v", p, e)
	}

	// go-diskfs's, read by us.
	theirsPath := filepath.Join(dir, "theirs.img")
	g, err := os.Create(theirsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Truncate(size); err != nil {
		t.Fatal(err)
	}
	want := &diskfsgpt.Table{
		LogicalSectorSize: 512, PhysicalSectorSize: 512, ProtectiveMBR: true,
		GUID: "01234567-89AB-CDEF-0123-456789ABCDEF",
		Partitions: []*diskfsgpt.Partition{
			{Index: 1, Start: 2048, End: 4095, Type: diskfsgpt.EFISystemPartition, Name: "EFI"},
			{Index: 3, Start: 4096, End: 100000, Type: diskfsgpt.LinuxFilesystem, Name: "data", GUID: "5AB1D0A6-0000-4000-8000-000000000003"},
		},
	}
	if err := want.Write(g, size); err != nil {
		t.Fatal(err)
	}
	got, err := ReadGPT(g, 512, size)
	if err != nil {
		t.Fatalf("we cannot read go-diskfs's table: %v", err)
	}
	if got.DiskGUID.String() != "01234567-89ab-cdef-0123-456789abcdef" || len(got.Entries) != 2 {
		t.Fatalf("read GUID %s, %d entries", got.DiskGUID, len(got.Entries))
	}
	if e := got.Entry(3); e == nil || e.First != 4096 || e.Last != 100000 || e.ID.String() != "5ab1d0a6-0000-4000-8000-000000000003" || e.Name != "data" {
		t.Fatalf("entry 3 = %+v", e)
	}
	if e := got.Entry(1); e == nil || e.Type != TypeEFISystem {
		t.Fatalf("entry 1 = %+v", e)
	}
	sector0 := make([]byte, 512)
	if _, err := g.ReadAt(sector0, 0); err != nil {
		t.Fatal(err)
	}
	if ClassifyMBR(sector0) != MBRProtective {
		t.Fatal("go-diskfs's protective MBR not recognised")
	}
}
