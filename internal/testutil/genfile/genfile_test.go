package genfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFirstDifference: the first differing line is found wherever it is,
// including a line one side lacks.
func TestFirstDifference(t *testing.T) {
	for _, c := range []struct {
		got, want string
		line      int
		g, w      string
		ok        bool
	}{
		{"a\nb\n", "a\nb\n", 0, "", "", false},
		{"a\nb\n", "a\nc\n", 2, "b", "c", true},
		{"a\n", "a\nb\n", 2, "", "b", true},
		{"a\nb", "a", 2, "b", "", true},
		// Only the trailing newlines differ: a missing line is not the
		// empty line after a final newline.
		{"a\n", "a", 2, "", "", true},
		{"a\n\n", "a\n", 3, "", "", true},
	} {
		line, g, w, ok := firstDifference(c.got, c.want)
		if line != c.line || g != c.g || w != c.w || ok != c.ok {
			t.Errorf("firstDifference(%q, %q) = %d, %q, %q, %v; want %d, %q, %q, %v",
				c.got, c.want, line, g, w, ok, c.line, c.g, c.w, c.ok)
		}
	}
}

// recorder is a testing.TB that keeps the first Fatalf's message instead
// of ending the test, so that Check's failures can be looked at.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Fatalf(format string, args ...any) {
	if r.msg == "" {
		r.msg = fmt.Sprintf(format, args...)
	}
}

// TestCheck: an up-to-date file passes, a stale or missing one fails with
// the File's words, and update rewrites it.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	f := File{Path: filepath.Join(dir, "ref.md"), Missing: "run make docs", Stale: "ref.md is stale"}

	r := &recorder{TB: t}
	f.Check(r, "x\n", false)
	if !strings.HasSuffix(r.msg, "; run make docs") {
		t.Errorf("missing file: %q; want it to end with the Missing hint", r.msg)
	}

	f.Check(t, "x\ny\n", true)
	if b, err := os.ReadFile(f.Path); err != nil || string(b) != "x\ny\n" {
		t.Fatalf("after update: %q, %v", b, err)
	}
	r = &recorder{TB: t}
	f.Check(r, "x\ny\n", false)
	if r.msg != "" {
		t.Errorf("an up-to-date file failed: %s", r.msg)
	}
	f.Check(r, "x\nz\n", false)
	if want := "ref.md is stale\nFirst difference, line 2:\n  file: y\n  want: z"; r.msg != want {
		t.Errorf("stale file: %q; want %q", r.msg, want)
	}
}
