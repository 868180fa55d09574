package files

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
)

// symlinkFlagRelative is REPARSE_DATA_BUFFER.SymbolicLinkReparseBuffer.Flags
// bit 0: the substitute name is relative to the link's directory.
const symlinkFlagRelative = 1

// reparsePoint is a decoded REPARSE_DATA_BUFFER.
type reparsePoint struct {
	tag uint32
	// substitute is the NT path Windows follows (\??\C:\x,
	// \??\UNC\s\sh, \??\Volume{GUID}\) or, for a relative symlink, the
	// relative path.
	substitute string
	// print is the name tools display; it is often empty for mounted
	// folders.
	print    string
	relative bool
}

// isVolume tells whether the reparse point is a volume mounted folder
// rather than a junction to a directory: both carry
// IO_REPARSE_TAG_MOUNT_POINT, and only the substitute name tells them apart.
func (rp reparsePoint) isVolume() bool {
	return rp.tag == tagMountPoint && len(rp.substitute) >= 11 && strings.EqualFold(rp.substitute[:11], `\??\Volume{`)
}

// target returns where the reparse point leads, as a Win32 path; link is
// the path of the reparse point itself, needed for relative symlinks.
func (rp reparsePoint) target(link string) string {
	if rp.relative {
		return resolveRelative(parentDir(link), rp.substitute)
	}
	return ntToWin32(rp.substitute)
}

// errMalformedReparse is wrapped by every parse failure.
var errMalformedReparse = errors.New("malformed reparse data")

// parseReparsePoint decodes the buffer FSCTL_GET_REPARSE_POINT returns
// (winnt.h REPARSE_DATA_BUFFER): ReparseTag u32 @0, ReparseDataLength u16
// @4, Reserved u16 @6, then for symlinks SubstituteNameOffset,
// SubstituteNameLength, PrintNameOffset, PrintNameLength (u16 each) @8..@14,
// Flags u32 @16 and PathBuffer @20; for mount points the same four u16 and
// PathBuffer @16. Offsets and lengths are in bytes from PathBuffer. Other
// tags are returned with their tag only. Every length is checked against
// the buffer, so a short or corrupt buffer is an error, never a panic.
func parseReparsePoint(b []byte) (reparsePoint, error) {
	if len(b) < 8 {
		return reparsePoint{}, fmt.Errorf("%w: %d bytes, the header needs 8", errMalformedReparse, len(b))
	}
	rp := reparsePoint{tag: binary.LittleEndian.Uint32(b)}
	n := int(binary.LittleEndian.Uint16(b[4:]))
	if 8+n > len(b) {
		return reparsePoint{}, fmt.Errorf("%w: data length %d exceeds the %d bytes returned", errMalformedReparse, n, len(b)-8)
	}
	data := b[8 : 8+n]
	var names []byte
	switch rp.tag {
	case tagSymlink:
		if len(data) < 12 {
			return reparsePoint{}, fmt.Errorf("%w: symlink data is %d bytes, needs 12", errMalformedReparse, len(data))
		}
		rp.relative = binary.LittleEndian.Uint32(data[8:])&symlinkFlagRelative != 0
		names = data[12:]
	case tagMountPoint:
		if len(data) < 8 {
			return reparsePoint{}, fmt.Errorf("%w: mount point data is %d bytes, needs 8", errMalformedReparse, len(data))
		}
		names = data[8:]
	default:
		return rp, nil
	}
	var err error
	if rp.substitute, err = utf16At(names, binary.LittleEndian.Uint16(data[0:]), binary.LittleEndian.Uint16(data[2:])); err != nil {
		return reparsePoint{}, fmt.Errorf("substitute name: %w", err)
	}
	if rp.print, err = utf16At(names, binary.LittleEndian.Uint16(data[4:]), binary.LittleEndian.Uint16(data[6:])); err != nil {
		return reparsePoint{}, fmt.Errorf("print name: %w", err)
	}
	return rp, nil
}

// utf16At decodes the UTF-16LE string of length bytes at offset off of b.
func utf16At(b []byte, off, length uint16) (string, error) {
	start, end := int(off), int(off)+int(length)
	if off%2 != 0 || length%2 != 0 || end > len(b) {
		return "", fmt.Errorf("%w: name at %d+%d outside the %d-byte path buffer or odd", errMalformedReparse, off, length, len(b))
	}
	u := make([]uint16, 0, (end-start)/2)
	for i := start; i < end; i += 2 {
		u = append(u, binary.LittleEndian.Uint16(b[i:]))
	}
	return string(utf16.Decode(u)), nil
}
