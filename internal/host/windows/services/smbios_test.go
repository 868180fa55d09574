package services

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// structure builds one SMBIOS structure: the 4-byte header (type, length,
// handle), the rest of the formatted area, and the string set.
func structure(typ byte, formatted []byte, strs ...string) []byte {
	b := []byte{typ, byte(4 + len(formatted)), 0x34, 0x12}
	b = append(b, formatted...)
	if len(strs) == 0 {
		return append(b, 0, 0)
	}
	for _, s := range strs {
		b = append(append(b, s...), 0)
	}
	return append(b, 0)
}

// sysInfo is a type 1 formatted area after the header (SMBIOS 2.4 size,
// 0x1B bytes in all) whose Serial Number is string serial.
func sysInfo(serial byte) []byte {
	f := make([]byte, 0x1B-4)
	f[0], f[1], f[2] = 1, 2, 3 // manufacturer, product, version
	f[smbiosSerialOffset-4] = serial
	return f
}

// rawSMBIOS wraps structures in a RawSMBIOSData header, SMBIOS 3.3.
func rawSMBIOS(structs ...[]byte) []byte {
	var table []byte
	for _, s := range structs {
		table = append(table, s...)
	}
	b := make([]byte, 8, 8+len(table))
	b[1], b[2] = 3, 3
	binary.LittleEndian.PutUint32(b[4:], uint32(len(table)))
	return append(b, table...)
}

func TestSerialNumberFromSMBIOS(t *testing.T) {
	vmware := "VMware-42 29 92 4b 83 35 d9 77-f3 82 cf 46 56 61 ac 60"
	for name, c := range map[string]struct {
		raw  []byte
		want string
	}{
		"dell": {rawSMBIOS(
			structure(0, []byte{1, 2, 0, 3, 0, 0}, "Dell Inc.", "2.1.0", "01/01/2024"),
			structure(1, sysInfo(4), "Dell Inc.", "PowerEdge R650", "A01", "7XYZ123"),
			structure(127, nil),
		), "7XYZ123"},
		"vmware": {rawSMBIOS(
			structure(1, sysInfo(4), "VMware, Inc.", "VMware7,1", "None", vmware),
			structure(127, nil),
		), vmware},
		"no serial string":        {rawSMBIOS(structure(1, sysInfo(0), "Acme"), structure(127, nil)), ""},
		"spaces trimmed":          {rawSMBIOS(structure(1, sysInfo(1), "  SN 42  ")), "SN 42"},
		"latin-1":                 {rawSMBIOS(structure(1, sysInfo(1), "Caf\xe9")), "Café"},
		"smbios 2.0 type 1":       {rawSMBIOS(structure(1, []byte{1, 2, 3, 1}, "SER")), "SER"},
		"no end marker":           {rawSMBIOS(structure(2, nil), structure(1, sysInfo(1), "X")), "X"},
		"table padding after end": {append(rawSMBIOS(structure(1, sysInfo(1), "X")), 0, 0, 0), "X"},
	} {
		got, err := SerialNumberFromSMBIOS(c.raw)
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", name, got, err, c.want)
		}
	}
}

func TestSerialNumberFromSMBIOSNotFound(t *testing.T) {
	for name, raw := range map[string][]byte{
		"no type 1":        rawSMBIOS(structure(0, []byte{1, 2, 0, 3}, "BIOS"), structure(127, nil)),
		"type 1 after end": rawSMBIOS(structure(127, nil), structure(1, sysInfo(1), "X")),
		"empty table":      rawSMBIOS(),
	} {
		if _, err := SerialNumberFromSMBIOS(raw); !errors.Is(err, errdefs.ErrNotFound) {
			t.Errorf("%s: %v, want NotFound", name, err)
		}
	}
}

func TestSerialNumberFromSMBIOSMalformed(t *testing.T) {
	good := rawSMBIOS(
		structure(0, []byte{1, 2, 0, 3}, "BIOS vendor", "1.0"),
		structure(1, sysInfo(2), "Acme", "SERIAL-1"),
	)
	// Every truncation of the buffer (header included) is an error or,
	// once the type 1 structure is whole, the right answer: never a panic
	// or a wrong serial.
	for n := 0; n < len(good); n++ {
		b := append([]byte(nil), good[:n]...)
		if sn, err := SerialNumberFromSMBIOS(b); err == nil {
			t.Errorf("buffer cut to %d of %d bytes: got %q and no error", n, len(good), sn)
		}
		// The same table with a Length that matches the cut.
		if n >= 8 {
			binary.LittleEndian.PutUint32(b[4:], uint32(n-8))
			sn, err := SerialNumberFromSMBIOS(b)
			if err == nil && sn != "SERIAL-1" {
				t.Errorf("table cut to %d bytes: got %q", n-8, sn)
			}
		}
	}
	for name, raw := range map[string][]byte{
		"serial string missing": rawSMBIOS(structure(1, sysInfo(3), "Acme", "X")),
		"type 1 too short":      rawSMBIOS(structure(1, []byte{1, 2}, "Acme")),
		"length below header":   rawSMBIOS([]byte{1, 2, 0, 0, 0, 0}),
		"length past the table": rawSMBIOS([]byte{1, 0x40, 0, 0, 0, 0}),
		"empty string in set":   rawSMBIOS(structure(1, sysInfo(3), "Acme", "", "SN")),
		"single NUL string set": rawSMBIOS([]byte{0, 4, 0, 0, 0, 'x', 0, 0}),
		"length field too big":  func() []byte { b := rawSMBIOS(structure(1, sysInfo(1), "X")); b[7] = 0x10; return b }(),
	} {
		if _, err := SerialNumberFromSMBIOS(raw); !errors.Is(err, errMalformedSMBIOS) {
			t.Errorf("%s: %v, want a malformed-data error", name, err)
		}
	}
}
