package docsnippets

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A Go snippet in docs/*.md is a ```go fence. One that is a whole file
// (it starts with "package") is checked as it is. Any other is a
// fragment and carries a marker, an HTML comment on the line before its
// fence, which renders as nothing:
//
//	<!-- snippet: decls [goos=windows] [module=test/wirecompat]
//	import "context"          ← optional prelude: file-level Go the
//	var ctx context.Context   ← fragment takes as given
//	-->
//
// decls: imports and top-level declarations. body <signature>: an
// optional import block, then statements, checked as the body of a
// function of that signature ("body func() error"). goos checks with that
// GOOS. module=upstream checks in a temporary module that requires
// upstream csi-proxy's v1 client (as test/drivers/upstreamwire does) and
// this tree by a replace, for the "before" code of a driver still on
// upstream's client; without it, snippets are checked in the root module,
// whose internal packages they may name.
// Fragments may leave variables and imports unused (go/types' soft
// errors); every other error fails the test.
type snippet struct {
	file   string // docs/x.md
	line   int    // the fence's line
	kind   string // file, decls or body
	sig    string // body's function signature
	goos   string
	module string // "upstream", or "" for the root module
	prelude,
	code string
}

// TestDocSnippetsCompile type-checks every Go snippet of docs/*.md
// against this tree, with the packages' export data from go list.
func TestDocSnippetsCompile(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	var all []snippet
	for _, d := range docs {
		s, err := extract(d, root)
		if err != nil {
			t.Error(err)
			continue
		}
		all = append(all, s...)
	}
	if len(all) < 10 {
		t.Fatalf("found %d Go snippets in docs/*.md; the extraction is broken", len(all))
	}
	type group struct{ goos, module string }
	byGroup := map[group][]snippet{}
	for _, s := range all {
		g := group{s.goos, s.module}
		byGroup[g] = append(byGroup[g], s)
	}
	for g, snippets := range byGroup {
		fset := token.NewFileSet()
		files := make([]*ast.File, len(snippets))
		var imports []string
		for i, s := range snippets {
			f, err := parser.ParseFile(fset, fmt.Sprintf("%s:%d", s.file, s.line), s.source(), parser.SkipObjectResolution)
			if err != nil {
				t.Errorf("%s:%d: does not parse: %v", s.file, s.line, err)
				continue
			}
			files[i] = f
			for _, im := range f.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				if !slices.Contains(imports, p) {
					imports = append(imports, p)
				}
			}
		}
		dir := root
		if g.module == "upstream" {
			dir = upstreamModule(t, root)
		}
		exports, err := exportData(dir, g.goos, g.module == "upstream", imports)
		if err != nil {
			t.Errorf("export data (GOOS=%s, module %q): %v", g.goos, g.module, err)
			continue
		}
		imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
			f, ok := exports[path]
			if !ok {
				return nil, fmt.Errorf("no export data for %s", path)
			}
			return os.Open(f)
		})
		for i, s := range snippets {
			if files[i] == nil {
				continue
			}
			var errs []string
			conf := types.Config{Importer: imp, Error: func(err error) {
				if te, ok := err.(types.Error); ok && te.Soft && s.kind != "file" {
					return // unused in a fragment
				}
				errs = append(errs, err.Error())
			}}
			_, _ = conf.Check("snippet", fset, []*ast.File{files[i]}, nil)
			if len(errs) > 0 {
				t.Errorf("%s:%d (%s snippet, GOOS=%s) does not compile:\n\t%s\nas checked:\n%s", s.file, s.line, s.kind, g.goos, strings.Join(errs, "\n\t"), numbered(s.source()))
			}
		}
	}
	t.Logf("%d Go snippets in %d docs checked", len(all), len(docs))
}

// source is the snippet as a Go file.
func (s snippet) source() string {
	switch s.kind {
	case "file":
		return s.code
	case "decls":
		return "package snippet\n" + s.prelude + "\n" + s.code
	}
	imports, body := splitImports(s.code)
	sig := strings.TrimPrefix(s.sig, "func")
	return "package snippet\n" + imports + "\n" + s.prelude + "\nfunc _" + sig + " {\n" + body + "\npanic(0)\n}\n"
}

// splitImports takes a leading import declaration off a body fragment.
func splitImports(code string) (imports, rest string) {
	trimmed := strings.TrimLeft(code, "\n")
	if !strings.HasPrefix(trimmed, "import") {
		return "", code
	}
	if strings.HasPrefix(trimmed, "import (") {
		end := strings.Index(trimmed, "\n)")
		return trimmed[:end+2], trimmed[end+2:]
	}
	end := strings.Index(trimmed, "\n")
	return trimmed[:end], trimmed[end:]
}

// extract returns the Go snippets of one Markdown file.
func extract(path, root string) ([]snippet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(root, path)
	var out []snippet
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```go" {
			continue
		}
		end := i + 1
		for end < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[end]), "```") {
			end++
		}
		s := snippet{file: rel, line: i + 1, code: strings.Join(lines[i+1:end], "\n") + "\n", kind: "file"}
		if _, err := parser.ParseFile(token.NewFileSet(), "", s.code, parser.PackageClauseOnly); err != nil {
			if err := s.readMarker(lines[:i]); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", rel, i+1, err)
			}
		}
		out = append(out, s)
		i = end
	}
	return out, nil
}

// readMarker reads the marker comment that ends just before the fence.
func (s *snippet) readMarker(before []string) error {
	end := len(before) - 1
	if end < 0 || strings.TrimSpace(before[end]) != "-->" && !strings.HasSuffix(strings.TrimSpace(before[end]), "-->") {
		return fmt.Errorf("a Go fragment without a marker: put <!-- snippet: decls --> or <!-- snippet: body func() error --> on the line before the fence (see test/docsnippets)")
	}
	start := end
	for start >= 0 && !strings.Contains(before[start], "<!--") {
		start--
	}
	if start < 0 || !strings.HasPrefix(strings.TrimSpace(before[start]), "<!-- snippet:") {
		return fmt.Errorf("a Go fragment whose comment before it is no <!-- snippet: ... --> marker")
	}
	block := strings.Join(before[start:end+1], "\n")
	block = strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(block), "<!-- snippet:")), "-->")
	head, prelude, _ := strings.Cut(block, "\n")
	s.prelude = prelude
	fields := strings.Fields(head)
	if len(fields) == 0 {
		return fmt.Errorf("a marker without a kind")
	}
	s.kind = fields[0]
	var sig []string
	for _, f := range fields[1:] {
		switch {
		case strings.HasPrefix(f, "goos="):
			s.goos = strings.TrimPrefix(f, "goos=")
		case strings.HasPrefix(f, "module="):
			s.module = strings.TrimPrefix(f, "module=")
		default:
			sig = append(sig, f)
		}
	}
	s.sig = strings.Join(sig, " ")
	switch {
	case s.kind == "decls" && s.sig == "":
	case s.kind == "body" && strings.HasPrefix(s.sig, "func("):
	default:
		return fmt.Errorf("marker %q: want decls, or body with a signature such as func() error", head)
	}
	return nil
}

// exportData returns the export data file of every package imports need,
// from go list in dir (a module), built for goos ("" is this one's).
// modMod lets go list add requirements to dir's go.mod: only for the
// temporary module, never the tree's (a snippet importing a module the
// tree does not require fails instead).
func exportData(dir, goos string, modMod bool, imports []string) (map[string]string, error) {
	out := map[string]string{}
	if len(imports) == 0 {
		return out, nil
	}
	args := append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, imports...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	// The export data are compiled as every build without the race
	// detector is (the Makefile's NORACE_TARGETS: static, -trimpath, and
	// make test's flags, which GOFLAGS carries), so that they are the
	// packages make cross and lint compiled already, for linux and for
	// windows. Issue 26: with this test binary's environment (cgo on,
	// local paths) they were a configuration of their own, and a cold
	// make test compiled the tree and its dependencies once more for
	// each GOOS.
	goflags := strings.TrimSpace("-trimpath " + os.Getenv("GOFLAGS"))
	if modMod {
		goflags += " -mod=mod" // the temporary module may lack a require line
	}
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS="+goflags)
	if goos != "" {
		cmd.Env = append(cmd.Env, "GOOS="+goos)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.String())
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if p, f, ok := strings.Cut(l, "\t"); ok && f != "" {
			out[p] = f
		}
	}
	return out, nil
}

// numbered returns src with line numbers, for a failure message.
func numbered(src string) string {
	var b strings.Builder
	for i, l := range strings.Split(src, "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, l)
	}
	return b.String()
}

// upstreamModule writes a module that requires upstream's v1 client and
// this tree (by a replace), with the go.sum lines of the root module and
// of test/drivers/upstreamwire, and returns its directory.
func upstreamModule(t *testing.T, root string) string {
	t.Helper()
	dir := t.TempDir()
	mod, err := os.ReadFile(filepath.Join(root, "test", "drivers", "upstreamwire", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(mod), "module github.com/csi-node-proxy/csi-node-proxy/test/drivers/upstreamwire", "module docsnippets.invalid/upstream", 1)
	text = strings.Replace(text, "=> ../../..", "=> "+root, 1)
	var sum []byte
	for _, f := range []string{filepath.Join(root, "go.sum"), filepath.Join(root, "test", "drivers", "upstreamwire", "go.sum")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sum = append(sum, b...)
	}
	for name, data := range map[string][]byte{"go.mod": []byte(text), "go.sum": sum, "doc.go": []byte("package upstream\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
