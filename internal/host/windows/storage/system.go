package storage

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// handle is an open device, volume or file as the seam hands it out: a
// Win32 HANDLE on Windows, a counter in the test fake.
type handle uintptr

// openMode says how open calls CreateFileW. Every mode shares read and
// write (Learn "CreateFileW", Physical Disks and Volumes: volumes require
// FILE_SHARE_WRITE) and opens an existing object.
type openMode int

const (
	// modeQuery opens with dwDesiredAccess 0: enough for every
	// FILE_ANY_ACCESS IOCTL and touches no data.
	modeQuery openMode = iota + 1
	// modeRead opens with GENERIC_READ (IOCTL_DISK_GET_LENGTH_INFO).
	modeRead
	// modeReadWrite opens with GENERIC_READ|GENERIC_WRITE, which
	// FlushFileBuffers on a volume requires (administrator).
	modeReadWrite
	// modeReparse opens a file or directory itself rather than what it
	// points to (FILE_FLAG_OPEN_REPARSE_POINT|FILE_FLAG_BACKUP_SEMANTICS,
	// access 0, sharing delete too), to read its reparse data.
	modeReparse
)

func (m openMode) String() string {
	switch m {
	case modeQuery:
		return "query"
	case modeRead:
		return "read"
	case modeReadWrite:
		return "read-write"
	case modeReparse:
		return "reparse"
	}
	return fmt.Sprintf("openMode(%d)", int(m))
}

// system is the seam between the backend's decisions (this package's
// untagged files, tested on Linux against a recording fake) and the
// operating system (system_windows.go). Each method is one Win32 call or
// one WMI round trip; paths are passed exactly as Win32 should see them
// (long-path prefixes, trailing backslashes and all are decided above the
// seam). Errors from Win32 calls carry the Win32 code as a syscall.Errno,
// so the decision code can read it on every platform.
type system interface {
	// diskInterfaces lists the device interface paths of the present
	// disks (CM_Get_Device_Interface_List, GUID_DEVINTERFACE_DISK,
	// CM_GET_DEVICE_INTERFACE_LIST_PRESENT). No disk is an empty list.
	diskInterfaces() ([]string, error)
	// volumes lists the volume GUID paths, \\?\Volume{GUID}\
	// (FindFirstVolumeW/FindNextVolumeW/FindVolumeClose).
	volumes() ([]string, error)

	// open is CreateFileW(path, …, OPEN_EXISTING) in the given mode.
	open(path string, mode openMode) (handle, error)
	// close is CloseHandle.
	close(h handle) error
	// ioctl is DeviceIoControl with an outLen-byte output buffer. It
	// returns the bytes the driver wrote; on ERROR_MORE_DATA it returns
	// them together with the error, since they hold the size to retry with.
	ioctl(h handle, code uint32, in []byte, outLen int) ([]byte, error)
	// flush is FlushFileBuffers.
	flush(h handle) error

	// volumeNameForMountPoint is GetVolumeNameForVolumeMountPointW; the
	// mount point ends with a backslash.
	volumeNameForMountPoint(mountPoint string) (string, error)
	// setVolumeMountPoint is SetVolumeMountPointW(mountPoint, volume).
	setVolumeMountPoint(mountPoint, volume string) error
	// deleteVolumeMountPoint is DeleteVolumeMountPointW.
	deleteVolumeMountPoint(mountPoint string) error
	// volumePathNames is GetVolumePathNamesForVolumeNameW: every path of
	// a volume (its drive letter root and every folder it is mounted on),
	// each ending with a backslash; none is an empty list.
	volumePathNames(volume string) ([]string, error)
	// fileSystemName is GetVolumeInformationW(root) reduced to the file
	// system name ("NTFS", "ReFS", …).
	fileSystemName(root string) (string, error)
	// diskFreeSpace is GetDiskFreeSpaceExW(dir): total bytes and total
	// free bytes (not the caller's quota).
	diskFreeSpace(dir string) (total, free uint64, err error)
	// attributes is GetFileAttributesW.
	attributes(path string) (uint32, error)
	// reparseTag is the reparse tag FindFirstFileW reports in
	// dwReserved0 (the handle is closed with FindClose). Only meaningful
	// when attributes has FILE_ATTRIBUTE_REPARSE_POINT.
	reparseTag(path string) (uint32, error)
	// mkdir is CreateDirectoryW(path, nil).
	mkdir(path string) error

	// query, call and callStatic are wmi.Client operations in
	// Root\Microsoft\Windows\Storage.
	query(ctx context.Context, q *wmi.WQL) ([]wmi.Props, error)
	call(ctx context.Context, q *wmi.WQL, method string, in ...wmi.Param) (wmi.Props, error)
	callStatic(ctx context.Context, class, method string, in ...wmi.Param) (wmi.Props, error)
}

// Win32 error codes the decisions depend on (winerror.h; fact sheet §B6).
const (
	errInvalidFunction    = 1
	errFileNotFound       = 2
	errPathNotFound       = 3
	errAccessDenied       = 5
	errInvalidHandle      = 6
	errWriteProtect       = 19 // ERROR_WRITE_PROTECT: "The media is write protected"
	errNotReady           = 21
	errSharingViolation   = 32
	errLockViolation      = 33
	errNotSupported       = 50
	errInvalidParameter   = 87
	errInsufficientBuffer = 122
	errInvalidName        = 123 // ERROR_INVALID_NAME: not a volume GUID path
	errDirNotEmpty        = 145
	errBusy               = 170
	errMoreData           = 234
	errDirectory          = 267 // ERROR_DIRECTORY: "The directory name is invalid"
	errNoSuchDevice       = 433 // ERROR_NO_SUCH_DEVICE
	errDeviceNotConnected = 1167
	errUnrecognizedVolume = 1005
	errIODevice           = 1117 // ERROR_IO_DEVICE
	errUnrecognizedMedia  = 1785 // ERROR_UNRECOGNIZED_MEDIA: "may not be formatted"
	errPrivilegeNotHeld   = 1314
	errNotAReparsePoint   = 4390
)

// errnoOf returns the Win32 code err carries.
func errnoOf(err error) (uint32, bool) {
	var e syscall.Errno
	if errors.As(err, &e) {
		return uint32(e), true
	}
	return 0, false
}

// isErrno tells whether err carries one of the Win32 codes.
func isErrno(err error, codes ...uint32) bool {
	n, ok := errnoOf(err)
	if !ok {
		return false
	}
	for _, c := range codes {
		if n == c {
			return true
		}
	}
	return false
}

// isGone tells whether err says the object does not exist.
func isGone(err error) bool {
	return isErrno(err, errFileNotFound, errPathNotFound, errNoSuchDevice, errDeviceNotConnected)
}

// isUnsupported tells whether a device refused an IOCTL as not
// applicable to it (a disk that is not on a SCSI-like bus, a device
// without VPD page 0x83).
func isUnsupported(err error) bool {
	return isErrno(err, errInvalidFunction, errNotSupported, errInvalidParameter)
}

// win32Kind maps a Win32 code to the errdefs kind it means wherever it
// occurs; codes whose meaning depends on the call are mapped at the call.
func win32Kind(err error) error {
	n, ok := errnoOf(err)
	if !ok {
		return nil
	}
	switch n {
	case errFileNotFound, errPathNotFound, errNoSuchDevice, errDeviceNotConnected:
		return errdefs.ErrNotFound
	case errAccessDenied, errPrivilegeNotHeld:
		return errdefs.ErrPermissionDenied
	case errNotReady, errSharingViolation, errLockViolation, errBusy:
		return errdefs.ErrUnavailable
	}
	return nil
}

// osError describes a failed Win32 call: op names it ("open
// \\.\PhysicalDrive3"), err is the call's error, and the errdefs kind of
// its code (if any) is found by errors.Is alongside the syscall.Errno.
func osError(op string, err error) error {
	if kind := win32Kind(err); kind != nil {
		return &hostError{op: op, err: err, kind: kind}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// hostError is a Win32 failure that also has an errdefs kind.
type hostError struct {
	op   string
	err  error
	kind error
}

func (e *hostError) Error() string { return e.op + ": " + e.err.Error() }

// Unwrap exposes both the Win32 error and the kind to errors.Is/As.
func (e *hostError) Unwrap() []error { return []error{e.err, e.kind} }
