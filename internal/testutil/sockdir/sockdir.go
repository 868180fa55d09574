// Package sockdir makes directories for unix sockets in tests. A socket's
// path must fit in sun_path (108 bytes on Linux, 104 on the BSDs), and
// t.TempDir's paths, which carry the test's name, can be longer; so the
// directory is made directly under the system's temporary directory with
// a short prefix.
package sockdir

import (
	"os"
	"testing"
)

// MaxPath is the longest unix socket path Linux accepts (sun_path is 108
// bytes including the terminating NUL).
const MaxPath = 107

// New returns a fresh, short directory for sockets, named after prefix
// (keep it to a few letters), removed when the test ends.
func New(tb testing.TB, prefix string) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
