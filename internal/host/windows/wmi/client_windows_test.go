//go:build windows

package wmi

import (
	"context"
	"errors"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

// TestClientQueryCIMv2 exercises the COM plumbing (locator, ConnectServer,
// ExecQuery, enumeration, Properties_.Item(name).Value). Wine implements
// Win32_OperatingSystem, so this one also runs there.
func TestClientQueryCIMv2(t *testing.T) {
	rows, err := NewClient(CIMv2Namespace).Query(context.Background(), Query("Win32_OperatingSystem").Select("Caption", "Version"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d Win32_OperatingSystem rows, want 1", len(rows))
	}
	for _, p := range []string{"Caption", "Version"} {
		if s, err := rows[0].String(p); err != nil || s == "" {
			t.Errorf("%s = %q, %v", p, s, err)
		}
	}
	t.Logf("running on %v", rows[0])
}

// TestClientQueryAllProperties reads every property by enumerating
// Properties_ (a SELECT * without a Select list).
func TestClientQueryAllProperties(t *testing.T) {
	testutil.RequireRealWindows(t, "Wine's SWbemPropertySet has no _NewEnum (E_NOTIMPL)")
	rows, err := NewClient(CIMv2Namespace).Query(context.Background(), Query("Win32_OperatingSystem"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !rows[0].Has("Caption") || len(rows[0]) < 5 {
		t.Fatalf("rows = %v", rows)
	}
}

// TestClientCallStaticWithInParameters exercises ExecMethod_ with a
// spawned InParameters object and out-parameters, on the read-only
// StdRegProv.GetStringValue.
func TestClientCallStaticWithInParameters(t *testing.T) {
	testutil.RequireRealWindows(t, "Wine's SWbemObject has no SpawnInstance_ (E_NOTIMPL)")
	out, err := NewClient(CIMv2Namespace).CallStatic(context.Background(), "StdRegProv", "GetStringValue",
		Arg("hDefKey", uint32(0x80000002)), // HKEY_LOCAL_MACHINE
		Arg("sSubKeyName", `SOFTWARE\Microsoft\Windows NT\CurrentVersion`),
		Arg("sValueName", "CurrentVersion"))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := out.String("sValue"); err != nil || v == "" {
		t.Errorf("sValue = %q, %v (out = %v)", v, err, out)
	}
}

// TestClientCallNoMatch checks that Call refuses to run anything when the
// query matches no instance.
func TestClientCallNoMatch(t *testing.T) {
	_, err := NewClient(CIMv2Namespace).Call(context.Background(),
		Query("Win32_OperatingSystem").Where("Caption", "csi-node-proxy: no such operating system"), "Win32ShutdownTracker")
	if !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("Call = %v, want not found", err)
	}
}

func TestClientCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewClient(CIMv2Namespace).Query(ctx, Query("Win32_OperatingSystem")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Query = %v, want context.Canceled", err)
	}
}

// TestClientStorageNamespace reads MSFT_Disk and calls the static,
// read-only MSFT_StorageSetting.Get on real Windows (administrator).
func TestClientStorageNamespace(t *testing.T) {
	testutil.RequireRealWindows(t, "Wine fakes the Storage Management API (0 rows for every MSFT_ class)")
	c := NewClient(StorageNamespace)
	rows, err := c.Query(context.Background(), Query("MSFT_Disk").Select("Number", "Size", "IsOffline", "PartitionStyle"))
	if errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Skipf("needs an elevated (administrator) token: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("no MSFT_Disk rows on real Windows")
	}
	for _, r := range rows {
		n, err1 := r.Uint32("Number")
		size, err2 := r.Uint64("Size")
		off, err3 := r.Bool("IsOffline")
		style, err4 := r.Uint16("PartitionStyle")
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			t.Errorf("row %v: %v", r, err)
		}
		t.Logf("disk %d: %d bytes, offline %v, style %d", n, size, off, style)
	}
	out, err := c.CallStatic(context.Background(), "MSFT_StorageSetting", "Get")
	if err != nil {
		t.Fatal(err)
	}
	if !out.Has("ReturnValue") {
		t.Errorf("MSFT_StorageSetting.Get out-parameters lack ReturnValue: %v", out)
	}
}

// TestClientBadNamespace checks that a WBEM status raised as an exception
// (DISP_E_EXCEPTION + EXCEPINFO.scode) keeps its kind. Wine raises the same
// WBEM_E_INVALID_NAMESPACE, so it runs there too.
func TestClientBadNamespace(t *testing.T) {
	_, err := NewClient(`Root\csi-node-proxy-no-such-namespace`).Query(context.Background(), Query("Anything"))
	if !errors.Is(err, errdefs.ErrUnimplemented) {
		t.Fatalf("Query = %v, want an unimplemented error (WBEM_E_INVALID_NAMESPACE)", err)
	}
}
