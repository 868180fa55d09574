package wmi

import (
	"errors"
	"fmt"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// HRESULTs the package interprets (Learn "WBEMSTATUS enumeration",
// "COM Error Codes"; fact sheet §B5, §B6).
const (
	hrSFalse               = 0x00000001 // S_FALSE: COM already initialised on this thread
	hrRPCChangedMode       = 0x80010106 // RPC_E_CHANGED_MODE: the thread is in an STA
	hrRPCTooLate           = 0x80010119 // RPC_E_TOO_LATE: CoInitializeSecurity already done
	hrDispException        = 0x80020009 // DISP_E_EXCEPTION: details in EXCEPINFO.scode
	hrAccessDenied         = 0x80070005 // E_ACCESSDENIED
	hrClassString          = 0x800401F3 // CO_E_CLASSSTRING: ProgID not registered
	hrRPCServerUnavailable = 0x800706BA // RPC_S_SERVER_UNAVAILABLE as an HRESULT
	wbemFailed             = 0x80041001
	wbemNotFound           = 0x80041002
	wbemAccessDenied       = 0x80041003
	wbemProviderFailure    = 0x80041004
	wbemTypeMismatch       = 0x80041005
	wbemInvalidParameter   = 0x80041008
	wbemNotAvailable       = 0x80041009
	wbemNotSupported       = 0x8004100C
	wbemInvalidNamespace   = 0x8004100E
	wbemInvalidClass       = 0x80041010
	wbemProviderNotFound   = 0x80041011
	wbemTransportFailure   = 0x80041015
	wbemInvalidQuery       = 0x80041017
	wbemInvalidSyntax      = 0x80041021
	wbemProviderNotCapable = 0x80041024
	wbemInvalidMethodParam = 0x8004102F
)

type hrInfo struct {
	name string
	kind error
}

// hresults names the statuses above and gives each its errdefs kind. A
// missing namespace, class or provider means this host lacks the feature
// (ErrUnimplemented), not that a disk or volume is missing.
var hresults = map[uint32]hrInfo{
	hrDispException:        {"DISP_E_EXCEPTION", nil},
	hrAccessDenied:         {"E_ACCESSDENIED", errdefs.ErrPermissionDenied},
	hrClassString:          {"CO_E_CLASSSTRING (WMI scripting is not registered on this host)", errdefs.ErrUnimplemented},
	hrRPCServerUnavailable: {"RPC_S_SERVER_UNAVAILABLE", errdefs.ErrUnavailable},
	wbemFailed:             {"WBEM_E_FAILED", nil},
	wbemNotFound:           {"WBEM_E_NOT_FOUND", errdefs.ErrNotFound},
	wbemAccessDenied:       {"WBEM_E_ACCESS_DENIED", errdefs.ErrPermissionDenied},
	wbemProviderFailure:    {"WBEM_E_PROVIDER_FAILURE", nil},
	wbemTypeMismatch:       {"WBEM_E_TYPE_MISMATCH", errdefs.ErrInvalidArgument},
	wbemInvalidParameter:   {"WBEM_E_INVALID_PARAMETER", errdefs.ErrInvalidArgument},
	wbemNotAvailable:       {"WBEM_E_NOT_AVAILABLE", errdefs.ErrUnavailable},
	wbemNotSupported:       {"WBEM_E_NOT_SUPPORTED", errdefs.ErrUnimplemented},
	wbemInvalidNamespace:   {"WBEM_E_INVALID_NAMESPACE", errdefs.ErrUnimplemented},
	wbemInvalidClass:       {"WBEM_E_INVALID_CLASS", errdefs.ErrUnimplemented},
	wbemProviderNotFound:   {"WBEM_E_PROVIDER_NOT_FOUND", errdefs.ErrUnimplemented},
	wbemTransportFailure:   {"WBEM_E_TRANSPORT_FAILURE", errdefs.ErrUnavailable},
	wbemInvalidQuery:       {"WBEM_E_INVALID_QUERY", errdefs.ErrInvalidArgument},
	wbemInvalidSyntax:      {"WBEM_E_INVALID_SYNTAX", errdefs.ErrInvalidArgument},
	wbemProviderNotCapable: {"WBEM_E_PROVIDER_NOT_CAPABLE", errdefs.ErrUnimplemented},
	wbemInvalidMethodParam: {"WBEM_E_INVALID_METHOD_PARAMETERS", errdefs.ErrInvalidArgument},
}

// COMError is a failed COM or SWbem call: a non-zero HRESULT, and for
// DISP_E_EXCEPTION the WBEM status the provider raised (EXCEPINFO.scode).
// It unwraps to an errdefs kind when the status has one (WBEM_E_NOT_FOUND
// is ErrNotFound, WBEM_E_INVALID_NAMESPACE ErrUnimplemented, …).
type COMError struct {
	// Op names what failed: "ConnectServer", "ExecQuery", "MSFT_Disk.Online".
	Op string
	// HRESULT is the call's result.
	HRESULT uint32
	// SCode is EXCEPINFO.scode when HRESULT is DISP_E_EXCEPTION, else 0.
	SCode uint32
	// Description is EXCEPINFO's text, if any.
	Description string
}

// Code returns the status that explains the failure: SCode when the call
// raised an exception that carries one, else HRESULT.
func (e *COMError) Code() uint32 {
	if e.HRESULT == hrDispException && e.SCode != 0 {
		return e.SCode
	}
	return e.HRESULT
}

// Error reads "ExecQuery: 0x80041017 WBEM_E_INVALID_QUERY (description)".
func (e *COMError) Error() string {
	c := e.Code()
	s := fmt.Sprintf("%s: %#08x", e.Op, c)
	if i, ok := hresults[c]; ok {
		s += " " + i.name
	}
	if e.Description != "" && e.Description != "<nil>" {
		s += " (" + e.Description + ")"
	}
	return s
}

// Unwrap returns the errdefs kind of Code, or nil.
func (e *COMError) Unwrap() error { return hresults[e.Code()].kind }

func asMethodError(err error) (*MethodError, bool) {
	var me *MethodError
	ok := errors.As(err, &me)
	return me, ok
}
