package convgen

// Directives: what the hand-written files of an output package declare,
// its functions and methods, which the generator steps aside for, and its
// //convgen: comments.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// handWritten is what the non-generated files of an adapter package define.
type handWritten struct {
	funcs    map[string]bool   // top-level functions
	fallible map[string]bool   // top-level functions returning (T, error)
	methods  map[string]bool   // methods on Server
	renames  map[string]string // //convgen:rename RPC=Method
	ignore   map[string]string // //convgen:ignore, lower-cased field -> as written
	skip     map[string]bool   // //convgen:skip RPC (client stubs only)
	errs     []string          // malformed directives
}

// directivePrefix starts every convgen directive comment.
const directivePrefix = "//convgen:"

// scanHandWritten reads the hand-written files of an output package: its
// functions, the methods on recv (Server for adapters, Client for client
// stubs) and the directives.
func scanHandWritten(dir, recv string) (handWritten, error) {
	hw := handWritten{
		funcs: map[string]bool{}, fallible: map[string]bool{}, methods: map[string]bool{},
		renames: map[string]string{}, ignore: map[string]string{}, skip: map[string]bool{},
	}
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return hw, nil
	}
	if err != nil {
		return hw, err
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || strings.HasPrefix(n, "zz_generated") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return hw, err
		}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if strings.HasPrefix(c.Text, directivePrefix) {
					hw.directive(fset.Position(c.Pos()).String(), strings.TrimPrefix(c.Text, directivePrefix))
				}
			}
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if fd.Recv == nil {
				hw.funcs[fd.Name.Name] = true
				if r := fd.Type.Results; r != nil && r.NumFields() == 2 {
					hw.fallible[fd.Name.Name] = true
				}
				continue
			}
			t := fd.Recv.List[0].Type
			if st, ok := t.(*ast.StarExpr); ok {
				t = st.X
			}
			if id, ok := t.(*ast.Ident); ok && id.Name == recv {
				hw.methods[fd.Name.Name] = true
			}
		}
	}
	return hw, nil
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// directive records one //convgen: comment found at pos.
func (hw *handWritten) directive(pos, text string) {
	verb, args, _ := strings.Cut(text, " ")
	fields := strings.Fields(args)
	bad := func(format string, a ...any) {
		hw.errs = append(hw.errs, pos+": "+directivePrefix+verb+": "+fmt.Sprintf(format, a...))
	}
	switch verb {
	case "rename":
		if len(fields) == 0 {
			bad("want //convgen:rename <RPC>=<Method>")
		}
		for _, f := range fields {
			rpc, method, ok := strings.Cut(f, "=")
			if !ok || !identRE.MatchString(rpc) || !identRE.MatchString(method) {
				bad("%q is not <RPC>=<Method>", f)
				continue
			}
			if _, dup := hw.renames[rpc]; dup {
				bad("%s is renamed twice", rpc)
				continue
			}
			hw.renames[rpc] = method
		}
	case "ignore":
		if len(fields) == 0 {
			bad("want //convgen:ignore <Field> ...")
		}
		for _, f := range fields {
			if !identRE.MatchString(f) {
				bad("%q is not a field name", f)
				continue
			}
			hw.ignore[strings.ToLower(f)] = f
		}
	case "skip":
		if len(fields) == 0 {
			bad("want //convgen:skip <RPC> ...")
		}
		for _, f := range fields {
			if !identRE.MatchString(f) {
				bad("%q is not an RPC name", f)
				continue
			}
			hw.skip[f] = true
		}
	default:
		bad("unknown directive (want rename, ignore or skip)")
	}
}
