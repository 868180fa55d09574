package iscsiinit

import (
	"encoding/binary"
	"fmt"
	"strings"
	"syscall"
	"unicode/utf16"
)

// fakeTarget is a target some portal offers.
type fakeTarget struct {
	iqn    string
	portal portalSpec
	user   string
	secret string // "" = no CHAP
	mutual bool   // needs the initiator secret
	luns   int
}

type fakeSession struct {
	id     uniqueID
	iqn    string
	disks  []uint32
	active bool
}

// fakeInitiator is a recording iscsidsc.dll that returns its lists in the
// buffer formats the real API uses, so every call goes through the
// parsers.
type fakeInitiator struct {
	portals    []portalInfo
	targets    []fakeTarget
	discovered map[string]bool // iqn -> reported by a refresh
	sessions   []*fakeSession
	initSecret string
	persistent map[string]bool
	nextDisk   uint32
	calls      []string
	// errs injects a status for a call named like the records ("Login").
	errs map[string]error
	// busy makes Devices report ISDSC_SESSION_BUSY this many times.
	busy int
	// mechanismFormat overrides the DiscoveryMechanisms text.
	mechanismFormat string
}

func newFakeInitiator() *fakeInitiator {
	return &fakeInitiator{discovered: map[string]bool{}, persistent: map[string]bool{}, nextDisk: 1, errs: map[string]error{}}
}

func (f *fakeInitiator) rec(format string, args ...any) error {
	c := fmt.Sprintf(format, args...)
	f.calls = append(f.calls, c)
	return f.errs[strings.Fields(c)[0]]
}

func status(code uint32) error { return syscall.Errno(code) }

func (f *fakeInitiator) AddSendTargetPortal(p portalSpec) error {
	if err := f.rec("AddSendTargetPortal %s:%d", p.Address, p.Port); err != nil {
		return err
	}
	for _, pi := range f.portals {
		if strings.EqualFold(pi.Address, p.Address) && pi.Port == p.Port {
			return status(isdscTargetPortalExists)
		}
	}
	f.portals = append(f.portals, portalInfo{Initiator: "", InitiatorPort: allInitiatorPorts, Address: p.Address, Port: p.Port})
	f.discover(p)
	return nil
}

func (f *fakeInitiator) discover(p portalSpec) {
	for _, t := range f.targets {
		if strings.EqualFold(t.portal.Address, p.Address) && t.portal.Port == p.Port {
			f.discovered[t.iqn] = true
		}
	}
}

func (f *fakeInitiator) RemoveSendTargetPortal(initiator string, port uint32, p portalSpec) error {
	if err := f.rec("RemoveSendTargetPortal %q %#x %s:%d", initiator, port, p.Address, p.Port); err != nil {
		return err
	}
	for i, pi := range f.portals {
		if strings.EqualFold(pi.Address, p.Address) && pi.Port == p.Port && pi.Initiator == initiator && pi.InitiatorPort == port {
			f.portals = append(f.portals[:i], f.portals[i+1:]...)
			return nil
		}
	}
	return status(isdscPortalNotFound)
}

func (f *fakeInitiator) SendTargetPortals() ([]byte, uint32, error) {
	if err := f.rec("SendTargetPortals"); err != nil {
		return nil, 0, err
	}
	buf := make([]byte, len(f.portals)*portalInfoSize)
	for i, pi := range f.portals {
		e := buf[i*portalInfoSize:]
		putWchars(e[portalInfoInitiatorName:], pi.Initiator)
		binary.LittleEndian.PutUint32(e[portalInfoInitiatorPort:], pi.InitiatorPort)
		putWchars(e[516:], "symbolic-"+pi.Address)
		putWchars(e[portalInfoAddress:], pi.Address)
		binary.LittleEndian.PutUint16(e[portalInfoSocket:], pi.Port)
		binary.LittleEndian.PutUint64(e[1544:], 0x1)
	}
	return buf, uint32(len(f.portals)), nil
}

func (f *fakeInitiator) RefreshSendTargetPortal(p portalSpec) error {
	if err := f.rec("RefreshSendTargetPortal %s:%d", p.Address, p.Port); err != nil {
		return err
	}
	f.discover(p)
	return nil
}

func (f *fakeInitiator) Targets() ([]uint16, error) {
	if err := f.rec("Targets"); err != nil {
		return nil, err
	}
	var names []string
	for _, t := range f.targets {
		if f.discovered[t.iqn] {
			names = append(names, t.iqn)
		}
	}
	return multiSZBuf(names...), nil
}

func (f *fakeInitiator) DiscoveryMechanisms(iqn string) ([]uint16, error) {
	if err := f.rec("DiscoveryMechanisms %s", iqn); err != nil {
		return nil, err
	}
	for _, t := range f.targets {
		if t.iqn == iqn {
			format := "SendTargets:*%s %07d Root\\ISCSIPRT\\0000_0 "
			if f.mechanismFormat != "" {
				format = f.mechanismFormat
			}
			return multiSZBuf(fmt.Sprintf(format, t.portal.Address, t.portal.Port)), nil
		}
	}
	return nil, status(isdscTargetNotFound)
}

func (f *fakeInitiator) Login(iqn string, p portalSpec, auth loginAuth) error {
	// The record leaves the secret out, as any log would.
	if err := f.rec("Login %s %s:%d auth=%d user=%q", iqn, p.Address, p.Port, auth.Type, auth.User); err != nil {
		return err
	}
	var t *fakeTarget
	for i := range f.targets {
		if f.targets[i].iqn == iqn && f.discovered[iqn] {
			t = &f.targets[i]
		}
	}
	if t == nil {
		return status(isdscTargetNotFound)
	}
	for _, s := range f.sessions {
		if s.active && s.iqn == iqn {
			return status(isdscTargetAlreadyLoggedIn)
		}
	}
	switch {
	case t.secret == "" && auth.Type != authNone,
		t.secret != "" && (auth.User != t.user || auth.Secret != t.secret),
		t.mutual && (auth.Type != authMutualCHAP || f.initSecret == ""):
		return status(isdscAuthenticationFailure)
	}
	s := &fakeSession{id: uniqueID{0xffffac0cacbff010, uint64(len(f.sessions) + 0x4000013700000016)}, iqn: iqn, active: true}
	for range t.luns {
		s.disks = append(s.disks, f.nextDisk)
		f.nextDisk++
	}
	f.sessions = append(f.sessions, s)
	return nil
}

// sessionBase is where the fake pretends the session buffer lives.
const sessionBase = uintptr(0x7ff6_1000_0000)

func (f *fakeInitiator) Sessions() ([]byte, uintptr, uint32, error) {
	if err := f.rec("Sessions"); err != nil {
		return nil, 0, 0, err
	}
	var active []*fakeSession
	for _, s := range f.sessions {
		if s.active {
			active = append(active, s)
		}
	}
	// The array first, then the strings, as the API lays them out.
	buf := make([]byte, len(active)*sessionInfoSize)
	for i, s := range active {
		e := buf[i*sessionInfoSize:]
		binary.LittleEndian.PutUint64(e[0:], s.id.AdapterUnique)
		binary.LittleEndian.PutUint64(e[8:], s.id.AdapterSpecific)
		for _, fld := range []struct {
			off int
			val string
		}{{sessionInitiatorName, `ROOT\ISCSIPRT\0000_0`}, {sessionTargetNodeName, s.iqn}, {sessionTargetName, s.iqn}} {
			binary.LittleEndian.PutUint64(buf[i*sessionInfoSize+fld.off:], uint64(sessionBase)+uint64(len(buf)))
			buf = append(buf, wstr(fld.val)...)
		}
	}
	return buf, sessionBase, uint32(len(active)), nil
}

func (f *fakeInitiator) Logout(id uniqueID) error {
	if err := f.rec("Logout %x-%x", id.AdapterUnique, id.AdapterSpecific); err != nil {
		return err
	}
	for _, s := range f.sessions {
		if s.active && s.id == id {
			s.active = false
			return nil
		}
	}
	return status(isdscInvalidSessionID)
}

func (f *fakeInitiator) RemovePersistentTarget(iqn string) error {
	if err := f.rec("RemovePersistentTarget %s", iqn); err != nil {
		return err
	}
	if !f.persistent[iqn] {
		return status(0xEFFF0042) // some failure: the code for "none" is undocumented
	}
	delete(f.persistent, iqn)
	return nil
}

func (f *fakeInitiator) Devices(id uniqueID) ([]byte, uint32, error) {
	if err := f.rec("Devices %x-%x", id.AdapterUnique, id.AdapterSpecific); err != nil {
		return nil, 0, err
	}
	if f.busy > 0 {
		f.busy--
		return nil, 0, status(isdscSessionBusy)
	}
	for _, s := range f.sessions {
		if s.active && s.id == id {
			// Each disk, plus a non-disk device (an enclosure) to skip.
			buf := make([]byte, (len(s.disks)+1)*deviceOnSessionSize)
			for i, d := range s.disks {
				e := buf[i*deviceOnSessionSize:]
				putWchars(e, `iqn.1991-05.com.microsoft:node`)
				binary.LittleEndian.PutUint32(e[deviceType:], fileDeviceDisk)
				binary.LittleEndian.PutUint32(e[deviceNumber:], d)
			}
			e := buf[len(s.disks)*deviceOnSessionSize:]
			binary.LittleEndian.PutUint32(e[deviceType:], 0x0D) // FILE_DEVICE_MASS_STORAGE
			binary.LittleEndian.PutUint32(e[deviceNumber:], 99)
			return buf, uint32(len(s.disks) + 1), nil
		}
	}
	return nil, 0, status(isdscInvalidSessionID)
}

func (f *fakeInitiator) SetInitiatorCHAPSecret(secret []byte) error {
	if err := f.rec("SetInitiatorCHAPSecret len=%d", len(secret)); err != nil {
		return err
	}
	f.initSecret = string(secret)
	return nil
}

var _ initiatorAPI = (*fakeInitiator)(nil)

func wstr(s string) []byte {
	u := append(utf16.Encode([]rune(s)), 0)
	b := make([]byte, 2*len(u))
	for i, c := range u {
		binary.LittleEndian.PutUint16(b[2*i:], c)
	}
	return b
}

func putWchars(dst []byte, s string) { copy(dst, wstr(s)) }

func multiSZBuf(ss ...string) []uint16 {
	var u []uint16
	for _, s := range ss {
		u = append(append(u, utf16.Encode([]rune(s))...), 0)
	}
	return append(u, 0)
}
