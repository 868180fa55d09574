//go:build unix

package audit

import (
	"os"

	"golang.org/x/sys/unix"
)

// fileSystemFree returns the bytes an unprivileged writer may still use on
// f's file system (statfs's f_bavail), or ok false when it cannot tell.
func fileSystemFree(f *os.File) (int64, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	var st unix.Statfs_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Fstatfs(int(fd), &st) }); err != nil || serr != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true //nolint:unconvert // Bsize is int64 on Linux, uint32 on the BSDs
}
