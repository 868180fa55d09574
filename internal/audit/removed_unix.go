//go:build unix

package audit

import (
	"os"
	"syscall"
)

// removed tells whether the open file fi describes has no name left: it
// was deleted, so whatever is written to it is lost to every reader.
func removed(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 0
}
