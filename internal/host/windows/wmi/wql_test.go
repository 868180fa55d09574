package wmi

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

func TestQueryBuild(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    *WQL
		want string
	}{
		{"brief example", Query("MSFT_Disk").Where("Number", 3), "SELECT * FROM MSFT_Disk WHERE Number = 3"},
		{"no condition", Query("MSFT_StorageSetting"), "SELECT * FROM MSFT_StorageSetting"},
		{"select and two conditions",
			Query("MSFT_Partition").Select("DiskNumber", "PartitionNumber", "Size").Where("DiskNumber", uint32(2)).Where("PartitionNumber", uint32(1)),
			"SELECT DiskNumber, PartitionNumber, Size FROM MSFT_Partition WHERE DiskNumber = 2 AND PartitionNumber = 1"},
		{"not equal with braced GUID",
			Query("MSFT_Partition").Where("DiskNumber", 1).WhereNot("GptType", "{e3c9e316-0b5c-4db8-817d-f92df00215ae}"),
			"SELECT * FROM MSFT_Partition WHERE DiskNumber = 1 AND GptType <> '{e3c9e316-0b5c-4db8-817d-f92df00215ae}'"},
		{"volume ID escaping (fact sheet §B5)",
			Query("MSFT_Volume").Where("UniqueId", `\\?\Volume{0c8a1d6e-5b2a-4a8e-9c1e-1d2f3a4b5c6d}\`),
			`SELECT * FROM MSFT_Volume WHERE UniqueId = '\\\\?\\Volume{0c8a1d6e-5b2a-4a8e-9c1e-1d2f3a4b5c6d}\\'`},
		{"bool", Query("MSFT_Disk").Where("IsOffline", true), "SELECT * FROM MSFT_Disk WHERE IsOffline = TRUE"},
		{"char16 compared as a string", Query("MSFT_Partition").Where("DriveLetter", "C"), "SELECT * FROM MSFT_Partition WHERE DriveLetter = 'C'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.q.Build()
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Build() = %s\nwant      %s", got, tc.want)
			}
			if tc.q.String() != tc.want {
				t.Errorf("String() = %s", tc.q.String())
			}
		})
	}
}

func TestQueryRefusesBadNames(t *testing.T) {
	for _, q := range []*WQL{
		Query("MSFT_Disk WHERE 1=1"),
		Query(""),
		Query("MSFT_Disk").Select("Number, Path"),
		Query("MSFT_Disk").Where("Number = 1 OR Number", 2),
		Query("MSFT_Disk").Where("1Number", 2),
		Query("MSFT_Disk").Where("Number", 1.5),
		Query("MSFT_Disk").Where("Path", "a\x00b"),
		Query("MSFT_Disk").Where("Path", "line\nbreak"),
		Query("MSFT_Disk").Where("Path", string([]byte{0xff, 0xfe})),
	} {
		s, err := q.Build()
		if !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("Build() = %q, %v; want an invalid-argument error", s, err)
		}
		if !strings.HasPrefix(q.String(), "<invalid WQL: ") {
			t.Errorf("String() = %q", q.String())
		}
	}
}

func TestLiteral(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{"plain", `'plain'`},
		{``, `''`},
		{`back\slash`, `'back\\slash'`},
		{`it's`, `'it\'s'`},
		{`say "hi"`, `'say \"hi\"'`},
		// Backslash is escaped before the quote, so \' cannot turn into an
		// escaped backslash followed by a closing quote.
		{`\'`, `'\\\''`},
		{`' OR Number <> '`, `'\' OR Number <> \''`},
		{`\\?\Volume{x}\`, `'\\\\?\\Volume{x}\\'`},
		{"Ünïcødé", `'Ünïcødé'`},
		{true, "TRUE"},
		{false, "FALSE"},
		{0, "0"},
		{-7, "-7"},
		{int8(-8), "-8"},
		{int16(-16), "-16"},
		{int32(math.MinInt32), "-2147483648"},
		{int64(math.MinInt64), "-9223372036854775808"},
		{uint(1), "1"},
		{uint8(255), "255"},
		{uint16(65535), "65535"},
		{uint32(math.MaxUint32), "4294967295"},
		{uint64(math.MaxUint64), "18446744073709551615"},
	} {
		got, err := Literal(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Literal(%#v) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []any{nil, 1.0, []string{"a"}, struct{}{}, "\x7f", "tab\t"} {
		if s, err := Literal(bad); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("Literal(%#v) = %q, %v; want an invalid-argument error", bad, s, err)
		}
	}
}

// TestLiteralRoundTrip parses each literal back with the WQL escape rules
// and checks that it yields the original string and that nothing follows
// the closing quote, whatever the input.
func TestLiteralRoundTrip(t *testing.T) {
	inputs := []string{``, `'`, `''`, `\`, `\\`, `\'`, `'\`, `"`, `a'b\c"d`, `\\?\Volume{1}\`, `x' OR 'a'='a`}
	for _, in := range inputs {
		lit, err := Literal(in)
		if err != nil {
			t.Fatal(err)
		}
		got, rest, ok := unquote(lit)
		if !ok || rest != "" || got != in {
			t.Errorf("Literal(%q) = %s: unquotes to %q rest %q ok %v", in, lit, got, rest, ok)
		}
	}
}

// FuzzLiteral checks the same property on arbitrary strings.
func FuzzLiteral(f *testing.F) {
	for _, s := range []string{``, `'`, `\`, `a'b\c"d`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		lit, err := Literal(in)
		if err != nil {
			return // refused: control characters or invalid UTF-8
		}
		got, rest, ok := unquote(lit)
		if !ok || rest != "" || got != in {
			t.Errorf("Literal(%q) = %s: unquotes to %q rest %q ok %v", in, lit, got, rest, ok)
		}
	})
}

// unquote reads one WQL string literal the way the WQL grammar does: a
// backslash escapes the next character; an unescaped quote ends it.
func unquote(s string) (val, rest string, ok bool) {
	if s == "" || s[0] != '\'' {
		return "", s, false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 >= len(s) {
				return "", "", false
			}
			i++
			b.WriteByte(s[i])
		case '\'':
			return b.String(), s[i+1:], true
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}

func TestQueryAccessors(t *testing.T) {
	q := Query("MSFT_Volume").Select("UniqueId", "Size")
	if q.Class() != "MSFT_Volume" {
		t.Errorf("Class() = %q", q.Class())
	}
	p := q.Properties()
	if len(p) != 2 || p[0] != "UniqueId" || p[1] != "Size" {
		t.Errorf("Properties() = %v", p)
	}
	p[0] = "changed"
	if q.Properties()[0] != "UniqueId" {
		t.Error("Properties() shares the query's slice")
	}
	if Query("MSFT_Disk").Properties() != nil {
		t.Error("Properties() of SELECT * is not nil")
	}
}
