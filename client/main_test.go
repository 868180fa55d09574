package client_test

import (
	"flag"
	"fmt"
	"io"
	"os"
	"testing"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/klogcapture"
)

var showLog = flag.Bool("client.klog", false, "print the daemon's klog output (every failed call is logged)")

// TestMain keeps the daemon's call log out of the test output unless asked:
// the tests make calls that fail on purpose, and each is logged.
func TestMain(m *testing.M) {
	flag.Parse()
	out := io.Discard
	if *showLog {
		out = os.Stderr
	}
	if err := klogcapture.Redirect(out, 0); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	klog.Flush()
	os.Exit(code)
}
