//go:build windows

package iscsiinit

import (
	"context"
	"errors"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

// TestRealReadOnlyCalls lists portals and sessions through the real
// iscsidsc.dll, which exercises the buffer loops and parsers against
// Windows' own layouts, without changing anything. Logging in to a target
// is in the manual test plan.
func TestRealReadOnlyCalls(t *testing.T) {
	testutil.RequireRealWindows(t, "Wine has no iSCSI initiator")
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
