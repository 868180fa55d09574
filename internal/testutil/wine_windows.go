package testutil

import (
	"testing"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
)

// UnderWine tells whether the test binary runs under Wine rather than on
// Windows: ntdll exports wine_get_version there, and Wine keeps its
// settings under HKCU\Software\Wine. Either signal is enough.
func UnderWine() bool {
	if windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil {
		return true
	}
	k, err := registry.OpenKey(registry.CURRENT_USER, `Software\Wine`, registry.QUERY_VALUE)
	if err != nil {
		return false
	}
	_ = k.Close() // opened only to see that it exists
	return true
}

// RequireRealWindows skips t under Wine, saying why (what Wine lacks or
// only pretends to provide for this test): Wine answers many of the calls
// the Windows backend makes with stubs or made-up data
// (windows-under-wine.md §4, §7), and a test that passed on a stub would
// test nothing. A skip is never counted as passing.
func RequireRealWindows(t testing.TB, why string) {
	t.Helper()
	if UnderWine() {
		t.Skip("needs real Windows, not Wine: " + why)
	}
}
