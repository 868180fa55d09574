package smbmap

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/files"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// TestListMappingsFakeWMIConstructedRows lists MSFT_SmbGlobalMapping rows
// constructed as WMI delivers them (Status as a VT_I4 int64, RemotePath in
// the case it was mapped with) through the WMI seam: one query with no
// WHERE, every status named, a value outside the enumeration Unknown, and
// no creation time (Windows records none).
func TestListMappingsFakeWMIConstructedRows(t *testing.T) {
	f := &fakeWMI{rows: []wmi.Props{
		{"RemotePath": `\\SRV\Share`, "Status": int64(0)},
		{"RemotePath": `\\srv\gone`, "Status": int64(2)},
		{"RemotePath": `\\nas2\x`, "Status": int64(6)},
		{"RemotePath": `\\nas2\y`, "Status": int64(42)},
	}}
	e := newEnv(DefaultConfig())
	e.h.mappings = wmiMappings{c: f}
	got, err := e.h.ListSmbGlobalMappings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []smbmappings.Mapping{
		{Share: `\\SRV\Share`, Status: smbmappings.StatusOK},
		{Share: `\\srv\gone`, Status: smbmappings.StatusDisconnected},
		{Share: `\\nas2\x`, Status: smbmappings.StatusUnavailable},
		{Share: `\\nas2\y`, Status: smbmappings.StatusUnknown},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ListSmbGlobalMappings = %+v\nwant %+v", got, want)
	}
	if want := []string{`Query SELECT RemotePath, Status FROM MSFT_SmbGlobalMapping`}; !reflect.DeepEqual(f.calls, want) {
		t.Errorf("WMI calls %q, want %q", f.calls, want)
	}

	// A row without Status is an error, not an OK mapping.
	f.rows = []wmi.Props{{"RemotePath": `\\srv\share`}}
	if _, err := e.h.ListSmbGlobalMappings(context.Background()); err == nil {
		t.Error("a row without Status was accepted")
	}
}

// TestListMappingsFakeWMIQueryFails: a failing WMI query keeps its kind
// (no SMB WMI provider is Unimplemented).
func TestListMappingsFakeWMIQueryFails(t *testing.T) {
	e := newEnv(DefaultConfig())
	e.h.mappings = wmiMappings{c: failingQuery{&fakeWMI{}}}
	_, err := e.h.ListSmbGlobalMappings(context.Background())
	if !errors.Is(err, errdefs.ErrUnimplemented) {
		t.Errorf("error %v, want Unimplemented", err)
	}
}

type failingQuery struct{ *fakeWMI }

func (failingQuery) Query(context.Context, *wmi.WQL) ([]wmi.Props, error) {
	return nil, errdefs.Errorf(errdefs.ErrUnimplemented, "the SMB WMI provider is not installed")
}

// TestListLinksThroughFilesSeam: the backend hands the working
// directories to the filesystem walk and reports what it found as is.
func TestListLinksThroughFilesSeam(t *testing.T) {
	e := newEnv(DefaultConfig())
	e.l.found = []files.FoundLink{{Path: `C:\k\pv`, Target: `\\srv\share\pv\`}}
	got, err := e.h.ListSmbLinks(context.Background(), []string{`C:\k`})
	if err != nil {
		t.Fatal(err)
	}
	if want := []smbmappings.Link{{Path: `C:\k\pv`, Target: `\\srv\share\pv\`}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ListSmbLinks = %+v, want %+v", got, want)
	}
	if want := []string{`ListLinks ["C:\\k"]`}; !reflect.DeepEqual(e.l.calls, want) {
		t.Errorf("calls %q, want %q", e.l.calls, want)
	}
}
