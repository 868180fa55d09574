//go:build linux

package blocktopo

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// sysObject names the sysfs object of a disk directory: its device and
// inode. The kernel creates a new object (with a new kernfs inode) each
// time a disk is attached, so without diskseq this tells a re-attached sdb
// from the one before it; "" when it cannot be read.
func sysObject(dir string) string {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return ""
	}
	return fmt.Sprintf("%d/%d", st.Dev, st.Ino)
}
