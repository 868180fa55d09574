package nodeplugin

import (
	"os"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
)

// TestMain removes the daemon binary the tests built once (daemonbin).
func TestMain(m *testing.M) { os.Exit(daemonbin.Main(m)) }
