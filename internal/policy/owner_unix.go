//go:build unix

package policy

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkOwner refuses a policy file that someone other than root (or the
// daemon's own user) could change: such a file would let that someone
// grant themselves anything. The directories above it should be as
// tightly held; that is the operator's part (docs/security.md).
func checkOwner(fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("cannot read the owner of the file")
	}
	if st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("owned by uid %d; the policy must be owned by root or the daemon's user", st.Uid)
	}
	mode := fi.Mode().Perm()
	if mode&0o002 != 0 {
		return fmt.Errorf("mode %#o lets every user change the policy", mode)
	}
	if mode&0o020 != 0 && st.Gid != 0 {
		return fmt.Errorf("mode %#o lets group %d change the policy", mode, st.Gid)
	}
	return nil
}
