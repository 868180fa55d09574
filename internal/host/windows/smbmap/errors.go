package smbmap

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// Win32 error codes the SMB client reports through the SMB WMI provider
// (fact sheet §4.2, §B6; winerror.h, lmerr.h).
const (
	errAccessDenied          = 5
	errBadNetPath            = 53
	errNetNameDeleted        = 64
	errNetworkAccessDenied   = 65
	errBadNetName            = 67
	errAlreadyAssigned       = 85
	errInvalidPassword       = 86
	errInvalidParameter      = 87
	errSemTimeout            = 121
	errDeviceAlreadyRemember = 1202
	errNoNetOrBadPath        = 1203
	errSessionCredConflict   = 1219
	errNoNetwork             = 1222
	errNetworkUnreachable    = 1231
	errHostUnreachable       = 1232
	errNoLogonServers        = 1311
	errLogonFailure          = 1326
	errAccountRestriction    = 1327
	errInvalidLogonHours     = 1328
	errInvalidWorkstation    = 1329
	errPasswordExpired       = 1330
	errAccountDisabled       = 1331
	errAccountLockedOut      = 1909
	nerrUseNotFound          = 2250
)

// win32Info is what a code means for a mapping request.
type win32Info struct {
	text string
	kind error
}

// win32Codes is the one table mapping SMB client errors to errdefs kinds.
// Drivers act on the kinds: PermissionDenied for credentials they must fix,
// NotFound for a wrong path, AlreadyExists for error 1219, Unavailable for
// a network that may come back.
var win32Codes = map[uint32]win32Info{
	errAccessDenied:          {"access is denied", errdefs.ErrPermissionDenied},
	errBadNetPath:            {"the network path was not found", errdefs.ErrNotFound},
	errNetNameDeleted:        {"the specified network name is no longer available", errdefs.ErrUnavailable},
	errNetworkAccessDenied:   {"network access is denied", errdefs.ErrPermissionDenied},
	errBadNetName:            {"the network name cannot be found", errdefs.ErrNotFound},
	errAlreadyAssigned:       {"the local device name is already in use", errdefs.ErrAlreadyExists},
	errInvalidPassword:       {"the specified network password is not correct", errdefs.ErrPermissionDenied},
	errInvalidParameter:      {"the parameter is incorrect", errdefs.ErrInvalidArgument},
	errSemTimeout:            {"the semaphore timeout period has expired", errdefs.ErrUnavailable},
	errDeviceAlreadyRemember: {"the local device name has a remembered connection to another network resource", errdefs.ErrAlreadyExists},
	errNoNetOrBadPath:        {"the network path was either typed incorrectly, does not exist, or the network provider is not currently available", errdefs.ErrNotFound},
	errSessionCredConflict:   {"multiple connections to a server or shared resource by the same user, using more than one user name, are not allowed", errdefs.ErrAlreadyExists},
	errNoNetwork:             {"the network is not present or not started", errdefs.ErrUnavailable},
	errNetworkUnreachable:    {"the network location cannot be reached", errdefs.ErrUnavailable},
	errHostUnreachable:       {"the network location cannot be reached", errdefs.ErrUnavailable},
	errNoLogonServers:        {"there are currently no logon servers available", errdefs.ErrUnavailable},
	errLogonFailure:          {"the user name or password is incorrect", errdefs.ErrPermissionDenied},
	errAccountRestriction:    {"account restrictions are preventing this user from signing in", errdefs.ErrPermissionDenied},
	errInvalidLogonHours:     {"account logon time restriction violation", errdefs.ErrPermissionDenied},
	errInvalidWorkstation:    {"this user isn't allowed to sign in to this computer", errdefs.ErrPermissionDenied},
	errPasswordExpired:       {"the password for this account has expired", errdefs.ErrPermissionDenied},
	errAccountDisabled:       {"this user can't sign in because this account is currently disabled", errdefs.ErrPermissionDenied},
	errAccountLockedOut:      {"the referenced account is currently locked out", errdefs.ErrPermissionDenied},
	nerrUseNotFound:          {"the network connection could not be found", errdefs.ErrNotFound},
}

// hresultWin32Facility marks HRESULT_FROM_WIN32 values: 0x8007xxxx.
const hresultWin32Facility = 0x80070000

// errorNumber finds "Windows System Error 1219", "error 1326", "(1219)"
// and the like in a provider's message. PowerShell shows the SMB
// provider's failures as "Windows System Error N"; how the same failure
// reads through SWbem is unconfirmed (fact sheet §4.2), so the text is one
// of several places the code is looked for.
var errorNumber = regexp.MustCompile(`(?i)(?:system error|error(?: code)?)[\s:#]*(\d{2,5})\b`)

// win32Code extracts the Win32 error an SMB WMI call failed with, looking
// (in order) at a non-zero ReturnValue, an HRESULT_FROM_WIN32 status, and
// the exception's description. How the SMB provider reports errors
// through the scripting API is not documented: it may return the code as
// ReturnValue, raise it as an HRESULT, or raise WBEM_E_FAILED with an
// MSFT_WmiError whose text names it; all three are handled.
func win32Code(err error) (uint32, bool) {
	var me *wmi.MethodError
	if errors.As(err, &me) && me.Code != 0 {
		return uint32(me.Code), true
	}
	var ce *wmi.COMError
	if errors.As(err, &ce) {
		for _, hr := range []uint32{ce.SCode, ce.HRESULT} {
			if hr&0xFFFF0000 == hresultWin32Facility {
				return hr & 0xFFFF, true
			}
		}
		if m := errorNumber.FindStringSubmatch(ce.Description); m != nil {
			if n, err := strconv.ParseUint(m[1], 10, 32); err == nil {
				return uint32(n), true
			}
		}
	}
	return 0, false
}

// hostError turns a failed SMB WMI call into the error the caller sees:
// the action, the Win32 code and its meaning when one is found, a hint for
// the codes drivers hit, and the errdefs kind. secrets are scrubbed from
// whatever text the host returned.
func hostError(err error, hint func(code uint32) string, secrets []string, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	detail := redact(err.Error(), secrets...)
	code, ok := win32Code(err)
	if !ok {
		// No Win32 code: the COM/WBEM status says what happened
		// (WBEM_E_ACCESS_DENIED, WBEM_E_INVALID_NAMESPACE on a host
		// without the SMB provider, ...); keep its kind.
		var ce *wmi.COMError
		if errors.As(err, &ce) {
			if k := errors.Unwrap(ce); k != nil {
				if errors.Is(k, errdefs.ErrUnimplemented) {
					detail += "; the SMB WMI provider (MSFT_SmbGlobalMapping in Root\\Microsoft\\Windows\\Smb) is missing: SMB global mappings need Windows Server 1709 or later"
				}
				return fmt.Errorf("%s: %s: %w", msg, detail, k)
			}
		}
		if errors.Is(err, errdefs.ErrNotFound) || errors.Is(err, errdefs.ErrUnimplemented) {
			return fmt.Errorf("%s: %w", msg, err)
		}
		return fmt.Errorf("%s: %s", msg, detail)
	}
	info, known := win32Codes[code]
	text := fmt.Sprintf("%s: Windows error %d", msg, code)
	if known {
		text += " (" + info.text + ")"
	}
	if h := hint(code); h != "" {
		text += "; " + h
	}
	text += " [" + detail + "]"
	if known && info.kind != nil {
		return fmt.Errorf("%s: %w", text, info.kind)
	}
	return errors.New(text)
}

func errorsIsNotFound(err error) bool { return errors.Is(err, errdefs.ErrNotFound) }
