package convgen

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/packages"
)

// TestGeneratedCodeCompiles type-checks the generated widget adapters
// together with their hand-written overrides (through an overlay, so
// nothing is written into testdata): the golden files must be code the
// overrides can call and that calls the overrides with the right types.
func TestGeneratedCodeCompiles(t *testing.T) {
	dir := filepath.Join("testdata", "widget")
	files, err := Generate(Config{Dir: dir, ErrdefsPath: errdefsPath})
	if err != nil {
		t.Fatal(err)
	}
	overlay := map[string][]byte{}
	var patterns []string
	for name, src := range files {
		if filepath.Base(name) == RegistryFileName {
			continue // refers to the daemon's adapter.API, which testdata lacks
		}
		abs, err := filepath.Abs(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		overlay[abs] = src
		patterns = append(patterns, "./"+filepath.ToSlash(filepath.Dir(name)))
	}
	pkgs, err := packages.Load(&packages.Config{
		Mode:    packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo,
		Dir:     dir,
		Overlay: overlay,
	}, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != len(patterns) {
		t.Fatalf("loaded %d packages, want %d", len(pkgs), len(patterns))
	}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.PkgPath, e)
		}
	}
}
