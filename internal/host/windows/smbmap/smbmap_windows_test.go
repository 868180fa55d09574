//go:build windows

package smbmap

import (
	"context"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

// TestRealQueryOfUnmappedShare reads MSFT_SmbGlobalMapping through real
// WMI for a share nobody maps: it must report "no mapping", not an error.
// It changes nothing on the host. Mapping a real share is in the manual
// test plan (docs/windows-files-smb-iscsi-system.md).
func TestRealQueryOfUnmappedShare(t *testing.T) {
	testutil.RequireRealWindows(t, "Wine has no SMB WMI provider")
	w := wmiMappings{c: wmi.NewClient(wmi.SMBNamespace)}
	_, ok, err := w.Get(context.Background(), `\\csi-node-proxy-test.invalid\none`)
	if err != nil {
		t.Fatalf("query: %v (needs an elevated process on Windows Server 1709 or later)", err)
	}
	if ok {
		t.Error("a mapping of a made-up share exists")
	}
}
