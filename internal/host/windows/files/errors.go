package files

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// errnoOf returns the Win32 error code err carries, or 0.
func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

// isNotExist tells whether err means the path (or one of its parents) does
// not exist. ERROR_DIRECTORY is what Windows reports when a parent is a
// file.
func isNotExist(err error) bool {
	switch errnoOf(err) {
	case errFileNotFound, errPathNotFound, errDirectory:
		return true
	}
	return false
}

// kindOf maps a Win32 error to the errdefs sentinel it means here; nil for
// a plain host failure (codes.Internal).
func kindOf(err error) error {
	switch errnoOf(err) {
	case errFileNotFound, errPathNotFound, errDirectory, errBadNetPath, errBadNetName:
		return errdefs.ErrNotFound
	case errAccessDenied, errPrivilegeNotHeld:
		return errdefs.ErrPermissionDenied
	case errFileExists, errAlreadyExists:
		return errdefs.ErrAlreadyExists
	case errDirNotEmpty:
		return errdefs.ErrFailedPrecondition
	case errInvalidName, errBadPathname, errFilenameTooLong, errInvalidParameter:
		return errdefs.ErrInvalidArgument
	case errNotReady, errSharingViolation, errLockViolation, errUnrecognizedVol, errDeviceNotConnectd:
		// A volume that is offline, unformatted or busy: retrying later
		// can succeed.
		return errdefs.ErrUnavailable
	}
	return nil
}

// fail wraps a Win32 error with what was being done and the sentinel its
// code means, keeping the Win32 error in the chain: "remove directory
// C:\x: The directory is not empty. (failed precondition)".
func fail(err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if k := kindOf(err); k != nil {
		return fmt.Errorf("%s: %w (%w)", msg, err, k)
	}
	return fmt.Errorf("%s: %w", msg, err)
}
