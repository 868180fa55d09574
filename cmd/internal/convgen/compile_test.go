package convgen

import (
	"path/filepath"
	"testing"
)

// TestGeneratedCodeCompiles type-checks the generated widget adapters
// together with their hand-written overrides (through an overlay, so
// nothing is written into testdata): the golden files must be code the
// overrides can call and that calls the overrides with the right types.
func TestGeneratedCodeCompiles(t *testing.T) {
	dir := filepath.Join("testdata", "widget")
	files := generate(t, Config{Dir: dir, ErrdefsPath: errdefsPath})
	typeCheck(t, dir, files, notRegistry)
}
