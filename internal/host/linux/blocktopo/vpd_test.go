package blocktopo

import (
	"os"
	"testing"
)

// vpd83 builds a VPD page 0x83 from designators.
func vpd83(ds ...[]byte) []byte {
	var body []byte
	for _, d := range ds {
		body = append(body, d...)
	}
	return append([]byte{0x00, 0x83, byte(len(body) >> 8), byte(len(body))}, body...)
}

// desig builds one designator: code set, association, type, value.
func desig(codeSet, assoc, kind byte, value []byte) []byte {
	return append([]byte{codeSet, assoc<<4 | kind, 0, byte(len(value))}, value...)
}

func TestPage83ID(t *testing.T) {
	naa := []byte{0x60, 0x0a, 0x0b, 0x80, 0x00, 0x11, 0x11, 0x55, 0, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef}
	eui := []byte{0x00, 0x25, 0x38, 0x8b, 0x91, 0xc3, 0xd1, 0xa2}
	t10 := []byte("IET     VIRTUAL-DISK    beaf11")
	for _, tc := range []struct {
		name string
		page []byte
		want string
	}{
		{"NAA binary is hex", vpd83(desig(1, 0, 3, naa)), "600a0b800011115500000000deadbeef"},
		{"EUI-64 binary is hex", vpd83(desig(1, 0, 2, eui)), "0025388b91c3d1a2"},
		{"T10 ASCII as is", vpd83(desig(2, 0, 1, t10)), "IET     VIRTUAL-DISK    beaf11"},
		{"first LU designator wins, in page order", vpd83(desig(2, 0, 1, t10), desig(1, 0, 3, naa)), "IET     VIRTUAL-DISK    beaf11"},
		{"target port designators are skipped", vpd83(desig(1, 1, 3, []byte{0x50, 1, 2, 3, 4, 5, 6, 7}), desig(1, 0, 3, naa)), "600a0b800011115500000000deadbeef"},
		{"UTF-8 SCSI names are skipped", vpd83(desig(3, 0, 8, []byte("iqn.2026-11.io.example:t")), desig(1, 0, 2, eui)), "0025388b91c3d1a2"},
		{"trailing NUL padding dropped", vpd83(desig(2, 0, 0, []byte("VENDOR-ID\x00\x00\x00"))), "VENDOR-ID"},
		{"nothing usable", vpd83(desig(1, 1, 4, []byte{0, 0, 0, 1})), ""},
		{"empty page", vpd83(), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := parseVPD83(tc.page)
			if err != nil {
				t.Fatal(err)
			}
			if got := page83ID(ds); got != tc.want {
				t.Fatalf("page83ID = %q, want %q", got, tc.want)
			}
		})
	}

	for _, bad := range [][]byte{
		{0x00, 0x83},                   // short header
		{0x00, 0x80, 0x00, 0x00},       // wrong page
		{0x00, 0x83, 0x00, 0x10, 1, 3}, // length past the end
		vpd83([]byte{1, 3, 0}),         // truncated designator header
		vpd83([]byte{1, 3, 0, 9, 1}),   // designator past the page
	} {
		if ds, err := parseVPD83(bad); err == nil {
			t.Errorf("parseVPD83(%x) = %v, want an error", bad, ds)
		}
	}
}

func TestParseVPD83Fields(t *testing.T) {
	ds, err := parseVPD83(vpd83([]byte{0x61, 0x94, 0, 4, 0, 0, 0, 1}))
	if err != nil {
		t.Fatal(err)
	}
	d := ds[0]
	if d.protocol != 6 || d.codeSet != 1 || !d.piv || d.assoc != 1 || d.kind != 4 || len(d.value) != 4 {
		t.Fatalf("designator = %+v", d)
	}
}

func TestVPDFixtureFiles(t *testing.T) {
	// The fixture's binary pages: a target-port designator, then NAA, then
	// T10 ("IET     VIRTUAL-DISK    ").
	b, err := os.ReadFile("testdata/sysfs/block/sda/device/vpd_pg83")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := parseVPD83(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 3 || page83ID(ds) != "600a0b800011115500000000deadbeef" || string(ds[2].value) != "IET     VIRTUAL-DISK    " {
		t.Fatalf("designators %+v", ds)
	}
	b, err = os.ReadFile("testdata/sysfs/block/sda/device/vpd_pg80")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := parseVPD80(b); err != nil || s != "SN-SDA-0001" {
		t.Fatalf("parseVPD80 = %q, %v", s, err)
	}
}

func TestParseVPD80(t *testing.T) {
	if s, err := parseVPD80(append([]byte{0, 0x80, 0, 6}, "  ab  "...)); err != nil || s != "ab" {
		t.Fatalf("parseVPD80 = %q, %v", s, err)
	}
	for _, bad := range [][]byte{{0, 0x80}, {0, 0x83, 0, 0}, {0, 0x80, 0, 9, 'a'}} {
		if _, err := parseVPD80(bad); err == nil {
			t.Errorf("parseVPD80(%x) succeeded", bad)
		}
	}
}

func TestWWIDToPage83(t *testing.T) {
	for in, want := range map[string]string{
		"naa.600a0b800011115500000000deadbeef\n": "600a0b800011115500000000deadbeef",
		"eui.0025388b91c3d1a2":                   "0025388b91c3d1a2",
		"t10.IET     VIRTUAL-DISK    sdb-0001":   "IET     VIRTUAL-DISK    sdb-0001",
		"nvme.1b36-31323334-51454d55-00000001":   "nvme.1b36-31323334-51454d55-00000001",
	} {
		if got := wwidToPage83(in); got != want {
			t.Errorf("wwidToPage83(%q) = %q, want %q", in, got, want)
		}
	}
}
