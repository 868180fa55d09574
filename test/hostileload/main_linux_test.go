//go:build linux

package hostileload

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
)

// TestMain runs the tests, or, in the flooder's process (floodEnv set),
// the flood.
func TestMain(m *testing.M) {
	if dir := os.Getenv(floodEnv); dir != "" {
		d, err := time.ParseDuration(os.Getenv(floodDurationEnv))
		if err == nil {
			err = flood(dir, d)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "flood:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(daemonbin.Main(m))
}
