package transport

import (
	"strings"
	"testing"
)

// TestDefaultPipeSDDLDeniesNetworkLogons: the default descriptor is
// protected, its first entry denies all access to network logons (NU), so
// no allow entry after it can admit one, and it allows only
// Administrators and LocalSystem.
func TestDefaultPipeSDDLDeniesNetworkLogons(t *testing.T) {
	dacl, ok := strings.CutPrefix(DefaultPipeSDDL, "D:P(")
	if !ok {
		t.Fatalf("%s: want a protected DACL", DefaultPipeSDDL)
	}
	aces := strings.Split(strings.TrimSuffix(dacl, ")"), ")(")
	if len(aces) == 0 || aces[0] != "D;;GA;;;NU" {
		t.Errorf("%s: first entry %q, want the deny of network logons D;;GA;;;NU", DefaultPipeSDDL, aces[0])
	}
	for _, ace := range aces[1:] {
		f := strings.Split(ace, ";")
		if len(f) != 6 || f[0] != "A" || (f[5] != "BA" && f[5] != "SY") {
			t.Errorf("%s: entry %q allows someone other than Administrators and LocalSystem", DefaultPipeSDDL, ace)
		}
	}
}
