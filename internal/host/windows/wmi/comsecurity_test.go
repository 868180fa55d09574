package wmi

import "testing"

// TestCOMSecurityEnv: the values upstream's WMI_COM_SECURITY accepts turn
// COM security off, any case and with spaces; anything else leaves it on.
func TestCOMSecurityEnv(t *testing.T) {
	for v, off := range map[string]bool{
		"0": true, "false": true, "no": true, "off": true, " OFF ": true, "False": true,
		"": false, "1": false, "true": false, "yes": false, "on": false, "disable": false,
	} {
		t.Setenv(EnvCOMSecurity, v)
		if got := !COMSecurityWanted(); got != off {
			t.Errorf("%s=%q: off %v, want %v", EnvCOMSecurity, v, got, off)
		}
	}
}

// TestSkipCOMSecurity: SkipCOMSecurity turns it off whatever the
// environment says. (It stays off for the process: this test restores
// the flag for the others.)
func TestSkipCOMSecurity(t *testing.T) {
	t.Cleanup(func() { skipCOMSecurity.Store(false) })
	t.Setenv(EnvCOMSecurity, "1")
	if !COMSecurityWanted() {
		t.Fatal("off before SkipCOMSecurity")
	}
	SkipCOMSecurity()
	if COMSecurityWanted() {
		t.Fatal("still on after SkipCOMSecurity")
	}
}
