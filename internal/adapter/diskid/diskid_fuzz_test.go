package diskid

import (
	"errors"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// The seed corpus in testdata/fuzz/ holds the hostile-input suite's disk
// IDs (test/hostile, TestFuzzCorpus writes them); the f.Add seeds are good
// ones.

// FuzzParse checks that Parse and Format round-trip: Parse(Format(n)) is n
// for every disk number; an ID Parse accepts is decimal digits only
// (leading zeros allowed, as upstream's strconv.ParseUint) with a value
// that fits in 32 bits, and Format gives it back without the leading
// zeros; anything else is InvalidArgument.
func FuzzParse(f *testing.F) {
	f.Add("0", uint32(0))
	f.Add("4294967295", uint32(4294967295))
	f.Add("007", uint32(7))
	f.Fuzz(func(t *testing.T, id string, n uint32) {
		if got, err := Parse(Format(n)); err != nil || got != n {
			t.Fatalf("Parse(Format(%d)) = %d, %v", n, got, err)
		}
		got, err := Parse(id)
		if err != nil {
			if !errors.Is(err, errdefs.ErrInvalidArgument) {
				t.Fatalf("Parse(%q) = %v: want InvalidArgument", id, err)
			}
			if id != "" && strings.Trim(id, "0123456789") == "" && len(strings.TrimLeft(id, "0")) <= 9 {
				t.Fatalf("Parse(%q) refused a decimal number under 10^9: %v", id, err)
			}
			return
		}
		if id == "" || strings.Trim(id, "0123456789") != "" {
			t.Fatalf("Parse(%q) = %d: accepted something other than decimal digits", id, got)
		}
		canonical := strings.TrimLeft(id, "0")
		if canonical == "" {
			canonical = "0"
		}
		if Format(got) != canonical {
			t.Fatalf("Parse(%q) = %d, which formats as %q, not %q", id, got, Format(got), canonical)
		}
	})
}
