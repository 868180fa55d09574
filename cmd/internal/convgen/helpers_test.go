package convgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// The steps every test of a testdata tree takes, here once: the golden, the
// compile and the directive-error tests of the widget and legacy trees, on
// the adapter and on the client side, differ only in the tree, the
// configuration and the files they look at.

// generate runs the generator with cfg and fails the test if it fails.
func generate(t *testing.T, cfg Config) map[string][]byte {
	t.Helper()
	files, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// checkGolden compares each generated file named in want with its golden
// file (want's value) under dir/golden, or rewrites the golden files with
// -update.
func checkGolden(t *testing.T, dir string, files map[string][]byte, want map[string]string) {
	t.Helper()
	for name, golden := range want {
		got, ok := files[name]
		if !ok {
			t.Errorf("no %s generated", name)
			continue
		}
		path := filepath.Join(dir, "golden", golden)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		exp, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(exp) != string(got) {
			t.Errorf("%s differs from %s (run go test -C cmd ./internal/convgen -update in the repository root to accept):\n%s", name, path, got)
		}
	}
}

// typeCheck type-checks the generated files that keep selects, laid over
// the tree in dir (through an overlay, so nothing is written into
// testdata), together with the tree's hand-written files: the generated
// code must be code the overrides can call and that calls them with the
// right types.
func typeCheck(t *testing.T, dir string, files map[string][]byte, keep func(name string) bool) {
	t.Helper()
	overlay := map[string][]byte{}
	var patterns []string
	for name, src := range files {
		if !keep(name) {
			continue
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

// notRegistry keeps every generated file but the adapters' registry, which
// refers to the daemon's adapter.API, which testdata lacks.
func notRegistry(name string) bool { return filepath.Base(name) != RegistryFileName }

// copyTree copies the testdata tree src to a fresh directory, removed when
// the test ends, for a test that breaks some of its files. The copy sits
// under testdata, inside the module, for its packages to load.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dir, err := os.MkdirTemp("testdata", "tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeFile writes src to rel (slash-separated) under dir, making its
// directory if the tree has none there.
func writeFile(t *testing.T, dir, rel, src string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkFails fails the test unless err, a failed generation's, says every
// one of want; succeeded is what the test says when generation did not
// fail.
func checkFails(t *testing.T, err error, succeeded string, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatal(succeeded)
	}
	msg := err.Error()
	for _, s := range want {
		if !strings.Contains(msg, s) {
			t.Errorf("error lacks %q:\n%s", s, msg)
		}
	}
}
