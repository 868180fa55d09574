package services

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// SMBIOS structure types (DMTF DSP0134).
const (
	smbiosSystemInformation = 1
	smbiosEndOfTable        = 127
	// smbiosSerialOffset is the offset of the Serial Number string
	// number in the System Information (type 1) formatted area.
	smbiosSerialOffset = 0x07
	// rawSMBIOSHeader is the size of RawSMBIOSData before the table:
	// Used20CallingMethod, SMBIOSMajorVersion, SMBIOSMinorVersion,
	// DmiRevision (one byte each) and Length (u32).
	rawSMBIOSHeader = 8
)

// errMalformedSMBIOS is wrapped by every structural problem in a table.
var errMalformedSMBIOS = errors.New("malformed SMBIOS data")

// SerialNumberFromSMBIOS returns the system serial number from the buffer
// GetSystemFirmwareTable('RSMB', 0) fills (a RawSMBIOSData): the Serial
// Number string of the first System Information (type 1) structure.
//
// That is the value upstream returns: upstream reads
// CIM_BIOSElement.SerialNumber (the Win32_BIOS instance), whose
// MappingStrings ("MIF.DMTF|ComponentID|001.4") point at the DMTF
// Component ID group that SMBIOS type 1 carries; SMBIOS type 0 (BIOS
// Information) has no serial field at all. Observed values agree (VMware
// "VMware-42 29 …", Dell service tags). The equivalence is inferred, not
// documented (fact sheet §6.1).
//
// Strings are ISO-8859-1 bytes and are returned as UTF-8 (a gRPC string
// must be valid UTF-8), with surrounding spaces removed, since whether WMI
// trims them is unconfirmed and every consumer (vSphere's driver) trims
// anyway. A string number of 0 means "no serial" and gives "". A table
// without a type 1 structure is errdefs.ErrNotFound. Every length is
// checked: a truncated or corrupt table is an error, never a panic.
func SerialNumberFromSMBIOS(raw []byte) (string, error) {
	if len(raw) < rawSMBIOSHeader {
		return "", fmt.Errorf("%w: %d bytes, the RawSMBIOSData header needs %d", errMalformedSMBIOS, len(raw), rawSMBIOSHeader)
	}
	n := binary.LittleEndian.Uint32(raw[4:])
	if uint64(n) > uint64(len(raw)-rawSMBIOSHeader) {
		return "", fmt.Errorf("%w: the table is %d bytes long but only %d were returned", errMalformedSMBIOS, n, len(raw)-rawSMBIOSHeader)
	}
	table := raw[rawSMBIOSHeader : rawSMBIOSHeader+int(n)]
	for off := 0; off+4 <= len(table); {
		typ, length := table[off], int(table[off+1])
		if length < 4 {
			return "", fmt.Errorf("%w: structure at offset %d (type %d) claims a formatted length of %d, below the 4-byte header", errMalformedSMBIOS, off, typ, length)
		}
		if off+length > len(table) {
			return "", fmt.Errorf("%w: structure at offset %d (type %d) runs past the end of the table", errMalformedSMBIOS, off, typ)
		}
		strs, next, err := smbiosStrings(table, off+length)
		if err != nil {
			return "", fmt.Errorf("structure at offset %d (type %d): %w", off, typ, err)
		}
		switch typ {
		case smbiosSystemInformation:
			if length <= smbiosSerialOffset {
				return "", fmt.Errorf("%w: the System Information structure is %d bytes long, too short for a serial number", errMalformedSMBIOS, length)
			}
			idx := int(table[off+smbiosSerialOffset])
			if idx == 0 {
				return "", nil
			}
			if idx > len(strs) {
				return "", fmt.Errorf("%w: the serial number is string %d, but the System Information structure has %d strings", errMalformedSMBIOS, idx, len(strs))
			}
			return strings.TrimSpace(latin1(strs[idx-1])), nil
		case smbiosEndOfTable:
			return "", errdefs.Errorf(errdefs.ErrNotFound, "the firmware's SMBIOS table has no System Information (type 1) structure")
		}
		off = next
	}
	return "", errdefs.Errorf(errdefs.ErrNotFound, "the firmware's SMBIOS table has no System Information (type 1) structure")
}

// smbiosStrings reads the string set that starts at b[i]: NUL-terminated
// strings ended by one more NUL, or two NULs for an empty set. It returns
// the strings and the offset of the next structure.
func smbiosStrings(b []byte, i int) ([][]byte, int, error) {
	if i+2 <= len(b) && b[i] == 0 && b[i+1] == 0 {
		return nil, i + 2, nil
	}
	var strs [][]byte
	for {
		if i >= len(b) {
			return nil, 0, fmt.Errorf("%w: the string set is not terminated", errMalformedSMBIOS)
		}
		j := bytes.IndexByte(b[i:], 0)
		if j < 0 {
			return nil, 0, fmt.Errorf("%w: the string set is not terminated", errMalformedSMBIOS)
		}
		if j == 0 {
			if len(strs) == 0 {
				return nil, 0, fmt.Errorf("%w: the string set starts with a single NUL", errMalformedSMBIOS)
			}
			return strs, i + 1, nil
		}
		strs = append(strs, b[i:i+j])
		i += j + 1
	}
}

// latin1 decodes ISO-8859-1 bytes: each byte is the code point.
func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}
