package sockdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShortAndRemoved: the directory leaves room for a socket name under
// MaxPath whatever the test's name, and is gone when the test ends.
func TestShortAndRemoved(t *testing.T) {
	var dir string
	t.Run(strings.Repeat("a-long-subtest-name-", 5), func(t *testing.T) {
		dir = New(t, "sd")
		if n := len(filepath.Join(dir, "csi-proxy-filesystem-v2alpha1.sock")); n > MaxPath {
			t.Errorf("a socket path in %s is %d bytes, over %d", dir, n, MaxPath)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Fatalf("stat %s: %v", dir, err)
		}
	})
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s after the test: %v", dir, err)
	}
}
