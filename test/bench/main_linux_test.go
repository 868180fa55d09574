//go:build linux

package bench

import (
	"os"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

// TestMain removes the daemon BenchmarkStageFlowRatio built.
func TestMain(m *testing.M) {
	code := m.Run()
	linuxnode.RemoveDaemonBinary()
	os.Exit(code)
}
