package blocktopo

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
)

// SCSI VPD pages as the kernel exposes them in sysfs (vpd_pg80, vpd_pg83):
// the raw page, header included (SPC-5 §7.7.3 and §7.7.16).

// Code sets and associations of VPD page 0x83 designators.
const (
	codeSetBinary = 1
	codeSetASCII  = 2

	assocLU = 0 // the designator names the logical unit (the disk)
)

// designator is one identification descriptor of VPD page 0x83.
type designator struct {
	protocol byte
	codeSet  byte
	piv      bool
	assoc    byte
	kind     byte // designator type: 1 T10 vendor ID, 2 EUI-64, 3 NAA, 8 SCSI name, ...
	value    []byte
}

// parseVPD83 decodes a device identification page.
func parseVPD83(b []byte) ([]designator, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("VPD page 0x83 is %d bytes, shorter than its header", len(b))
	}
	if b[1] != 0x83 {
		return nil, fmt.Errorf("VPD page code is %#02x, want 0x83", b[1])
	}
	n := int(binary.BigEndian.Uint16(b[2:4]))
	if 4+n > len(b) {
		return nil, fmt.Errorf("VPD page 0x83 says it has %d bytes of designators, only %d present", n, len(b)-4)
	}
	body := b[4 : 4+n]
	var out []designator
	for len(body) > 0 {
		if len(body) < 4 {
			return nil, fmt.Errorf("VPD page 0x83: truncated designator header (%d bytes left)", len(body))
		}
		l := int(body[3])
		if 4+l > len(body) {
			return nil, fmt.Errorf("VPD page 0x83: designator of %d bytes overruns the page", l)
		}
		out = append(out, designator{
			protocol: body[0] >> 4,
			codeSet:  body[0] & 0x0f,
			piv:      body[1]&0x80 != 0,
			assoc:    (body[1] >> 4) & 0x3,
			kind:     body[1] & 0x0f,
			value:    append([]byte(nil), body[4:4+l]...),
		})
		body = body[4+l:]
	}
	return out, nil
}

// page83ID picks the disk's page 0x83 ID the way upstream csi-proxy does on
// Windows (GetDiskPage83ID over IOCTL_STORAGE_QUERY_PROPERTY): the first
// designator associated with the logical unit whose code set is binary or
// ASCII, in page order; a binary value is hex-encoded in lower case (so an
// NAA 6 designator becomes 32 hex digits starting with "6"), an ASCII one
// (T10 vendor ID, vendor specific) is returned as it is. Drivers compare
// this string with what the cloud reports, so the rule must not change.
func page83ID(ds []designator) string {
	for _, d := range ds {
		if d.assoc != assocLU {
			continue
		}
		switch d.codeSet {
		case codeSetBinary:
			return hex.EncodeToString(d.value)
		case codeSetASCII:
			// Trailing NULs are padding some targets add; they are
			// invisible and would make a string comparison fail.
			return strings.TrimRight(string(d.value), "\x00")
		}
	}
	return ""
}

// parseVPD80 decodes a unit serial number page. The serial is ASCII, often
// padded with spaces on either side, which are trimmed as Windows does for
// MSFT_Disk.SerialNumber.
func parseVPD80(b []byte) (string, error) {
	if len(b) < 4 {
		return "", fmt.Errorf("VPD page 0x80 is %d bytes, shorter than its header", len(b))
	}
	if b[1] != 0x80 {
		return "", fmt.Errorf("VPD page code is %#02x, want 0x80", b[1])
	}
	n := int(binary.BigEndian.Uint16(b[2:4]))
	if 4+n > len(b) {
		return "", fmt.Errorf("VPD page 0x80 says it has %d bytes of serial number, only %d present", n, len(b)-4)
	}
	return strings.Trim(string(b[4:4+n]), " \x00"), nil
}

// wwidToPage83 turns the kernel's textual wwid (/sys/block/X/wwid or
// device/wwid, e.g. "naa.600a0b80001111550000000000000000") into the
// page83 form, for devices whose raw page is not readable: the hex of
// NAA and EUI-64 names is what page83ID would return for the binary
// designator; a T10 name is the ASCII designator. Other forms (NVMe
// "nvme.…", "uuid.…") are returned unchanged.
func wwidToPage83(w string) string {
	w = strings.TrimSpace(w)
	for _, p := range []string{"naa.", "eui.", "t10."} {
		if strings.HasPrefix(w, p) {
			return strings.TrimPrefix(w, p)
		}
	}
	return w
}
