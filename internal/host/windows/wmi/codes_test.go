package wmi

import (
	"errors"
	"fmt"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

func TestReturnCodeKinds(t *testing.T) {
	for _, tc := range []struct {
		code ReturnCode
		kind error // nil: no sentinel (a host failure)
		text string
	}{
		{Success, nil, "Success"},
		{NotSupported, errdefs.ErrFailedPrecondition, "Not Supported"},
		{Failed, nil, "Failed"},
		{Timeout, errdefs.ErrUnavailable, "Timeout"},
		{InvalidParameter, errdefs.ErrInvalidArgument, "Invalid Parameter"},
		{SizeNotSupported, errdefs.ErrOutOfRange, "Size Not Supported"},
		{40001, errdefs.ErrPermissionDenied, "Access denied"},
		{CacheOutOfDate, errdefs.ErrUnavailable, "Cache out of date"},
		{DiskAlreadyInitialized, errdefs.ErrFailedPrecondition, "The disk has already been initialized"},
		{DiskReadOnly, errdefs.ErrFailedPrecondition, "The disk is read only"},
		{DiskOffline, errdefs.ErrFailedPrecondition, "The disk is offline"},
		{AccessPathAlreadyInUse, errdefs.ErrFailedPrecondition, "The requested access path is already in use"},
		{NotAllowedOnSystemDisk, errdefs.ErrFailedPrecondition, "The operation is not allowed on a system or critical partition"},
		{43006, errdefs.ErrFailedPrecondition, "The volume is read only"},
		{99999, nil, "code 99999"},
	} {
		if got := tc.code.Kind(); got != tc.kind {
			t.Errorf("%d.Kind() = %v, want %v", tc.code, got, tc.kind)
		}
		if got := tc.code.String(); got != tc.text {
			t.Errorf("%d.String() = %q, want %q", tc.code, got, tc.text)
		}
	}
}

// TestEveryDocumentedCodeHasAText guards the table against accidental
// deletions: every code the fact sheet lists must read as words.
func TestEveryDocumentedCodeHasAText(t *testing.T) {
	documented := []ReturnCode{0, 1, 2, 3, 4, 5, 6, 7, 4097, 40000, 40001, 40002, 40003, 40004, 40005, 40018,
		41000, 41001, 41002, 41003, 41004, 41005, 41006, 41009, 41010, 41011, 41012, 41014, 41015, 41016, 41017, 41018,
		42002, 42004, 42007, 42008, 42009, 42010, 43000, 43001, 43002, 43003, 43005, 43006}
	for _, c := range documented {
		if _, ok := returnCodes[c]; !ok {
			t.Errorf("code %d is missing from the table", c)
		}
	}
}

func TestMethodError(t *testing.T) {
	var err error = &MethodError{Class: "MSFT_Disk", Method: "CreatePartition", Code: AccessPathAlreadyInUse}
	wrapped := fmt.Errorf("partition disk 3: %w", err)
	if want := "MSFT_Disk.CreatePartition returned 42002 (The requested access path is already in use)"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if !errors.Is(wrapped, errdefs.ErrFailedPrecondition) {
		t.Error("42002 does not unwrap to ErrFailedPrecondition")
	}
	if !HasCode(wrapped, DiskOffline, AccessPathAlreadyInUse) {
		t.Error("HasCode misses 42002")
	}
	if HasCode(wrapped, DiskOffline) || HasCode(errors.New("x"), Success) || HasCode(nil, Success) {
		t.Error("HasCode matches what it should not")
	}
	ext := &MethodError{Class: "MSFT_Volume", Method: "Format", Code: 4, ExtendedStatus: "instance of MSFT_StorageExtendedStatus {…};"}
	if want := "MSFT_Volume.Format returned 4 (Failed); extended status: instance of MSFT_StorageExtendedStatus {…};"; ext.Error() != want {
		t.Errorf("Error() = %q", ext.Error())
	}
	if errors.Unwrap(ext) != nil {
		t.Error("code 4 has a kind")
	}
}

func TestCOMError(t *testing.T) {
	for _, tc := range []struct {
		e    COMError
		kind error
		text string
	}{
		{COMError{Op: "ExecQuery(x)", HRESULT: hrDispException, SCode: wbemInvalidQuery, Description: "Invalid query"},
			errdefs.ErrInvalidArgument, "ExecQuery(x): 0x80041017 WBEM_E_INVALID_QUERY (Invalid query)"},
		{COMError{Op: "ConnectServer", HRESULT: hrDispException, SCode: wbemInvalidNamespace, Description: "<nil>"},
			errdefs.ErrUnimplemented, "ConnectServer: 0x8004100e WBEM_E_INVALID_NAMESPACE"},
		{COMError{Op: "MSFT_Disk.Online", HRESULT: wbemNotFound},
			errdefs.ErrNotFound, "MSFT_Disk.Online: 0x80041002 WBEM_E_NOT_FOUND"},
		{COMError{Op: "create WbemScripting.SWbemLocator", HRESULT: hrClassString},
			errdefs.ErrUnimplemented, "create WbemScripting.SWbemLocator: 0x800401f3 CO_E_CLASSSTRING (WMI scripting is not registered on this host)"},
		{COMError{Op: "x", HRESULT: hrDispException, Description: "no scode"},
			nil, "x: 0x80020009 DISP_E_EXCEPTION (no scode)"},
		{COMError{Op: "x", HRESULT: 0x80004005},
			nil, "x: 0x80004005"},
		{COMError{Op: "x", HRESULT: hrDispException, SCode: wbemAccessDenied},
			errdefs.ErrPermissionDenied, "x: 0x80041003 WBEM_E_ACCESS_DENIED"},
	} {
		e := tc.e
		if got := e.Error(); got != tc.text {
			t.Errorf("Error() = %q, want %q", got, tc.text)
		}
		if got := e.Unwrap(); got != tc.kind {
			t.Errorf("%s: Unwrap() = %v, want %v", tc.text, got, tc.kind)
		}
	}
}
