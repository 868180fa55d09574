//go:build windows

package services

import (
	"context"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

// TestRealGetService reads a service every Windows runs, without changing
// it. Starting and stopping a service is in the manual test plan.
func TestRealGetService(t *testing.T) {
	testutil.RequireRealWindows(t, "Wine fakes services, firmware tables and WMI")
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	info, err := h.GetService(context.Background(), "EventLog")
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != system.StatusRunning || info.DisplayName == "" {
		t.Errorf("EventLog: %+v", info)
	}
	if _, err := h.GetService(context.Background(), "csi-node-proxy-no-such-service"); err == nil {
		t.Error("a made-up service exists")
	}
}

// TestRealBIOSSerialMatchesWMI checks the SMBIOS type 1 reading against
// what upstream returned, Win32_BIOS.SerialNumber: the equivalence the
// fact sheet infers but could not confirm.
func TestRealBIOSSerialMatchesWMI(t *testing.T) {
	testutil.RequireRealWindows(t, "Wine fakes services, firmware tables and WMI")
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := h.BIOSSerialNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := wmi.NewClient(wmi.CIMv2Namespace).Query(ctx, wmi.Query("Win32_BIOS").Select("SerialNumber"))
	if err != nil || len(rows) == 0 {
		t.Skipf("Win32_BIOS unavailable (%v): cannot compare", err)
	}
	want, err := rows[0].String("SerialNumber")
	if err != nil {
		t.Fatal(err)
	}
	if got != strings.TrimSpace(want) {
		t.Errorf("SMBIOS type 1 serial %q, Win32_BIOS.SerialNumber %q", got, want)
	}
}
