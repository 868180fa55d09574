//go:build linux

package bench

import (
	"os"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

// TestMain removes the daemon the benchmarks built. Run with
// bareServerEnv set, this binary is instead the baseline server of the
// separate-process benchmarks.
func TestMain(m *testing.M) {
	if sock := os.Getenv(bareServerEnv); sock != "" {
		serveBareAndExit(sock)
	}
	code := m.Run()
	linuxnode.RemoveDaemonBinary()
	os.Exit(code)
}
