package wmi

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// row is an MSFT_Disk/MSFT_Partition row as decode (client_windows.go)
// hands it over: VT_I4 for uint16/uint32, decimal strings for uint64,
// VT_BOOL as bool, VT_NULL as nil.
var row = Props{
	"Number":          int64(3),
	"PartitionStyle":  int64(2),
	"Size":            "1099511627776", // uint64 through automation: VT_BSTR
	"IsOffline":       false,
	"IsReadOnly":      int64(-1), // a VARIANT_BOOL read as an integer
	"Signature":       int64(-1), // uint32 0xFFFFFFFF arrives as VT_I4 -1
	"Location":        "PCI Slot 3 : Adapter 0 : Port 0 : Target 1 : LUN 0",
	"SerialNumber":    nil,
	"AccessPaths":     []string{`C:\mnt\a\`, `\\?\Volume{1}\`},
	"MixedArray":      []any{"a", int64(1)},
	"StringArray":     []any{"a", "b"},
	"DriveLetter":     int64('E'),
	"DriveLetterText": "F",
	"NoLetter":        nil,
	"Huge":            int64(math.MaxUint32) + 1,
	"Negative64":      "-1",
	"Float":           1.5,
}

func TestPropsIntegers(t *testing.T) {
	if n, err := row.Uint32("Number"); err != nil || n != 3 {
		t.Errorf("Uint32(Number) = %d, %v", n, err)
	}
	if n, err := row.Uint32("Signature"); err != nil || n != 0xFFFFFFFF {
		t.Errorf("Uint32(Signature) = %#x, %v; the VT_I4 mask was not applied", n, err)
	}
	if n, err := row.Uint16("PartitionStyle"); err != nil || n != 2 {
		t.Errorf("Uint16(PartitionStyle) = %d, %v", n, err)
	}
	if n, err := row.Uint64("Size"); err != nil || n != 1<<40 {
		t.Errorf("Uint64(Size) = %d, %v", n, err)
	}
	if n, err := row.Uint64("Number"); err != nil || n != 3 {
		t.Errorf("Uint64(Number) = %d, %v", n, err)
	}
	for _, bad := range []func() error{
		func() error { _, err := row.Uint32("Huge"); return err },
		func() error { _, err := row.Uint32("Size"); return err }, // 2^40 does not fit
		func() error { _, err := row.Uint16("Signature"); return err },
		func() error { _, err := row.Uint64("Negative64"); return err },
		func() error { _, err := row.Uint32("SerialNumber"); return err },
		func() error { _, err := row.Uint32("Missing"); return err },
		func() error { _, err := row.Uint32("Location"); return err },
		func() error { _, err := row.Uint64("Float"); return err },
		func() error { _, err := row.Uint64("IsOffline"); return err },
	} {
		if bad() == nil {
			t.Error("a bad integer read succeeded")
		}
	}
}

func TestPropsCaseInsensitive(t *testing.T) {
	if n, err := row.Uint32("NUMBER"); err != nil || n != 3 {
		t.Errorf("Uint32(NUMBER) = %d, %v", n, err)
	}
	if !row.Has("location") || row.Has("nope") {
		t.Error("Has is wrong")
	}
	if !row.IsNull("SerialNumber") || !row.IsNull("nope") || row.IsNull("Number") {
		t.Error("IsNull is wrong")
	}
}

func TestPropsStringsAndBools(t *testing.T) {
	if s, err := row.String("Location"); err != nil || s == "" {
		t.Errorf("String(Location) = %q, %v", s, err)
	}
	if s, err := row.String("SerialNumber"); err != nil || s != "" {
		t.Errorf("String(NULL) = %q, %v; want empty", s, err)
	}
	if _, err := row.String("Number"); err == nil {
		t.Error("String of an integer succeeded")
	}
	if _, err := row.String("Missing"); err == nil {
		t.Error("String of a missing property succeeded")
	}
	if b, err := row.Bool("IsOffline"); err != nil || b {
		t.Errorf("Bool(IsOffline) = %v, %v", b, err)
	}
	if b, err := row.Bool("IsReadOnly"); err != nil || !b {
		t.Errorf("Bool(IsReadOnly) = %v, %v", b, err)
	}
	if _, err := row.Bool("SerialNumber"); err == nil {
		t.Error("Bool of NULL succeeded")
	}
	if _, err := row.Bool("Location"); err == nil {
		t.Error("Bool of a string succeeded")
	}
	if a, err := row.Strings("AccessPaths"); err != nil || !slices.Equal(a, []string{`C:\mnt\a\`, `\\?\Volume{1}\`}) {
		t.Errorf("Strings(AccessPaths) = %q, %v", a, err)
	}
	if a, err := row.Strings("StringArray"); err != nil || !slices.Equal(a, []string{"a", "b"}) {
		t.Errorf("Strings(StringArray) = %q, %v", a, err)
	}
	if a, err := row.Strings("SerialNumber"); err != nil || a != nil {
		t.Errorf("Strings(NULL) = %q, %v", a, err)
	}
	for _, name := range []string{"MixedArray", "Number", "Missing"} {
		if _, err := row.Strings(name); err == nil {
			t.Errorf("Strings(%s) succeeded", name)
		}
	}
}

func TestPropsChar16(t *testing.T) {
	for name, want := range map[string]rune{"DriveLetter": 'E', "DriveLetterText": 'F', "NoLetter": 0} {
		if r, err := row.Char16(name); err != nil || r != want {
			t.Errorf("Char16(%s) = %q, %v; want %q", name, r, err, want)
		}
	}
	for _, name := range []string{"Location", "Huge", "Missing", "IsOffline"} {
		if _, err := row.Char16(name); err == nil {
			t.Errorf("Char16(%s) succeeded", name)
		}
	}
}

func TestEncode(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want any
		set  bool
	}{
		{nil, nil, false},
		{"NTFS", "NTFS", true},
		{true, true, true},
		{[]string{"a"}, []string{"a"}, true},
		{uint16(2), int32(2), true}, // PartitionStyle: UInt16 → VT_I4
		{uint8(7), int32(7), true},
		{int8(-1), int32(-1), true},
		{int16(-2), int32(-2), true},
		{int32(5), int32(5), true},
		{5, int32(5), true},
		{uint(5), int32(5), true},
		{uint32(math.MaxInt32), int32(math.MaxInt32), true},
		{uint32(math.MaxInt32 + 1), int32(math.MinInt32), true},
		{uint32(0x80000002), int32(-2147483646), true}, // HKEY_LOCAL_MACHINE, as VBScript passes it
		{uint(math.MaxInt32 + 1), "2147483648", true},
		{int64(1) << 40, "1099511627776", true},
		{int64(-3), int32(-3), true},
		{int(-1) << 40, "-1099511627776", true},
		{uint64(10737418240), "10737418240", true}, // MSFT_Partition.Resize Size: UInt64 → decimal string
		{uint64(1), "1", true},
	} {
		got, ok, err := Encode(tc.in)
		if err != nil || ok != tc.set {
			t.Errorf("Encode(%#v) = %#v, %v, %v", tc.in, got, ok, err)
			continue
		}
		switch w := tc.want.(type) {
		case []string:
			if g, _ := got.([]string); !slices.Equal(g, w) {
				t.Errorf("Encode(%#v) = %#v", tc.in, got)
			}
		default:
			if got != tc.want {
				t.Errorf("Encode(%#v) = %#v (%T), want %#v (%T)", tc.in, got, got, tc.want, tc.want)
			}
		}
	}
	for _, bad := range []any{1.5, struct{}{}, []int{1}, map[string]string{}} {
		if _, _, err := Encode(bad); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("Encode(%#v) error = %v", bad, err)
		}
	}
}

func TestArg(t *testing.T) {
	a := Arg("UseMaximumSize", true)
	if a.Name() != "UseMaximumSize" || a.Value() != true || a.String() != "UseMaximumSize=true" {
		t.Errorf("Arg = %s (%q, %v)", a, a.Name(), a.Value())
	}
}
