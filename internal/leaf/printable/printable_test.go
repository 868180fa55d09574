package printable

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"/var/lib/kubelet/pods/x", true},
		{"ordinary name with spaces", true},
		{"Grüße, 日本語, עברית", true},    // letters of any script
		{"a\u200bb", true},             // zero-width space: legal in file names
		{"a\u200db", true},             // zero-width joiner: needed by some scripts
		{"\ufeffbom", true},            // byte order mark
		{"", true},                     // emptiness is each field's own rule
		{"a\x00b", false},              // NUL
		{"a\nb", false},                // C0
		{"a\x1b[2J", false},            // ESC
		{"a\x7f", false},               // DEL
		{"a\u0080b", false},            // first C1
		{"a\u0085b", false},            // NEL
		{"a\u009bb", false},            // CSI
		{"a\u009fb", false},            // last C1
		{"a\u2028b", false},            // line separator
		{"a\u2029b", false},            // paragraph separator
		{"a\u202eb", false},            // right-to-left override
		{"a\u202ab", false},            // left-to-right embedding
		{"a\u2066b", false},            // left-to-right isolate
		{"a\u2069b", false},            // pop directional isolate
		{"a\u200fb", false},            // right-to-left mark
		{"a\u061cb", false},            // Arabic letter mark
		{"a\xffb", false},              // not UTF-8
		{"\xc0\xae\xc0\xae", false},    // overlong ".."
		{"\xed\xa0\x80", false},        // a UTF-16 surrogate
		{"a\xe2\x80", false},           // truncated sequence
		{string(utf8.RuneError), true}, // U+FFFD itself is valid text
		{"a\u00a0b", true},             // no-break space is text here; volume IDs refuse it
		{"a\u2027b", true},             // U+2027, next to the separators, is punctuation
		{"a\u202fb", true},             // U+202F, next to the overrides, is a space
	} {
		err := Check("path", c.in)
		if (err == nil) != c.ok {
			t.Errorf("Check(%q) = %v, want ok %v", c.in, err, c.ok)
			continue
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("Check(%q) = %v: not InvalidArgument", c.in, err)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "path ") || !utf8.ValidString(msg) {
			t.Errorf("Check(%q) message %q does not name the field or is not UTF-8", c.in, msg)
		}
		for _, r := range msg {
			if Forbidden(r) {
				t.Errorf("Check(%q) message %q holds %U itself", c.in, msg, r)
			}
		}
		serr := CheckSecret("chap_secret", c.in)
		if serr == nil || !errors.Is(serr, errdefs.ErrInvalidArgument) {
			t.Errorf("CheckSecret(%q) = %v, want InvalidArgument", c.in, serr)
		} else if strings.Contains(serr.Error(), "a") && strings.Contains(serr.Error(), c.in) {
			t.Errorf("CheckSecret(%q) = %v quotes the secret", c.in, serr)
		}
	}
}

// TestForbiddenRanges walks the whole Unicode range: exactly the listed
// code points are refused.
func TestForbiddenRanges(t *testing.T) {
	want := func(r rune) bool {
		switch {
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
			return true
		case r == 0x2028, r == 0x2029:
			return true
		case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return true
		}
		return false
	}
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if Forbidden(r) != want(r) {
			t.Errorf("Forbidden(%U) = %v", r, Forbidden(r))
		}
	}
}

func TestQuoteShortens(t *testing.T) {
	long := strings.Repeat("s", 40000)
	q := Quote(long)
	if len(q) > maxQuoted+40 || !strings.HasSuffix(q, "…(40000 bytes)") {
		t.Errorf("Quote of 40000 bytes = %d bytes ending %q", len(q), q[len(q)-20:])
	}
	if got := Quote("a\u0085b"); got != `"a\u0085b"` {
		t.Errorf("Quote(NEL) = %s", got)
	}
	err := Check("remote_path", long+"\x00")
	if err == nil || len(err.Error()) > 400 {
		t.Errorf("Check of a long value: %d-byte message", len(err.Error()))
	}
}
