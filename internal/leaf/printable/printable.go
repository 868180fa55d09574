// Package printable decides whether a string a caller sent is text the
// proxy may act on and write into its logs and audit records: valid UTF-8
// without control characters, line or paragraph separators, or
// bidirectional formatting characters.
//
// Every validator of a request field (paths, SMB remote paths and user
// names, service names, IQNs, CHAP fields, volume IDs) runs this one check
// first, so the rule lives here once:
//
//   - invalid UTF-8 (including overlong forms such as "\xc0\xae" for "."
//     and encoded UTF-16 surrogates): a name the host would read
//     differently from the proxy, and which protobuf refuses to carry back;
//   - C0 controls (U+0000-U+001F), DEL and C1 controls (U+0080-U+009F):
//     NUL ends a C string early, newlines forge log lines, and C1 CSI
//     (U+009B) starts terminal escape sequences just as ESC [ does;
//   - U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR, which log
//     viewers and JavaScript-based tools treat as line breaks;
//   - the Unicode Bidi_Control characters (U+061C, U+200E, U+200F,
//     U+202A-U+202E, U+2066-U+2069), which reorder how the rest of a line is
//     displayed ("Trojan Source", CVE-2021-42574): a path could read as
//     inside a working directory in a log or audit record while naming
//     something else.
//
// None of these occurs in a name kubelet, a CSI driver or an administrator
// produces. Other invisible format characters (zero-width space and
// joiners, the byte order mark) are not refused here: they are legal in
// file names, the joiners are needed to write some scripts, and they cannot
// reorder or split a line. Fields with a grammar of their own (volume IDs,
// IQNs, host names) refuse them there.
package printable

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// maxQuoted is how many bytes of a refused value an error message quotes;
// a 40 kB value would otherwise fill the log line and the audit record.
const maxQuoted = 256

// Forbidden tells whether r may not appear in request text; see the
// package documentation for the list and the reasons.
func Forbidden(r rune) bool {
	return unicode.IsControl(r) || // C0, DEL, C1
		r == '\u2028' || r == '\u2029' ||
		unicode.Is(unicode.Bidi_Control, r)
}

// problem describes why s is not printable text, or returns "".
func problem(s string) string {
	// Nearly all request text is printable ASCII: decide it a byte at a
	// time without decoding runes or consulting the Unicode tables.
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f {
		i++
	}
	if i == len(s) {
		return ""
	}
	if !utf8.ValidString(s[i:]) {
		return "is not valid UTF-8"
	}
	for _, r := range s[i:] {
		if Forbidden(r) {
			return fmt.Sprintf("contains the %s %U", kind(r), r)
		}
	}
	return ""
}

func kind(r rune) string {
	switch {
	case unicode.IsControl(r):
		return "control character"
	case r == '\u2028' || r == '\u2029':
		return "line or paragraph separator"
	}
	return "bidirectional formatting character"
}

// Check returns an error wrapping errdefs.ErrInvalidArgument when s is not
// printable text. The message names the field and quotes the value with
// %q (shortened when long), so the message itself is printable.
func Check(field, s string) error {
	if why := problem(s); why != "" {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "%s %s %s", field, Quote(s), why)
	}
	return nil
}

// CheckSecret is Check for a secret (a CHAP secret or user name): the
// message names the field but never shows the value or which character
// was refused.
func CheckSecret(field, s string) error {
	switch {
	case problem(s) == "":
		return nil
	case !utf8.ValidString(s):
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "%s is not valid UTF-8", field)
	}
	return errdefs.Errorf(errdefs.ErrInvalidArgument, "%s contains a control character, a line separator or a bidirectional formatting character", field)
}

// Quote returns s quoted with %q, the first maxQuoted bytes only when it is
// longer (with its length), for error messages.
func Quote(s string) string {
	if len(s) <= maxQuoted {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q…(%d bytes)", s[:maxQuoted], len(s))
}
