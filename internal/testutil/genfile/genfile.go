// Package genfile checks a file that a test generates and the repository
// commits (a reference page rendered from flag definitions or help texts):
// the test fails when the committed copy is missing or stale, and rewrites
// it when asked to. The daemon's configuration reference and the CLI's
// reference are both checked this way, so a change to how staleness is
// reported reaches both.
package genfile

import (
	"os"
	"strings"
	"testing"
)

// File is a committed generated file and what its test tells a developer
// who must regenerate it.
type File struct {
	// Path is the file, relative to the test's package directory.
	Path string
	// Missing follows the read error when the file cannot be read: how to
	// generate it.
	Missing string
	// Stale opens the failure when the file differs from what the test
	// renders: which file, why it is stale and how to regenerate it.
	Stale string
}

// Check fails tb unless f holds want, naming the first line that differs;
// with update it writes want to f instead (the regeneration Stale names).
func (f File) Check(tb testing.TB, want string, update bool) {
	tb.Helper()
	if update {
		if err := os.WriteFile(f.Path, []byte(want), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(f.Path)
	if err != nil {
		tb.Fatalf("%v; %s", err, f.Missing)
	}
	if line, g, w, ok := firstDifference(string(got), want); ok {
		tb.Fatalf("%s\nFirst difference, line %d:\n  file: %s\n  want: %s", f.Stale, line, g, w)
	}
}

// firstDifference returns the first line (counted from 1) at which got and
// want differ and the two lines there, a missing line shown as empty; false
// when they are the same. A line one side lacks differs even from an empty
// line on the other: a file with one newline too many or too few is stale.
func firstDifference(got, want string) (line int, g, w string, ok bool) {
	if got == want {
		return 0, "", "", false
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(gl), len(wl)) {
		if i >= len(gl) || i >= len(wl) || gl[i] != wl[i] {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			return i + 1, g, w, true
		}
	}
	return 0, "", "", false // not reached: different strings differ in a line or in their count
}
