package printable

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// FuzzCheck holds the shared text check to its rule for any string: it
// accepts exactly the valid UTF-8 strings without a Forbidden rune, Check
// and CheckSecret agree, every refusal is InvalidArgument, Check's message
// is itself printable, and CheckSecret's message never carries the value.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"", `C:\var\lib\kubelet`, "/var/lib/kubelet/pods/x", "a\x00b", "line\nforged", "\x7f",
		"\u0085", "\u009b[31m", "\xc0\xae", "\xed\xa0\x80", "\u2028", "\u202eevil", "\u2066x\u2069",
		"zero\u200bwidth", "\ufeffbom", "日本語", strings.Repeat("é", 300),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := utf8.ValidString(s)
		for _, r := range s {
			want = want && !Forbidden(r)
		}
		err, secretErr := Check("field", s), CheckSecret("field", s)
		if (err == nil) != want || (secretErr == nil) != want {
			t.Fatalf("Check(%q) = %v, CheckSecret = %v; want accepted=%v", s, err, secretErr, want)
		}
		if want {
			return
		}
		if !errors.Is(err, errdefs.ErrInvalidArgument) || !errors.Is(secretErr, errdefs.ErrInvalidArgument) {
			t.Fatalf("refusals of %q are not InvalidArgument: %v; %v", s, err, secretErr)
		}
		if problem(err.Error()) != "" {
			t.Fatalf("Check's message for %q is not printable itself: %q", s, err.Error())
		}
		// The secret's message may depend on nothing but the class of the
		// problem: the same text as for a one-byte value of that class.
		class := "\x00"
		if !utf8.ValidString(s) {
			class = "\xff"
		}
		if msg, same := secretErr.Error(), CheckSecret("field", class).Error(); msg != same {
			t.Fatalf("CheckSecret's message for %q depends on the value: %q, want %q", s, msg, same)
		}
		if q := Quote(s); problem(q) != "" || len(q) > 4*maxQuoted+32 {
			t.Fatalf("Quote(%q) = %q: not printable or not shortened", s, q)
		}
	})
}
