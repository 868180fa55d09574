package audit

import (
	"fmt"
	"unicode/utf8"
)

// Bounds on what one record may carry. A caller chooses the request, and
// through it the policy's reason and the call's message; without bounds a
// denied 4 MB path became a 24 MB line, and a handful of such calls filled
// the audit filesystem, after which every change was refused (the log
// fails closed). With them a record stays under about 12 KiB whatever
// the caller sends (see TestHugeDeniedRequestStaysSmall).
const (
	// MaxRequestString bounds each string of a request: 4096 bytes, the
	// Linux PATH_MAX, so every path Linux can name and every realistic
	// Windows path is kept whole.
	MaxRequestString = 4096
	// MaxRequestBytes bounds the strings of one request together, so a
	// request of many strings (a list of mount options) stays bounded
	// too; strings past the budget are cut to MinKept bytes each.
	MaxRequestBytes = 8192
	// MaxRequestElements bounds how many elements of a list are written;
	// the rest are counted in a marker element.
	MaxRequestElements = 64
	// MaxText bounds the reason and the message: they quote values of the
	// request, which the policy already shortens (printable.Quote).
	MaxText = 1024
	// MaxCallerString bounds each caller field and the request ID: pod
	// names are at most 253 bytes; an executable path may be longer.
	MaxCallerString = 512
	// MinKept is how much of a string is kept once the request budget is
	// spent, so every field still shows how it began.
	MinKept = 64
)

// TruncatedMarker begins what replaces the cut-off end of a string:
// "…[truncated, 4000000 bytes]" says how long the whole was.
const TruncatedMarker = "…[truncated, "

// Truncate returns s when it is at most max bytes long, and otherwise its
// first max bytes (cut back to a whole UTF-8 character) followed by a
// marker saying how long s was.
func Truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("%s%d bytes]", TruncatedMarker, len(s))
}
