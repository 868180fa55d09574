//go:build !unix

package audit

import "os"

// fileSystemFree cannot tell on this system: no space is kept back for
// the records of changes (see Options.Reserve).
func fileSystemFree(*os.File) (int64, bool) { return 0, false }
