package files

import "syscall"

// File attribute bits and reparse tags (winnt.h). They are defined here
// rather than taken from golang.org/x/sys/windows so that the decision logic
// compiles and is tested on every OS.
const (
	attrReadonly     = 0x00000001
	attrDirectory    = 0x00000010
	attrNormal       = 0x00000080
	attrReparsePoint = 0x00000400

	// attrSettable is what SetFileAttributesW accepts: READONLY, HIDDEN,
	// SYSTEM, ARCHIVE, NORMAL, TEMPORARY, OFFLINE, NOT_CONTENT_INDEXED.
	attrSettable = 0x1 | 0x2 | 0x4 | 0x20 | 0x80 | 0x100 | 0x1000 | 0x2000

	// tagMountPoint marks both junctions and volume mounted folders; the
	// substitute name tells them apart (\??\Volume{GUID}\ for a volume).
	tagMountPoint = 0xA0000003
	// tagSymlink marks symbolic links.
	tagSymlink = 0xA000000C
)

// CreateSymbolicLinkW flags.
const (
	symlinkDirectory         = 0x1
	symlinkAllowUnprivileged = 0x2
)

// Win32 error codes this package looks at. syscall.Errno is a plain number
// on every OS, so the fakes can return the same values Windows does.
const (
	errFileNotFound      = syscall.Errno(2)
	errPathNotFound      = syscall.Errno(3)
	errAccessDenied      = syscall.Errno(5)
	errNotReady          = syscall.Errno(21)
	errSharingViolation  = syscall.Errno(32)
	errLockViolation     = syscall.Errno(33)
	errBadNetPath        = syscall.Errno(53)
	errBadNetName        = syscall.Errno(67)
	errFileExists        = syscall.Errno(80)
	errInvalidParameter  = syscall.Errno(87)
	errInvalidName       = syscall.Errno(123)
	errDirNotEmpty       = syscall.Errno(145)
	errBadPathname       = syscall.Errno(161)
	errAlreadyExists     = syscall.Errno(183)
	errFilenameTooLong   = syscall.Errno(206)
	errDirectory         = syscall.Errno(267)
	errUnrecognizedVol   = syscall.Errno(1005)
	errPrivilegeNotHeld  = syscall.Errno(1314)
	errNotAReparsePoint  = syscall.Errno(4390)
	errCantResolveName   = syscall.Errno(1921)
	errDeviceNotConnectd = syscall.Errno(1167)
)

// fileInfo is what the host reports about one directory entry.
type fileInfo struct {
	// attrs are the FILE_ATTRIBUTE_* bits.
	attrs uint32
	// tag is the reparse tag; it is meaningful only when attrs has
	// FILE_ATTRIBUTE_REPARSE_POINT (WIN32_FIND_DATAW.dwReserved0 is
	// undefined otherwise), and 0 when it is not a reparse point.
	tag uint32
}

func (fi fileInfo) isDir() bool     { return fi.attrs&attrDirectory != 0 }
func (fi fileInfo) isReparse() bool { return fi.attrs&attrReparsePoint != 0 }

// dirEntry is one entry of a directory listing.
type dirEntry struct {
	name string
	info fileInfo
}

// fsAPI is the seam between the decision logic in this package and the
// Win32 calls. Each method is one call (or one call plus its obvious
// cleanup); errors are the Win32 error as a syscall.Errno, unwrapped, so
// the logic can switch on them. Paths are the cleaned paths the logic works
// with; the Windows implementation adds the \\?\ prefix (extendedPath).
type fsAPI interface {
	// Lstat describes path without following a final reparse point:
	// GetFileAttributesExW, then FindFirstFileW for the reparse tag.
	Lstat(path string) (fileInfo, error)
	// Stat describes what path resolves to, following every reparse
	// point: CreateFileW(FILE_FLAG_BACKUP_SEMANTICS) and
	// GetFileInformationByHandle. The tag of the result is 0.
	Stat(path string) (fileInfo, error)
	// ReadDir lists the directory path (following path itself if it is a
	// link), without "." and "..": FindFirstFileW(path\*)/FindNextFileW.
	ReadDir(path string) ([]dirEntry, error)
	// ReadReparsePoint returns the REPARSE_DATA_BUFFER of path:
	// FSCTL_GET_REPARSE_POINT on a handle opened with
	// FILE_FLAG_OPEN_REPARSE_POINT.
	ReadReparsePoint(path string) ([]byte, error)
	// VolumeNameForMountPoint returns the \\?\Volume{GUID}\ mounted at
	// the folder path: GetVolumeNameForVolumeMountPointW(path\).
	VolumeNameForMountPoint(path string) (string, error)
	// DeleteVolumeMountPoint unmounts the volume mounted at the folder
	// path, leaving an empty directory: DeleteVolumeMountPointW(path\).
	DeleteVolumeMountPoint(path string) error
	// RemoveDirectory removes an empty directory, or a directory link or
	// mounted folder itself: RemoveDirectoryW.
	RemoveDirectory(path string) error
	// DeleteFile removes a file or a file symlink: DeleteFileW.
	DeleteFile(path string) error
	// SetAttributes sets the FILE_ATTRIBUTE_* bits: SetFileAttributesW.
	SetAttributes(path string, attrs uint32) error
	// CreateDirectory creates one directory: CreateDirectoryW.
	CreateDirectory(path string) error
	// CreateSymlink creates a symbolic link at link whose stored target is
	// target: CreateSymbolicLinkW(link, target, flags).
	CreateSymlink(link, target string, flags uint32) error
}
