package files

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func TestExtendedPath(t *testing.T) {
	long := `C:\` + strings.Repeat(`d\`, 130) + `x`
	longUNC := `\\srv\share\` + strings.Repeat(`d\`, 130) + `x`
	for in, want := range map[string]string{
		`C:\var\lib\kubelet`: `C:\var\lib\kubelet`,
		`\\srv\share\dir`:    `\\srv\share\dir`,
		long:                 `\\?\` + long,
		longUNC:              `\\?\UNC\srv\share\` + longUNC[len(`\\srv\share\`):],
		`\\?\` + long:        `\\?\` + long,
		`\??\` + long:        `\??\` + long,
	} {
		if got := ExtendedPath(in); got != want {
			t.Errorf("ExtendedPath(%.40q...) = %.60q, want %.60q", in, got, want)
		}
	}
	if got := ExtendedPath(strings.Repeat("a", 247)); strings.HasPrefix(got, `\\?\`) {
		t.Error("247 characters is not long")
	}
}

func TestNtToWin32(t *testing.T) {
	for in, want := range map[string]string{
		`\??\C:\var\lib`:   `C:\var\lib`,
		`\??\UNC\srv\sh\d`: `\\srv\sh\d`,
		`\??\unc\srv\sh`:   `\\srv\sh`,
		`\??\\\srv\sh\d\`:  `\\srv\sh\d\`, // upstream's \\?\ + \\srv\... target
		`\??\Volume{abc}\`: `\\?\Volume{abc}\`,
		`..\rel\dir`:       `..\rel\dir`,
	} {
		if got := ntToWin32(in); got != want {
			t.Errorf("ntToWin32(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSameTarget(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{`C:\a\b`, `c:\A\B\`, true},
		{`\\?\C:\a`, `C:\a`, true},
		{`\\?\UNC\srv\sh\d\`, `\\SRV\sh\d`, true},
		{`\\?\\\srv\sh\d\`, `\\srv\sh\d`, true}, // upstream's EnsureLongPath form
		{`\??\UNC\srv\sh\d`, `\\srv\sh\d\`, true},
		{`\??\\\srv\sh\d`, `\\srv\sh\d`, true},
		{`\\?\\\srv\sh\d`, `\\srv\sh\e`, false},
		{`C:/a/b`, `C:\a\b`, true},
		{`C:\`, `C:\`, true},
		{`C:\a`, `C:\ab`, false},
		{`\\srv\sh\a`, `\\srv\sh\b`, false},
	} {
		if got := SameTarget(c.a, c.b); got != c.want {
			t.Errorf("SameTarget(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

func TestResolveRelative(t *testing.T) {
	for _, c := range []struct{ dir, rel, want string }{
		{`C:\k\pods`, `..\stage`, `C:\k\stage`},
		{`C:\k`, `.\a\.\b`, `C:\k\a\b`},
		{`C:\k`, `..\..\..\x`, `C:\x`},
		{`C:\k\a`, `\top`, `C:\top`},
		{`C:\`, `x`, `C:\x`},
		{`C:\k`, `..`, `C:\`},
		{`\\srv\sh\a`, `..\..\b`, `\\srv\sh\b`},
	} {
		if got := resolveRelative(c.dir, c.rel); got != c.want {
			t.Errorf("resolveRelative(%q, %q) = %q, want %q", c.dir, c.rel, got, c.want)
		}
	}
}

func TestParentDir(t *testing.T) {
	for in, want := range map[string]string{
		`C:\a\b`:          `C:\a`,
		`C:\a`:            `C:\`,
		`C:\`:             `C:\`,
		`\\s\sh\a`:        `\\s\sh`,
		`\\s\sh`:          `\\s\sh`,
		`\\?\Volume{x}\a`: `\\?\Volume{x}`,
	} {
		if got := parentDir(in); got != want {
			t.Errorf("parentDir(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseReparsePoint(t *testing.T) {
	rp, err := parseReparsePoint(reparseBuffer(tagSymlink, `\??\C:\k\stage`, `C:\k\stage`, false))
	if err != nil || rp.substitute != `\??\C:\k\stage` || rp.print != `C:\k\stage` || rp.relative || rp.target(`C:\k\pub`) != `C:\k\stage` {
		t.Errorf("absolute symlink: %+v, %v", rp, err)
	}
	rp, err = parseReparsePoint(reparseBuffer(tagSymlink, `..\tgt`, `..\tgt`, true))
	if err != nil || !rp.relative || rp.target(`C:\k\d\l`) != `C:\k\tgt` {
		t.Errorf("relative symlink: %+v, %v", rp, err)
	}
	rp, err = parseReparsePoint(reparseBuffer(tagMountPoint, `\??\Volume{abc}\`, "", false))
	if err != nil || !rp.isVolume() || rp.target(`C:\m`) != `\\?\Volume{abc}\` {
		t.Errorf("mounted folder: %+v, %v", rp, err)
	}
	rp, err = parseReparsePoint(reparseBuffer(tagMountPoint, `\??\C:\tgt\`, `C:\tgt`, false))
	if err != nil || rp.isVolume() || rp.target(`C:\j`) != `C:\tgt\` {
		t.Errorf("junction: %+v, %v", rp, err)
	}
	// Print name stored before the substitute name (mklink does this):
	// the offsets, not the order, locate them.
	pr, sub := utf16le(`C:\x`), utf16le(`\??\C:\x`)
	data := make([]byte, 12)
	binary.LittleEndian.PutUint16(data[0:], uint16(len(pr)))
	binary.LittleEndian.PutUint16(data[2:], uint16(len(sub)))
	binary.LittleEndian.PutUint16(data[4:], 0)
	binary.LittleEndian.PutUint16(data[6:], uint16(len(pr)))
	data = append(append(data, pr...), sub...)
	b := append([]byte{0x0C, 0, 0, 0xA0, byte(len(data)), 0, 0, 0}, data...)
	if rp, err := parseReparsePoint(b); err != nil || rp.substitute != `\??\C:\x` || rp.print != `C:\x` {
		t.Errorf("print name first: %+v %v", rp, err)
	}
	// An unknown tag carries no names.
	other := []byte{0x23, 0, 0, 0x80, 0, 0, 0, 0}
	if rp, err := parseReparsePoint(other); err != nil || rp.tag != 0x80000023 {
		t.Errorf("AF_UNIX: %+v, %v", rp, err)
	}
}

func TestParseReparsePointMalformed(t *testing.T) {
	for _, full := range [][]byte{
		reparseBuffer(tagSymlink, `\??\C:\k\stage`, `C:\k\stage`, false),
		reparseBuffer(tagMountPoint, `\??\Volume{abc}\`, "", false),
	} {
		// Every truncation is an error, never a panic, except the full buffer.
		for n := 0; n < len(full); n++ {
			if _, err := parseReparsePoint(full[:n]); err == nil {
				t.Errorf("truncated to %d of %d bytes: no error", n, len(full))
			}
		}
	}
	bad := reparseBuffer(tagSymlink, `\??\C:\x`, `C:\x`, false)
	bad[10] = 0xF0 // substitute offset far outside the buffer
	if _, err := parseReparsePoint(bad); !errors.Is(err, errMalformedReparse) {
		t.Errorf("offset out of range: %v", err)
	}
	odd := reparseBuffer(tagMountPoint, `\??\C:\x`, `C:\x`, false)
	odd[10] = 3 // odd substitute length
	if _, err := parseReparsePoint(odd); !errors.Is(err, errMalformedReparse) {
		t.Errorf("odd length: %v", err)
	}
}
