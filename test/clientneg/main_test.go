package clientneg

import (
	"flag"
	"fmt"
	"io"
	"os"
	"testing"

	"k8s.io/klog/v2"
)

var showLog = flag.Bool("clientneg.klog", false, "print the daemon's klog output (every failed call is logged)")

// TestMain keeps the daemon's call log out of the test output unless asked:
// the tests make calls that fail on purpose, and each is logged.
func TestMain(m *testing.M) {
	flag.Parse()
	var klogFlags flag.FlagSet
	klog.InitFlags(&klogFlags)
	for k, v := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL"} {
		if err := klogFlags.Set(k, v); err != nil {
			fmt.Fprintln(os.Stderr, "klog flags:", err)
			os.Exit(2)
		}
	}
	out := io.Discard
	if *showLog {
		out = os.Stderr
	}
	klog.SetOutput(out)
	code := m.Run()
	klog.Flush()
	os.Exit(code)
}
