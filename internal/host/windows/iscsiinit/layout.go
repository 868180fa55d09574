package iscsiinit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Constants of iscsidsc.h.
const (
	// allInitiatorPorts is ISCSI_ALL_INITIATOR_PORTS (and
	// ISCSI_ANY_INITIATOR_PORT): let the initiator choose.
	allInitiatorPorts = 0xFFFFFFFF

	maxPortalNameLen    = 256 // MAX_ISCSI_PORTAL_NAME_LEN
	maxPortalAddressLen = 256 // MAX_ISCSI_PORTAL_ADDRESS_LEN
	maxHBANameLen       = 256 // MAX_ISCSI_HBANAME_LEN
	maxISCSINameLen     = 223 // MAX_ISCSI_NAME_LEN

	// ISCSI_AUTH_TYPES.
	authNone       = 0
	authCHAP       = 1
	authMutualCHAP = 2

	// fileDeviceDisk is FILE_DEVICE_DISK, STORAGE_DEVICE_NUMBER.DeviceType
	// of a disk.
	fileDeviceDisk = 7
)

// Sizes and offsets of the structures iscsidsc.dll returns, for 64-bit
// Windows (amd64 and arm64 share them). They are computed from the field
// order in iscsidsc.h with natural alignment, cross-checked with the
// Windows SDK metadata (windows-rs) and wk8/go-win-iscsidsc; the two
// largest sizes (1616 and 2040) are not yet confirmed by a measurement in
// a Windows SDK build. layout_test.go checks the Go mirrors below against
// them.
const (
	// ISCSI_TARGET_PORTAL_INFO_EXW: InitiatorName[256] WCHAR @0,
	// InitiatorPortNumber u32 @512, SymbolicName[256] @516,
	// Address[256] @1028, Socket u16 @1540, SecurityFlags u64 @1544,
	// LoginOptions (ISCSI_LOGIN_OPTIONS) @1552.
	portalInfoSize          = 1616
	portalInfoInitiatorName = 0
	portalInfoInitiatorPort = 512
	portalInfoAddress       = 1028
	portalInfoSocket        = 1540

	// ISCSI_SESSION_INFOW: SessionId @0 (16 bytes), InitiatorName ptr
	// @16, TargetNodeName ptr @24, TargetName ptr @32, ISID[6] @40,
	// TSID[2] @46, ConnectionCount u32 @48, Connections ptr @56. Learn's
	// order of the three names is followed (os-win swaps the last two;
	// matching accepts either name anyway).
	sessionInfoSize       = 64
	sessionInitiatorName  = 16
	sessionTargetNodeName = 24
	sessionTargetName     = 32

	// ISCSI_DEVICE_ON_SESSIONW: InitiatorName[256] WCHAR @0,
	// TargetName[224] @512, ScsiAddress @960, DeviceInterfaceType GUID
	// @968, DeviceInterfaceName[260] @984, LegacyName[260] @1504,
	// StorageDeviceNumber {DeviceType, DeviceNumber, PartitionNumber}
	// @2024, DeviceInstance u32 @2036.
	deviceOnSessionSize = 2040
	deviceType          = 2024
	deviceNumber        = 2028
)

// targetPortalW mirrors ISCSI_TARGET_PORTALW (1026 bytes, WCHAR-aligned).
type targetPortalW struct {
	SymbolicName [maxPortalNameLen]uint16
	Address      [maxPortalAddressLen]uint16
	Socket       uint16
}

// loginOptions mirrors ISCSI_LOGIN_OPTIONS (64 bytes on 64-bit Windows).
// Username and Password point at byte strings of the stated lengths
// (CHAP name and secret; the API wants them as bytes, not WCHARs).
type loginOptions struct {
	Version              uint32
	InformationSpecified uint32
	LoginFlags           uint32
	AuthType             uint32
	HeaderDigest         uint32
	DataDigest           uint32
	MaximumConnections   uint32
	DefaultTime2Wait     uint32
	DefaultTime2Retain   uint32
	UsernameLength       uint32
	PasswordLength       uint32
	Username             *byte
	Password             *byte
}

// uniqueID mirrors ISCSI_UNIQUE_SESSION_ID / ISCSI_UNIQUE_CONNECTION_ID.
type uniqueID struct {
	AdapterUnique   uint64
	AdapterSpecific uint64
}

// portalSpec is a portal as the API takes it.
type portalSpec struct {
	Address string
	Port    uint16
}

// errMalformed is wrapped by every parse failure of an API buffer.
var errMalformed = errors.New("malformed iscsidsc.dll buffer")

// newTargetPortal fills an ISCSI_TARGET_PORTALW. The address must fit
// with its terminating NUL.
func newTargetPortal(p portalSpec) (targetPortalW, error) {
	var tp targetPortalW
	u := utf16.Encode([]rune(p.Address))
	if len(u) >= len(tp.Address) {
		return tp, fmt.Errorf("portal address %q is longer than %d characters", p.Address, len(tp.Address)-1)
	}
	for _, c := range u {
		if c == 0 {
			return tp, fmt.Errorf("portal address %q contains NUL", p.Address)
		}
	}
	copy(tp.Address[:], u)
	tp.Socket = p.Port
	return tp, nil
}

// portalInfo is one entry of ReportIScsiSendTargetPortalsExW.
type portalInfo struct {
	Initiator     string
	InitiatorPort uint32
	Address       string
	Port          uint16
}

// parsePortalInfos decodes count ISCSI_TARGET_PORTAL_INFO_EXW entries.
func parsePortalInfos(b []byte, count uint32) ([]portalInfo, error) {
	if uint64(count)*portalInfoSize > uint64(len(b)) {
		return nil, fmt.Errorf("%w: %d portals need %d bytes, got %d", errMalformed, count, uint64(count)*portalInfoSize, len(b))
	}
	out := make([]portalInfo, 0, count)
	for i := 0; i < int(count); i++ {
		e := b[i*portalInfoSize : (i+1)*portalInfoSize]
		out = append(out, portalInfo{
			Initiator:     wcharArray(e[portalInfoInitiatorName : portalInfoInitiatorName+2*maxHBANameLen]),
			InitiatorPort: binary.LittleEndian.Uint32(e[portalInfoInitiatorPort:]),
			Address:       wcharArray(e[portalInfoAddress : portalInfoAddress+2*maxPortalAddressLen]),
			Port:          binary.LittleEndian.Uint16(e[portalInfoSocket:]),
		})
	}
	return out, nil
}

// session is one entry of GetIScsiSessionListW.
type session struct {
	ID             uniqueID
	InitiatorName  string
	TargetNodeName string
	TargetName     string
}

// parseSessions decodes count ISCSI_SESSION_INFOW entries. The strings
// they point to live in the same buffer, after the array; base is the
// address buf had when the API filled it, so a pointer p is the byte at
// p-base. A pointer outside the buffer is an error: it is never followed.
func parseSessions(b []byte, base uintptr, count uint32) ([]session, error) {
	if uint64(count)*sessionInfoSize > uint64(len(b)) {
		return nil, fmt.Errorf("%w: %d sessions need %d bytes, got %d", errMalformed, count, uint64(count)*sessionInfoSize, len(b))
	}
	out := make([]session, 0, count)
	for i := 0; i < int(count); i++ {
		e := b[i*sessionInfoSize : (i+1)*sessionInfoSize]
		s := session{ID: uniqueID{binary.LittleEndian.Uint64(e[0:]), binary.LittleEndian.Uint64(e[8:])}}
		var err error
		for _, f := range []struct {
			off int
			dst *string
		}{{sessionInitiatorName, &s.InitiatorName}, {sessionTargetNodeName, &s.TargetNodeName}, {sessionTargetName, &s.TargetName}} {
			if *f.dst, err = wstringAt(b, base, uintptr(binary.LittleEndian.Uint64(e[f.off:]))); err != nil {
				return nil, fmt.Errorf("session %d: %w", i, err)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// device is one entry of GetDevicesForIScsiSessionW.
type device struct {
	Type   uint32
	Number uint32
}

// parseDevices decodes count ISCSI_DEVICE_ON_SESSIONW entries.
func parseDevices(b []byte, count uint32) ([]device, error) {
	if uint64(count)*deviceOnSessionSize > uint64(len(b)) {
		return nil, fmt.Errorf("%w: %d devices need %d bytes, got %d", errMalformed, count, uint64(count)*deviceOnSessionSize, len(b))
	}
	out := make([]device, 0, count)
	for i := 0; i < int(count); i++ {
		e := b[i*deviceOnSessionSize : (i+1)*deviceOnSessionSize]
		out = append(out, device{Type: binary.LittleEndian.Uint32(e[deviceType:]), Number: binary.LittleEndian.Uint32(e[deviceNumber:])})
	}
	return out, nil
}

// wcharArray decodes a fixed WCHAR array up to its first NUL.
func wcharArray(b []byte) string {
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		c := binary.LittleEndian.Uint16(b[i:])
		if c == 0 {
			break
		}
		u = append(u, c)
	}
	return string(utf16.Decode(u))
}

// wstringAt decodes the NUL-terminated UTF-16 string at address p of a
// buffer that started at base. A NULL pointer is "".
func wstringAt(b []byte, base, p uintptr) (string, error) {
	if p == 0 {
		return "", nil
	}
	if p < base || p-base >= uintptr(len(b)) || (p-base)%2 != 0 {
		return "", fmt.Errorf("%w: string pointer %#x outside the %d-byte buffer at %#x", errMalformed, p, len(b), base)
	}
	off := int(p - base)
	u := []uint16{}
	for i := off; ; i += 2 {
		if i+1 >= len(b) {
			return "", fmt.Errorf("%w: string at offset %d is not terminated", errMalformed, off)
		}
		c := binary.LittleEndian.Uint16(b[i:])
		if c == 0 {
			return string(utf16.Decode(u)), nil
		}
		u = append(u, c)
	}
}

// multiSZ splits a MULTI_SZ (strings separated by NUL, ended by an empty
// string) into its strings. A missing final terminator is tolerated: the
// strings up to the end of the buffer are returned.
func multiSZ(u []uint16) []string {
	var out []string
	start := 0
	for i, c := range u {
		if c != 0 {
			continue
		}
		if i == start {
			return out
		}
		out = append(out, string(utf16.Decode(u[start:i])))
		start = i + 1
	}
	if start < len(u) {
		out = append(out, string(utf16.Decode(u[start:])))
	}
	return out
}

// parseDiscoveryMechanism reads one string of a target's
// DiscoveryMechanisms, which names the SendTargets portal that reported
// the target, as in "SendTargets:*10.61.169.28 0003260 Root\ISCSIPRT\0000_0 ".
// The format is not documented; it is taken from observed output (the
// same string appears as MSiSCSIInitiator_TargetClass.DiscoveryMechanism
// and in NetApp's Get-NaHostIscsiTarget examples). ok is false for other
// mechanisms (iSNS, static) and for text that does not parse.
func parseDiscoveryMechanism(s string) (addr string, port uint16, ok bool) {
	const prefix = "SendTargets:"
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return "", 0, false
	}
	f := strings.Fields(strings.TrimPrefix(s[len(prefix):], "*"))
	if len(f) < 2 {
		return "", 0, false
	}
	n, err := strconv.ParseUint(f[1], 10, 16)
	if err != nil {
		return "", 0, false
	}
	return strings.Trim(f[0], "[]"), uint16(n), true
}

// isSendTargets tells whether a DiscoveryMechanisms string claims to be a
// SendTargets one, parseable or not.
func isSendTargets(s string) bool {
	return len(s) >= 12 && strings.EqualFold(s[:12], "SendTargets:")
}
