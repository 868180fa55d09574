//go:build windows

package wmi

import (
	"context"
	"testing"
)

// TestWMICOMSecurityOffSkipsCoInitializeSecurity: with WMI_COM_SECURITY=off
// a WMI call never calls CoInitializeSecurity (counted through the seam,
// not the real COM, whose process-wide state a test cannot reset); left
// on, the first call makes it once. Runs under Wine too (it implements
// Win32_OperatingSystem).
func TestWMICOMSecurityOffSkipsCoInitializeSecurity(t *testing.T) {
	calls := 0
	real := coInitializeSecurity
	t.Cleanup(func() {
		coInitializeSecurity = real
		security.Lock()
		security.done = false
		security.Unlock()
	})
	coInitializeSecurity = func(int32, uint32, uint32, uint32) error { calls++; return nil }
	security.Lock()
	security.done = false
	security.Unlock()
	query := func() {
		t.Helper()
		if _, err := NewClient(CIMv2Namespace).Query(context.Background(), Query("Win32_OperatingSystem").Select("Caption")); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(EnvCOMSecurity, "off")
	query()
	if calls != 0 {
		t.Fatalf("WMI_COM_SECURITY=off: CoInitializeSecurity called %d times", calls)
	}
	t.Setenv(EnvCOMSecurity, "")
	query()
	query()
	if calls != 1 {
		t.Fatalf("COM security on: CoInitializeSecurity called %d times, want once", calls)
	}
}
