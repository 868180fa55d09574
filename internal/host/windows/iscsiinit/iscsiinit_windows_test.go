//go:build windows

package iscsiinit

import (
	"context"
	"errors"
	"testing"

	"golang.org/x/sys/windows/registry"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// requireRealWindows skips under Wine, which has no iSCSI initiator: a run
// there tests nothing and is not counted as passing.
func requireRealWindows(t *testing.T) {
	t.Helper()
	if k, err := registry.OpenKey(registry.CURRENT_USER, `Software\Wine`, registry.QUERY_VALUE); err == nil {
		k.Close()
		t.Skip("running under Wine (HKCU\\Software\\Wine exists): Wine has no iSCSI initiator, so this test needs real Windows and is not counted as passing")
	}
}

// TestRealReadOnlyCalls lists portals and sessions through the real
// iscsidsc.dll, which exercises the buffer loops and parsers against
// Windows' own layouts, without changing anything. Logging in to a target
// is in the manual test plan.
func TestRealReadOnlyCalls(t *testing.T) {
	requireRealWindows(t)
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.ListTargetPortals(context.Background()); err != nil {
		if errors.Is(err, errdefs.ErrFailedPrecondition) {
			t.Skipf("the Microsoft iSCSI Initiator Service is not running: %v", err)
		}
		t.Fatal(err)
	}
	if _, err := h.sessionsOf("iqn.2026-01.invalid.csi-node-proxy:none"); err != nil {
		t.Fatal(err)
	}
}
