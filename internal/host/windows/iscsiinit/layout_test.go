package iscsiinit

import (
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// Go mirrors of the structures only read as bytes, used to compute their
// layout with Go's alignment rules, which match the C ones for these
// types on 64-bit targets.
type portalInfoExW struct {
	InitiatorName       [maxHBANameLen]uint16
	InitiatorPortNumber uint32
	SymbolicName        [maxPortalNameLen]uint16
	Address             [maxPortalAddressLen]uint16
	Socket              uint16
	SecurityFlags       uint64
	LoginOptions        loginOptions
}

type sessionInfoW struct {
	SessionID       uniqueID
	InitiatorName   uintptr
	TargetNodeName  uintptr
	TargetName      uintptr
	ISID            [6]byte
	TSID            [2]byte
	ConnectionCount uint32
	Connections     uintptr
}

type scsiAddress struct {
	Length                              uint32
	PortNumber, PathID, TargetID, LunID uint8
}

type guid struct {
	Data1        uint32
	Data2, Data3 uint16
	Data4        [8]byte
}

type storageDeviceNumber struct{ DeviceType, DeviceNumber, PartitionNumber uint32 }

type deviceOnSessionW struct {
	InitiatorName       [maxHBANameLen]uint16
	TargetName          [maxISCSINameLen + 1]uint16
	ScsiAddress         scsiAddress
	DeviceInterfaceType guid
	DeviceInterfaceName [260]uint16
	LegacyName          [260]uint16
	StorageDeviceNumber storageDeviceNumber
	DeviceInstance      uint32
}

func TestLayouts(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the layouts are those of 64-bit Windows")
	}
	var lo loginOptions
	var pi portalInfoExW
	var si sessionInfoW
	var d deviceOnSessionW
	for name, c := range map[string]struct{ got, want uintptr }{
		"sizeof(ISCSI_TARGET_PORTALW)":          {unsafe.Sizeof(targetPortalW{}), 1026},
		"sizeof(ISCSI_LOGIN_OPTIONS)":           {unsafe.Sizeof(lo), 64},
		"ISCSI_LOGIN_OPTIONS.Username":          {unsafe.Offsetof(lo.Username), 48},
		"ISCSI_LOGIN_OPTIONS.Password":          {unsafe.Offsetof(lo.Password), 56},
		"sizeof(ISCSI_UNIQUE_SESSION_ID)":       {unsafe.Sizeof(uniqueID{}), 16},
		"sizeof(ISCSI_TARGET_PORTAL_INFO_EXW)":  {unsafe.Sizeof(pi), portalInfoSize},
		"PORTAL_INFO_EXW.InitiatorPortNumber":   {unsafe.Offsetof(pi.InitiatorPortNumber), portalInfoInitiatorPort},
		"PORTAL_INFO_EXW.Address":               {unsafe.Offsetof(pi.Address), portalInfoAddress},
		"PORTAL_INFO_EXW.Socket":                {unsafe.Offsetof(pi.Socket), portalInfoSocket},
		"PORTAL_INFO_EXW.SecurityFlags":         {unsafe.Offsetof(pi.SecurityFlags), 1544},
		"PORTAL_INFO_EXW.LoginOptions":          {unsafe.Offsetof(pi.LoginOptions), 1552},
		"sizeof(ISCSI_SESSION_INFOW)":           {unsafe.Sizeof(si), sessionInfoSize},
		"SESSION_INFOW.InitiatorName":           {unsafe.Offsetof(si.InitiatorName), sessionInitiatorName},
		"SESSION_INFOW.TargetNodeName":          {unsafe.Offsetof(si.TargetNodeName), sessionTargetNodeName},
		"SESSION_INFOW.TargetName":              {unsafe.Offsetof(si.TargetName), sessionTargetName},
		"SESSION_INFOW.ConnectionCount":         {unsafe.Offsetof(si.ConnectionCount), 48},
		"SESSION_INFOW.Connections":             {unsafe.Offsetof(si.Connections), 56},
		"sizeof(ISCSI_DEVICE_ON_SESSIONW)":      {unsafe.Sizeof(d), deviceOnSessionSize},
		"DEVICE_ON_SESSIONW.ScsiAddress":        {unsafe.Offsetof(d.ScsiAddress), 960},
		"DEVICE_ON_SESSIONW.DeviceInterfaceTyp": {unsafe.Offsetof(d.DeviceInterfaceType), 968},
		"DEVICE_ON_SESSIONW.StorageDeviceNum":   {unsafe.Offsetof(d.StorageDeviceNumber), deviceType},
		"DEVICE_ON_SESSIONW.DeviceInstance":     {unsafe.Offsetof(d.DeviceInstance), 2036},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", name, c.got, c.want)
		}
	}
}

func TestParsePortalInfos(t *testing.T) {
	f := newFakeInitiator()
	f.portals = []portalInfo{
		{Initiator: "", InitiatorPort: allInitiatorPorts, Address: "10.0.0.5", Port: 3260},
		{Initiator: `ROOT\ISCSIPRT\0000_0`, InitiatorPort: 1, Address: "storage.example.com", Port: 3261},
	}
	buf, n, _ := f.SendTargetPortals()
	got, err := parsePortalInfos(buf, n)
	if err != nil || !reflect.DeepEqual(got, f.portals) {
		t.Errorf("got %+v, %v", got, err)
	}
	for cut := 0; cut < len(buf); cut += 97 {
		if _, err := parsePortalInfos(buf[:cut], n); !errors.Is(err, errMalformed) {
			t.Errorf("cut to %d: %v", cut, err)
		}
	}
	// A name filling its whole array without a NUL stays inside it.
	full := make([]byte, portalInfoSize)
	for i := portalInfoAddress; i < portalInfoSocket; i += 2 {
		full[i] = 'a'
	}
	got, err = parsePortalInfos(full, 1)
	if err != nil || len(got[0].Address) != maxPortalAddressLen {
		t.Errorf("unterminated address: %d chars, %v", len(got[0].Address), err)
	}
}

func TestParseSessions(t *testing.T) {
	f := newFakeInitiator()
	f.sessions = []*fakeSession{
		{id: uniqueID{1, 2}, iqn: "iqn.2026-01.example.com:a", active: true},
		{id: uniqueID{3, 4}, iqn: "iqn.2026-01.example.com:b", active: true},
	}
	buf, base, n, _ := f.Sessions()
	got, err := parseSessions(buf, base, n)
	if err != nil || len(got) != 2 || got[1].ID != (uniqueID{3, 4}) || got[1].TargetNodeName != "iqn.2026-01.example.com:b" || got[0].InitiatorName != `ROOT\ISCSIPRT\0000_0` {
		t.Fatalf("got %+v, %v", got, err)
	}
	// Every truncation is an error (the array or a string goes missing),
	// never a panic.
	for cut := 0; cut < len(buf); cut++ {
		if _, err := parseSessions(buf[:cut], base, n); !errors.Is(err, errMalformed) {
			t.Fatalf("cut to %d of %d: %v", cut, len(buf), err)
		}
	}
	// Pointers outside the buffer, or odd, are refused, never followed.
	for _, p := range []uint64{uint64(base) - 2, uint64(base) + uint64(len(buf)), uint64(base) + 1, 0x10} {
		b := append([]byte(nil), buf...)
		binary.LittleEndian.PutUint64(b[sessionTargetName:], p)
		if _, err := parseSessions(b, base, n); !errors.Is(err, errMalformed) {
			t.Errorf("pointer %#x: %v", p, err)
		}
	}
	// NULL names are empty.
	b := append([]byte(nil), buf...)
	binary.LittleEndian.PutUint64(b[sessionTargetName:], 0)
	if got, err := parseSessions(b, base, n); err != nil || got[0].TargetName != "" {
		t.Errorf("NULL name: %+v, %v", got, err)
	}
	if got, err := parseSessions(nil, 0, 0); err != nil || len(got) != 0 {
		t.Errorf("no sessions: %v, %v", got, err)
	}
}

func TestParseDevices(t *testing.T) {
	f := newFakeInitiator()
	f.sessions = []*fakeSession{{id: uniqueID{1, 2}, disks: []uint32{4, 7}, active: true}}
	buf, n, _ := f.Devices(uniqueID{1, 2})
	got, err := parseDevices(buf, n)
	want := []device{{fileDeviceDisk, 4}, {fileDeviceDisk, 7}, {0x0D, 99}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, %v", got, err)
	}
	if _, err := parseDevices(buf[:len(buf)-1], n); !errors.Is(err, errMalformed) {
		t.Errorf("short buffer: %v", err)
	}
	if _, err := parseDevices(buf, 1<<31); !errors.Is(err, errMalformed) {
		t.Errorf("huge count: %v", err)
	}
}

func TestMultiSZ(t *testing.T) {
	for name, c := range map[string]struct {
		in   []uint16
		want []string
	}{
		"two":            {multiSZBuf("a", "bc"), []string{"a", "bc"}},
		"empty":          {multiSZBuf(), nil},
		"nil":            {nil, nil},
		"no final NUL":   {[]uint16{'a', 0, 'b'}, []string{"a", "b"}},
		"trailing slack": {append(multiSZBuf("x"), 'z', 0), []string{"x"}},
	} {
		if got := multiSZ(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
}

func TestParseDiscoveryMechanism(t *testing.T) {
	for in, want := range map[string]struct {
		addr string
		port uint16
		ok   bool
	}{
		`SendTargets:*10.61.169.28 0003260 Root\ISCSIPRT\0000_0 `:  {"10.61.169.28", 3260, true},
		`sendtargets:*storage.example.com 0003261 ROOT\ISCSIPRT\0`: {"storage.example.com", 3261, true},
		`SendTargets:fe80::1 3260 x`:                               {"fe80::1", 3260, true},
		`SendTargets:*[fe80::1] 0003260 x`:                         {"fe80::1", 3260, true},
		`iSNS:*10.0.0.1 0003205 x`:                                 {"", 0, false},
		`SendTargets:*10.0.0.1`:                                    {"", 0, false},
		`SendTargets:*10.0.0.1 port x`:                             {"", 0, false},
		`Static`:                                                   {"", 0, false},
	} {
		a, p, ok := parseDiscoveryMechanism(in)
		if a != want.addr || p != want.port || ok != want.ok {
			t.Errorf("%q = %q, %d, %v; want %+v", in, a, p, ok, want)
		}
	}
}

func TestNewTargetPortal(t *testing.T) {
	tp, err := newTargetPortal(portalSpec{Address: "10.0.0.5", Port: 3260})
	if err != nil || tp.Socket != 3260 || tp.Address[0] != '1' || tp.Address[8] != 0 {
		t.Errorf("%v %v", tp.Address[:9], err)
	}
	if _, err := newTargetPortal(portalSpec{Address: strings.Repeat("a", 256)}); err == nil {
		t.Error("256-character address accepted")
	}
	if _, err := newTargetPortal(portalSpec{Address: strings.Repeat("a", 255)}); err != nil {
		t.Errorf("255-character address: %v", err)
	}
}
