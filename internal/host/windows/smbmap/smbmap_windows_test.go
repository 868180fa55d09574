//go:build windows

package smbmap

import (
	"context"
	"testing"

	"golang.org/x/sys/windows/registry"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// requireRealWindows skips under Wine, which has no
// Root\Microsoft\Windows\Smb namespace (WBEM_E_INVALID_NAMESPACE): a run
// there tests nothing and is not counted as passing.
func requireRealWindows(t *testing.T) {
	t.Helper()
	if k, err := registry.OpenKey(registry.CURRENT_USER, `Software\Wine`, registry.QUERY_VALUE); err == nil {
		k.Close()
		t.Skip("running under Wine (HKCU\\Software\\Wine exists): Wine has no SMB WMI provider, so this test needs real Windows and is not counted as passing")
	}
}

// TestRealQueryOfUnmappedShare reads MSFT_SmbGlobalMapping through real
// WMI for a share nobody maps: it must report "no mapping", not an error.
// It changes nothing on the host. Mapping a real share is in the manual
// test plan (docs/windows-files-smb-iscsi-system.md).
func TestRealQueryOfUnmappedShare(t *testing.T) {
	requireRealWindows(t)
	w := wmiMappings{c: wmi.NewClient(wmi.SMBNamespace)}
	_, ok, err := w.Get(context.Background(), `\\csi-node-proxy-test.invalid\none`)
	if err != nil {
		t.Fatalf("query: %v (needs an elevated process on Windows Server 1709 or later)", err)
	}
	if ok {
		t.Error("a mapping of a made-up share exists")
	}
}
