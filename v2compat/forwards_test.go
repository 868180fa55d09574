package v2compat

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// exported returns the exported top-level names of the package in dir
// (types, constants, variables, functions; no methods) and its imports.
func exported(t *testing.T, dir string) (names, imports []string) {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			imports = append(imports, p)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					names = append(names, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names = append(names, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names = append(names, n.Name)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(names)
	return names, imports
}

// TestForwardsEverything: every package of this module forwards every
// exported name of its root-module twin (upstreamv2/pkg/...), and imports
// no package of this module, which under a replace line would be a second
// copy of that package with types of its own.
func TestForwardsEverything(t *testing.T) {
	for _, g := range []string{"disk", "volume", "filesystem", "smb", "iscsi", "system"} {
		for _, sub := range []string{g, g + "/hostapi"} {
			want, _ := exported(t, filepath.Join("..", "upstreamv2", "pkg", sub))
			got, imports := exported(t, filepath.Join("pkg", sub))
			if !slices.Equal(got, want) {
				t.Errorf("pkg/%s forwards %v; upstreamv2/pkg/%s exports %v", sub, got, sub, want)
			}
			for _, im := range imports {
				if strings.HasPrefix(im, "github.com/csi-node-proxy/csi-node-proxy/v2compat") {
					t.Errorf("pkg/%s imports %s, a package of this module", sub, im)
				}
			}
		}
	}
}
