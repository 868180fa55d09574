package iscsiinit

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// ISDSC_STATUS values this package acts on by name (iscsierr.h).
const (
	isdscAuthenticationFailure = 0xEFFF0009
	isdscAuthorizationFailure  = 0xEFFF000A
	isdscSessionBusy           = 0xEFFF001F
	isdscInvalidSessionID      = 0xEFFF001C
	isdscTargetPortalExists    = 0xEFFF0032
	isdscTargetAlreadyLoggedIn = 0xEFFF003F
	isdscDeviceBusyOnSession   = 0xEFFF0040
	isdscPortalNotFound        = 0xEFFF0043
	isdscTargetNotFound        = 0xEFFF0029
	isdscServiceNotRunning     = 0xEFFF003E

	errAccessDenied       = 5
	errInsufficientBuffer = 122
	errRPCUnavailable     = 1722
)

type statusInfo struct {
	name, text string
	kind       error
}

// statuses is the one table mapping iscsidsc.dll results to errdefs kinds
// (names and texts from iscsierr.h). Codes outside it are host failures
// (codes.Internal) reported with their number.
var statuses = map[uint32]statusInfo{
	0xEFFF0001:        {"ISDSC_NON_SPECIFIC_ERROR", "a non specific error occurred", nil},
	0xEFFF0002:        {"ISDSC_LOGIN_FAILED", "login failed", nil},
	0xEFFF0003:        {"ISDSC_CONNECTION_FAILED", "connection failed", errdefs.ErrUnavailable},
	0xEFFF0006:        {"ISDSC_TARGET_MOVED_TEMPORARILY", "target moved temporarily", errdefs.ErrUnavailable},
	0xEFFF0007:        {"ISDSC_TARGET_MOVED_PERMANENTLY", "target moved permanently", errdefs.ErrNotFound},
	0xEFFF0009:        {"ISDSC_AUTHENTICATION_FAILURE", "authentication failure", errdefs.ErrPermissionDenied},
	0xEFFF000A:        {"ISDSC_AUTHORIZATION_FAILURE", "authorization failure", errdefs.ErrPermissionDenied},
	0xEFFF000B:        {"ISDSC_NOT_FOUND", "not found", errdefs.ErrNotFound},
	0xEFFF000C:        {"ISDSC_TARGET_REMOVED", "target removed", errdefs.ErrNotFound},
	0xEFFF000E:        {"ISDSC_TOO_MANY_CONNECTIONS", "too many connections", errdefs.ErrUnavailable},
	0xEFFF0012:        {"ISDSC_TARGET_ERROR", "target error", nil},
	0xEFFF0013:        {"ISDSC_SERVICE_UNAVAILABLE", "service unavailable", errdefs.ErrUnavailable},
	0xEFFF0014:        {"ISDSC_OUT_OF_RESOURCES", "out of resources", errdefs.ErrUnavailable},
	0xEFFF0016:        {"ISDSC_SESSION_ALREADY_EXISTS", "session already exists", errdefs.ErrAlreadyExists},
	0xEFFF001C:        {"ISDSC_INVALID_SESSION_ID", "invalid session id", errdefs.ErrNotFound},
	0xEFFF001E:        {"ISDSC_TOO_MANY_SESSIONS", "exceeded max sessions for this initiator", errdefs.ErrUnavailable},
	0xEFFF001F:        {"ISDSC_SESSION_BUSY", "session is busy since a request is already in progress", errdefs.ErrUnavailable},
	0xEFFF0022:        {"ISDSC_LOGON_FAILED", "logon failed", nil},
	0xEFFF0023:        {"ISDSC_SEND_FAILED", "TCP send failed", errdefs.ErrUnavailable},
	0xEFFF0024:        {"ISDSC_TRANSPORT_ERROR", "TCP transport error", errdefs.ErrUnavailable},
	0xEFFF0029:        {"ISDSC_TARGET_NOT_FOUND", "the target name is not found or is marked as hidden from login", errdefs.ErrNotFound},
	0xEFFF002A:        {"ISDSC_LOGIN_USER_INFO_BAD", "one or more login parameters are invalid", errdefs.ErrInvalidArgument},
	0xEFFF0032:        {"ISDSC_TARGET_PORTAL_ALREADY_EXISTS", "target portal structure already exists", errdefs.ErrAlreadyExists},
	0xEFFF0033:        {"ISDSC_TARGET_ADDRESS_ALREADY_EXISTS", "target address structure already exists", errdefs.ErrAlreadyExists},
	0xEFFF0038:        {"ISDSC_TARGET_OUT_OF_RESORCES", "the target does not have enough resources", errdefs.ErrUnavailable},
	0xEFFF0039:        {"ISDSC_SERVICE_DID_NOT_RESPOND", "the initiator service did not respond", errdefs.ErrUnavailable},
	0xEFFF003C:        {"ISDSC_NO_PORTAL_SPECIFIED", "there is no target portal available to complete the login", errdefs.ErrFailedPrecondition},
	0xEFFF003E:        {"ISDSC_SERVICE_NOT_RUNNING", "the Microsoft iSCSI Initiator Service is not running", errdefs.ErrFailedPrecondition},
	0xEFFF003F:        {"ISDSC_TARGET_ALREADY_LOGGED_IN", "the target has already been logged in via an iSCSI session", errdefs.ErrAlreadyExists},
	0xEFFF0040:        {"ISDSC_DEVICE_BUSY_ON_SESSION", "a device on the session is in use", errdefs.ErrFailedPrecondition},
	0xEFFF0043:        {"ISDSC_PORTAL_NOT_FOUND", "the specified portal was not found", errdefs.ErrNotFound},
	0xEFFF0044:        {"ISDSC_INITIATOR_NOT_FOUND", "the specified initiator name was not found", errdefs.ErrNotFound},
	0xEFFF004A:        {"ISDSC_INVALID_CHAP_SECRET", "CHAP secret does not conform to the standard", errdefs.ErrInvalidArgument},
	0xEFFF004B:        {"ISDSC_INVALID_TARGET_CHAP_SECRET", "target CHAP secret is invalid (12 to 16 bytes without IPsec)", errdefs.ErrInvalidArgument},
	0xEFFF004C:        {"ISDSC_INVALID_INITIATOR_CHAP_SECRET", "initiator CHAP secret is invalid (12 to 16 bytes without IPsec)", errdefs.ErrInvalidArgument},
	0xEFFF004D:        {"ISDSC_INVALID_CHAP_USER_NAME", "CHAP user name is invalid", errdefs.ErrInvalidArgument},
	0xEFFF004E:        {"ISDSC_INVALID_LOGON_AUTH_TYPE", "logon authentication type is invalid", errdefs.ErrInvalidArgument},
	0xEFFF0051:        {"ISDSC_INVALID_ISCSI_NAME", "the iSCSI name contains invalid characters or is too long", errdefs.ErrInvalidArgument},
	0xEFFF0056:        {"ISDSC_INVALID_PARAMETER", "one or more parameters are not valid", errdefs.ErrInvalidArgument},
	0xEFFF005F:        {"ISDSC_DNS_NAME_UNRESOLVED", "the DNS name was not resolved", errdefs.ErrNotFound},
	0xEFFF0065:        {"ISDSC_RESTRICTED_BY_GROUP_POLICY", "the operation does not conform with group policy", errdefs.ErrPermissionDenied},
	0xEFFF0068:        {"ISDSC_INVALID_HOST", "the name could not be resolved to an IP address", errdefs.ErrNotFound},
	errAccessDenied:   {"ERROR_ACCESS_DENIED", "access is denied", errdefs.ErrPermissionDenied},
	errRPCUnavailable: {"RPC_S_SERVER_UNAVAILABLE", "the RPC server is unavailable", errdefs.ErrFailedPrecondition},
}

// statusOf returns the ISDSC_STATUS err carries (0 for none).
func statusOf(err error) uint32 {
	var e syscall.Errno
	if errors.As(err, &e) {
		return uint32(e)
	}
	return 0
}

// isWarning tells whether a status has warning severity (0xAFFF00xx):
// the operation succeeded, with a remark (ISDSC_OPERATION_NOT_ALL_SUCCESS,
// ISDSC_OPERATION_REQUIRES_REBOOT, ISDSC_SHORT_CHAP_SECRET).
func isWarning(code uint32) bool { return code>>30 == 2 }

// ignoreWarning turns a warning status into success.
func ignoreWarning(err error) error {
	if err != nil && isWarning(statusOf(err)) {
		return nil
	}
	return err
}

// isdscError describes a failed call: the action, the status's name and
// meaning, a hint, and the errdefs kind. Secrets never reach it: callers
// pass only addresses, IQNs and user names.
func isdscError(err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	code := statusOf(err)
	if code == 0 {
		return fmt.Errorf("%s: %w", msg, err)
	}
	info, ok := statuses[code]
	if !ok {
		return fmt.Errorf("%s: status %#08x", msg, code)
	}
	text := fmt.Sprintf("%s: %s (%#08x: %s)", msg, info.name, code, info.text)
	switch code {
	case isdscServiceNotRunning, errRPCUnavailable:
		text += "; start the Microsoft iSCSI Initiator Service (MSiSCSI) and set it to start automatically"
	case isdscAuthenticationFailure, isdscAuthorizationFailure:
		text += "; check chap_username and chap_secret (for MUTUAL_CHAP also the initiator secret set with SetMutualChapSecret)"
	case isdscDeviceBusyOnSession:
		text += "; a disk of the target is still in use (mounted or open)"
	}
	if info.kind != nil {
		return fmt.Errorf("%s: %w", text, info.kind)
	}
	return errors.New(text)
}
