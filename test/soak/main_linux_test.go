//go:build linux

package soak

import (
	"os"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

// TestMain removes the daemon binary the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	linuxnode.RemoveDaemonBinary()
	os.Exit(code)
}
