package blockdev

import (
	"reflect"
	"testing"
)

// TestParseKernelFiles: the capability set and the swap devices are read
// from /proc/self/status and /proc/swaps.
func TestParseKernelFiles(t *testing.T) {
	caps, err := parseCapEff([]byte("Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t000001fffeffffff\n"))
	if err != nil || caps&(1<<capSysResource) != 0 || caps&(1<<21) == 0 {
		t.Errorf("parseCapEff = %x %v (this machine: everything but CAP_SYS_RESOURCE)", caps, err)
	}
	if _, err := parseCapEff([]byte("Name: x\n")); err == nil {
		t.Error("parseCapEff without CapEff succeeded")
	}
	swaps := parseSwaps([]byte("Filename\tType\tSize\tUsed\tPriority\n/dev/vdb2 partition 1048572 0 -2\n/swap\\040file file 1024 0 -3\n"))
	if !reflect.DeepEqual(swaps, []string{"/dev/vdb2", "/swap file"}) {
		t.Errorf("parseSwaps = %q", swaps)
	}
}
