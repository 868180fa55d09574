//go:build windows

package files

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/windows"
)

// winAPI is the Win32 implementation of fsAPI. Each method converts the
// path with ExtendedPath and makes the one call its fsAPI comment names;
// errors are returned as the syscall.Errno x/sys produces.
type winAPI struct{}

var _ fsAPI = winAPI{}

// closeHandle closes a handle this package opened for one query; a
// failure to close leaves nothing to act on.
func closeHandle(h windows.Handle) { _ = windows.CloseHandle(h) }

func winPath(p string) (*uint16, error) { return windows.UTF16PtrFromString(ExtendedPath(p)) }

// shareAll lets these probing opens coexist with any other open of the
// file, so a check never causes or meets a sharing violation.
const shareAll = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE

// Lstat implements fsAPI. GetFileAttributesExW does not follow a final
// reparse point; FindFirstFileW (the path's own directory entry) supplies
// the reparse tag in dwReserved0, and also the attributes when
// GetFileAttributesExW meets a sharing violation (as os.Lstat does for
// pagefile.sys).
func (winAPI) Lstat(path string) (fileInfo, error) {
	p, err := winPath(path)
	if err != nil {
		return fileInfo{}, errInvalidName
	}
	var fa windows.Win32FileAttributeData
	err = windows.GetFileAttributesEx(p, windows.GetFileExInfoStandard, (*byte)(unsafe.Pointer(&fa)))
	switch {
	case err == nil && fa.FileAttributes&attrReparsePoint == 0:
		return fileInfo{attrs: fa.FileAttributes}, nil
	case err != nil && !errors.Is(err, windows.ERROR_SHARING_VIOLATION):
		return fileInfo{}, err
	}
	var fd windows.Win32finddata
	h, err := windows.FindFirstFile(p, &fd)
	if err != nil {
		return fileInfo{}, err
	}
	_ = windows.FindClose(h)
	fi := fileInfo{attrs: fd.FileAttributes}
	if fi.isReparse() {
		fi.tag = fd.Reserved0
	}
	return fi, nil
}

// Stat implements fsAPI: opening without FILE_FLAG_OPEN_REPARSE_POINT
// follows every link and mount point to the end; access 0 is enough for
// GetFileInformationByHandle (os.Stat does the same).
func (winAPI) Stat(path string) (fileInfo, error) {
	p, err := winPath(path)
	if err != nil {
		return fileInfo{}, errInvalidName
	}
	h, err := windows.CreateFile(p, 0, shareAll, nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return fileInfo{}, err
	}
	defer closeHandle(h)
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return fileInfo{}, err
	}
	return fileInfo{attrs: info.FileAttributes}, nil
}

// ReadDir implements fsAPI.
func (winAPI) ReadDir(path string) ([]dirEntry, error) {
	p, err := winPath(joinPath(path, "*"))
	if err != nil {
		return nil, errInvalidName
	}
	var fd windows.Win32finddata
	h, err := windows.FindFirstFile(p, &fd)
	if err != nil {
		if errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
			return nil, nil // no entries at all (not even "."): a volume root
		}
		return nil, err
	}
	defer func() { _ = windows.FindClose(h) }()
	var out []dirEntry
	for {
		name := windows.UTF16ToString(fd.FileName[:])
		if name != "." && name != ".." {
			fi := fileInfo{attrs: fd.FileAttributes}
			if fi.isReparse() {
				fi.tag = fd.Reserved0
			}
			out = append(out, dirEntry{name: name, info: fi})
		}
		if err := windows.FindNextFile(h, &fd); err != nil {
			if errors.Is(err, windows.ERROR_NO_MORE_FILES) {
				return out, nil
			}
			return nil, err
		}
	}
}

// ReadReparsePoint implements fsAPI. The handle asks for no data access
// and shares everything, so it works on links whose target is busy and
// never blocks others (x/sys windows.Readlink opens with GENERIC_READ and
// no sharing, and reads the print name at a wrong offset: not used).
func (winAPI) ReadReparsePoint(path string) ([]byte, error) {
	p, err := winPath(path)
	if err != nil {
		return nil, errInvalidName
	}
	h, err := windows.CreateFile(p, 0, shareAll, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return nil, err
	}
	defer closeHandle(h)
	buf := make([]byte, windows.MAXIMUM_REPARSE_DATA_BUFFER_SIZE)
	var n uint32
	if err := windows.DeviceIoControl(h, windows.FSCTL_GET_REPARSE_POINT, nil, 0, &buf[0], uint32(len(buf)), &n, nil); err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// VolumeNameForMountPoint implements fsAPI. The function requires the
// trailing backslash.
func (winAPI) VolumeNameForMountPoint(path string) (string, error) {
	p, err := winPath(joinPath(path, ""))
	if err != nil {
		return "", errInvalidName
	}
	buf := make([]uint16, windows.MAX_PATH)
	if err := windows.GetVolumeNameForVolumeMountPoint(p, &buf[0], uint32(len(buf))); err != nil {
		return "", err
	}
	return windows.UTF16ToString(buf), nil
}

// DeleteVolumeMountPoint implements fsAPI (trailing backslash required).
func (winAPI) DeleteVolumeMountPoint(path string) error {
	p, err := winPath(joinPath(path, ""))
	if err != nil {
		return errInvalidName
	}
	return windows.DeleteVolumeMountPoint(p)
}

// RemoveDirectory implements fsAPI.
func (winAPI) RemoveDirectory(path string) error {
	p, err := winPath(path)
	if err != nil {
		return errInvalidName
	}
	return windows.RemoveDirectory(p)
}

// DeleteFile implements fsAPI.
func (winAPI) DeleteFile(path string) error {
	p, err := winPath(path)
	if err != nil {
		return errInvalidName
	}
	return windows.DeleteFile(p)
}

// SetAttributes implements fsAPI.
func (winAPI) SetAttributes(path string, attrs uint32) error {
	p, err := winPath(path)
	if err != nil {
		return errInvalidName
	}
	return windows.SetFileAttributes(p, attrs)
}

// CreateDirectory implements fsAPI; the directory inherits its parent's
// ACL (no security attributes).
func (winAPI) CreateDirectory(path string) error {
	p, err := winPath(path)
	if err != nil {
		return errInvalidName
	}
	return windows.CreateDirectory(p, nil)
}

// CreateSymlink implements fsAPI. The target goes through ExtendedPath
// too, so a target of 248 characters or more is stored in its \\?\ form
// (as os.Symlink stores it) and shorter ones as given.
func (winAPI) CreateSymlink(link, target string, flags uint32) error {
	l, err := winPath(link)
	if err != nil {
		return errInvalidName
	}
	t, err := winPath(target)
	if err != nil {
		return errInvalidName
	}
	return windows.CreateSymbolicLink(l, t, flags)
}
