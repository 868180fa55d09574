//go:build !unix

package audit

import "os"

// removed tells whether the open file fi describes has no name left. An
// open file cannot be deleted on Windows (the daemon opens it without
// FILE_SHARE_DELETE), so it never is.
func removed(os.FileInfo) bool { return false }
