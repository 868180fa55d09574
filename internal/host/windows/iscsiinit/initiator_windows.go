//go:build windows

package iscsiinit

import (
	"errors"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// Constants only the Windows calls use (iscsidsc.h).
const (
	loginOptionsVersion = 0 // ISCSI_LOGIN_OPTIONS_VERSION

	// ISCSI_LOGIN_OPTIONS.InformationSpecified bits.
	infoUsername = 0x20
	infoPassword = 0x40
	infoAuthType = 0x80

	// TARGET_INFORMATION_CLASS.DiscoveryMechanisms: the enum's third
	// member (ProtocolType 0, TargetAlias 1, DiscoveryMechanisms 2); the
	// numbering is confirmed by the Windows SDK metadata (windows-rs
	// Win32_Storage_IscsiDisc) rather than by Learn.
	infoDiscoveryMechanisms = 2
)

// winInitiator implements initiatorAPI with iscsidsc.dll.
type winInitiator struct{}

var _ initiatorAPI = winInitiator{}

// procs are checked once before the first call: the generated wrappers
// call LazyProc.Addr, which panics when the DLL or an export is missing
// (a Windows edition without the iSCSI initiator); this turns that into
// an error.
var (
	loadOnce sync.Once
	loadErr  error
)

func loaded() error {
	loadOnce.Do(func() {
		for _, p := range []*windows.LazyProc{
			procAddIScsiSendTargetPortalW, procGetDevicesForIScsiSessionW, procGetIScsiSessionListW,
			procGetIScsiTargetInformationW, procLoginIScsiTargetW, procLogoutIScsiTarget,
			procRefreshIScsiSendTargetPortalW, procRemoveIScsiPersistentTargetW, procRemoveIScsiSendTargetPortalW,
			procReportIScsiSendTargetPortalsExW, procReportIScsiTargetsW, procSetIScsiInitiatorCHAPSharedSecret,
		} {
			if err := p.Find(); err != nil {
				loadErr = errdefs.Errorf(errdefs.ErrUnimplemented, "the iSCSI initiator API is not available on this host: %v", err)
				return
			}
		}
		if unsafe.Sizeof(uintptr(0)) != 8 {
			loadErr = errdefs.Errorf(errdefs.ErrUnimplemented, "the iSCSI backend supports 64-bit Windows only (its buffer layouts are the 64-bit ones)")
		}
	})
	return loadErr
}

// maxTries bounds the size-query loops: a list that keeps growing between
// the size query and the fill is asked for again, a few times.
const maxTries = 5

var errBufferGrew = windows.ERROR_INSUFFICIENT_BUFFER

// sizedCall runs a size-query call until its buffer is large enough: call
// fills buf (nil the first time) or fails with ERROR_INSUFFICIENT_BUFFER,
// having stored the size it needs where grow reads it to make the next
// buffer. Any other error ends the loop, as does a list that keeps
// growing for maxTries calls (errBufferGrew).
func sizedCall[T any](call func(buf []T) error, grow func() []T) ([]T, error) {
	var buf []T
	for range maxTries {
		err := call(buf)
		switch {
		case err == nil:
			return buf, nil
		case !errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER):
			return nil, err
		}
		buf = grow()
	}
	return nil, errBufferGrew
}

// alignedBytes returns n zeroed bytes aligned for any of the structures
// the API writes (their largest member is 8 bytes).
func alignedBytes(n uint32) []byte {
	if n == 0 {
		return nil
	}
	w := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n)
}

func first[T any](b []T) *T {
	if len(b) == 0 {
		return nil
	}
	return &b[0]
}

func portalPtr(p portalSpec) (*targetPortalW, error) {
	tp, err := newTargetPortal(p)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "%v", err)
	}
	return &tp, nil
}

// optionalString is NULL for "", else the UTF-16 string.
func optionalString(s string) (*uint16, error) {
	if s == "" {
		return nil, nil
	}
	return windows.UTF16PtrFromString(s)
}

// AddSendTargetPortal implements initiatorAPI.
func (winInitiator) AddSendTargetPortal(p portalSpec) error {
	if err := loaded(); err != nil {
		return err
	}
	tp, err := portalPtr(p)
	if err != nil {
		return err
	}
	return addIScsiSendTargetPortal(nil, allInitiatorPorts, nil, 0, tp)
}

// RemoveSendTargetPortal implements initiatorAPI.
func (winInitiator) RemoveSendTargetPortal(initiator string, initiatorPort uint32, p portalSpec) error {
	if err := loaded(); err != nil {
		return err
	}
	tp, err := portalPtr(p)
	if err != nil {
		return err
	}
	inst, err := optionalString(initiator)
	if err != nil {
		return err
	}
	return removeIScsiSendTargetPortal(inst, initiatorPort, tp)
}

// RefreshSendTargetPortal implements initiatorAPI.
func (winInitiator) RefreshSendTargetPortal(p portalSpec) error {
	if err := loaded(); err != nil {
		return err
	}
	tp, err := portalPtr(p)
	if err != nil {
		return err
	}
	return refreshIScsiSendTargetPortal(nil, allInitiatorPorts, tp)
}

// SendTargetPortals implements initiatorAPI. PortalInfoSize is in bytes.
func (winInitiator) SendTargetPortals() ([]byte, uint32, error) {
	if err := loaded(); err != nil {
		return nil, 0, err
	}
	var count, size uint32
	buf, err := sizedCall(func(buf []byte) error {
		return reportIScsiSendTargetPortalsEx(&count, &size, first(buf))
	}, func() []byte { return alignedBytes(size) })
	if err != nil {
		return nil, 0, err
	}
	return buf, count, nil
}

// Targets implements initiatorAPI. BufferSize counts WCHARs.
func (winInitiator) Targets() ([]uint16, error) {
	if err := loaded(); err != nil {
		return nil, err
	}
	var size uint32
	return sizedCall(func(buf []uint16) error {
		return reportIScsiTargets(false, &size, first(buf))
	}, func() []uint16 { return make([]uint16, size) })
}

// DiscoveryMechanisms implements initiatorAPI. Learn gives BufferSize in
// bytes; the buffer holds twice that many bytes, so it is large enough
// even if the count were in WCHARs, while the size passed is the one
// Windows asked for.
func (winInitiator) DiscoveryMechanisms(target string) ([]uint16, error) {
	if err := loaded(); err != nil {
		return nil, err
	}
	t, err := windows.UTF16PtrFromString(target)
	if err != nil {
		return nil, err
	}
	var size uint32
	return sizedCall(func(buf []uint16) error {
		return getIScsiTargetInformation(t, nil, infoDiscoveryMechanisms, &size, first(buf))
	}, func() []uint16 { return make([]uint16, size) })
}

// Login implements initiatorAPI: LoginIScsiTargetW(target, informational
// = FALSE (LUNs are reported to Plug and Play), any initiator and port,
// the portal, security flags 0, no mappings, the login options, no
// preshared key, persistent = FALSE).
func (winInitiator) Login(target string, p portalSpec, auth loginAuth) error {
	if err := loaded(); err != nil {
		return err
	}
	t, err := windows.UTF16PtrFromString(target)
	if err != nil {
		return err
	}
	tp, err := portalPtr(p)
	if err != nil {
		return err
	}
	opts := loginOptions{Version: loginOptionsVersion, InformationSpecified: infoAuthType, AuthType: auth.Type}
	// The CHAP name and secret are byte strings with explicit lengths;
	// a terminating NUL is added for safety and not counted.
	var user, secret []byte
	if auth.Type != authNone {
		user = append([]byte(auth.User), 0)
		secret = append([]byte(auth.Secret), 0)
		opts.InformationSpecified |= infoUsername | infoPassword
		opts.UsernameLength, opts.Username = uint32(len(user)-1), &user[0]
		opts.PasswordLength, opts.Password = uint32(len(secret)-1), &secret[0]
	}
	var sid, cid uniqueID
	err = loginIScsiTarget(t, false, nil, allInitiatorPorts, tp, 0, nil, &opts, 0, nil, false, &sid, &cid)
	runtime.KeepAlive(user)
	clear(secret) // the secret does not linger in this buffer
	runtime.KeepAlive(secret)
	return err
}

// Sessions implements initiatorAPI. BufferSize is in bytes and covers the
// strings and connection arrays the entries point to.
func (winInitiator) Sessions() ([]byte, uintptr, uint32, error) {
	if err := loaded(); err != nil {
		return nil, 0, 0, err
	}
	var size, count uint32
	buf, err := sizedCall(func(buf []byte) error {
		return getIScsiSessionList(&size, &count, first(buf))
	}, func() []byte { return alignedBytes(size) })
	if err != nil {
		return nil, 0, 0, err
	}
	var base uintptr
	if len(buf) > 0 {
		base = uintptr(unsafe.Pointer(&buf[0]))
	}
	return buf, base, count, nil
}

// Logout implements initiatorAPI.
func (winInitiator) Logout(id uniqueID) error {
	if err := loaded(); err != nil {
		return err
	}
	return logoutIScsiTarget(&id)
}

// RemovePersistentTarget implements initiatorAPI: NULL initiator, all
// ports, NULL portal (every portal).
func (winInitiator) RemovePersistentTarget(target string) error {
	if err := loaded(); err != nil {
		return err
	}
	t, err := windows.UTF16PtrFromString(target)
	if err != nil {
		return err
	}
	return removeIScsiPersistentTarget(nil, allInitiatorPorts, t, nil)
}

// Devices implements initiatorAPI. DeviceCount counts entries.
func (winInitiator) Devices(id uniqueID) ([]byte, uint32, error) {
	if err := loaded(); err != nil {
		return nil, 0, err
	}
	var count uint32
	buf, err := sizedCall(func(buf []byte) error {
		return getDevicesForIScsiSession(&id, &count, first(buf))
	}, func() []byte { return alignedBytes(count * deviceOnSessionSize) })
	if err != nil {
		return nil, 0, err
	}
	return buf, count, nil
}

// SetInitiatorCHAPSecret implements initiatorAPI.
func (winInitiator) SetInitiatorCHAPSecret(secret []byte) error {
	if err := loaded(); err != nil {
		return err
	}
	if len(secret) == 0 {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "the mutual CHAP secret is empty")
	}
	b := append([]byte(nil), secret...)
	err := setIScsiInitiatorCHAPSharedSecret(uint32(len(b)), &b[0])
	clear(b)
	runtime.KeepAlive(b)
	return err
}
