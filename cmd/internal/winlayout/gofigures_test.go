package winlayout

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// goPackages maps the short package names the table uses to the root
// module's import paths.
var goPackages = map[string]string{
	"storage":   "internal/host/windows/storage",
	"iscsiinit": "internal/host/windows/iscsiinit",
	"services":  "internal/host/windows/services",
	"files":     "internal/host/windows/files",
	"wmi":       "internal/host/windows/wmi",
	"smbmap":    "internal/host/windows/smbmap",
	"identity":  "internal/identity",
}

const rootModule = "github.com/csi-node-proxy/csi-node-proxy/"

// goTree is the root module's Windows code as the compiler sees it for
// windows/amd64, test files included (the VHD helper and the iSCSI
// mirrors live in _test.go files).
type goTree struct {
	pkgs  map[string]*packages.Package // by short name
	sizes types.Sizes
}

// loadGoTree type-checks every package of goPackages for windows/amd64.
func loadGoTree(rootDir string) (*goTree, error) {
	var patterns []string
	for _, p := range goPackages {
		patterns = append(patterns, "./"+p)
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes |
			packages.NeedTypesInfo | packages.NeedTypesSizes,
		Dir:   rootDir,
		Env:   append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0"),
		Tests: true,
	}
	loaded, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, err
	}
	t := &goTree{pkgs: map[string]*packages.Package{}, sizes: types.SizesFor("gc", "amd64")}
	for short, path := range goPackages {
		full := rootModule + path
		for _, p := range loaded {
			if len(p.Errors) > 0 && (p.PkgPath == full) {
				return nil, fmt.Errorf("%s: %v", p.ID, p.Errors)
			}
			// The package compiled with its internal test files, if it
			// has any ("path [path.test]"), else the package itself.
			if p.ID == full+" ["+full+".test]" || (p.ID == full && t.pkgs[short] == nil) {
				t.pkgs[short] = p
			}
		}
		if t.pkgs[short] == nil {
			return nil, fmt.Errorf("package %s not loaded", full)
		}
	}
	return t, nil
}

// figure evaluates one Go figure expression of the table (see figure.Go).
// An error means the code no longer has what the entry names.
func (t *goTree) figure(expr string) (value string, err error) {
	kind, rest, _ := strings.Cut(expr, " ")
	arg, extra, _ := strings.Cut(rest, " ")
	short, name, ok := strings.Cut(arg, ".")
	if !ok {
		return "", fmt.Errorf("%q: want kind pkg.name", expr)
	}
	p := t.pkgs[short]
	if p == nil {
		return "", fmt.Errorf("%q: unknown package %q", expr, short)
	}
	switch kind {
	case "size":
		obj, err := lookup[*types.TypeName](p, name)
		if err != nil {
			return "", err
		}
		return strconv.FormatInt(t.sizes.Sizeof(obj.Type()), 10), nil
	case "offset":
		typeName, path, _ := strings.Cut(name, ".")
		obj, err := lookup[*types.TypeName](p, typeName)
		if err != nil {
			return "", err
		}
		off, err := t.offset(obj.Type(), strings.Split(path, "."))
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		return strconv.FormatInt(off, 10), nil
	case "const":
		obj, err := lookup[*types.Const](p, name)
		if err != nil {
			return "", err
		}
		return obj.Val().ExactString(), nil
	case "lit":
		return literalIn(p, name, extra)
	case "guid":
		return guidVar(p, name)
	case "params":
		obj, err := lookup[*types.Func](p, name)
		if err != nil {
			return "", err
		}
		params := obj.Type().(*types.Signature).Params()
		var s []string
		for i := range params.Len() {
			s = append(s, strconv.FormatInt(t.sizes.Sizeof(params.At(i).Type()), 10))
		}
		return fmt.Sprintf("%d:%s", params.Len(), strings.Join(s, ",")), nil
	case "callargs":
		return callArgs(p, name, extra)
	}
	return "", fmt.Errorf("%q: unknown kind %q", expr, kind)
}

// lookup finds a package-level object of the wanted kind.
func lookup[T types.Object](p *packages.Package, name string) (T, error) {
	var zero T
	obj, ok := p.Types.Scope().Lookup(name).(T)
	if !ok {
		return zero, fmt.Errorf("%s.%s: no such %T in the windows/amd64 build", p.Name, name, zero)
	}
	return obj, nil
}

// offset is the byte offset of a (possibly nested) field.
func (t *goTree) offset(typ types.Type, path []string) (int64, error) {
	var total int64
	for _, field := range path {
		st, ok := typ.Underlying().(*types.Struct)
		if !ok {
			return 0, fmt.Errorf("%s is not a struct", typ)
		}
		var fields []*types.Var
		idx := -1
		for i := range st.NumFields() {
			fields = append(fields, st.Field(i))
			if st.Field(i).Name() == field {
				idx = i
			}
		}
		if idx < 0 {
			return 0, fmt.Errorf("no field %s in %s", field, typ)
		}
		total += t.sizes.Offsetsof(fields)[idx]
		typ = fields[idx].Type()
	}
	return total, nil
}

// funcDecl finds a top-level function or method (Type.Method) in the
// package's files.
func funcDecl(p *packages.Package, name string) (*ast.FuncDecl, error) {
	recv, method, isMethod := strings.Cut(name, ".")
	for _, f := range p.Syntax {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if !isMethod && fd.Recv == nil && fd.Name.Name == name {
				return fd, nil
			}
			if isMethod && fd.Recv != nil && fd.Name.Name == method && recvName(fd) == recv {
				return fd, nil
			}
		}
	}
	return nil, fmt.Errorf("%s.%s: no such function in the windows/amd64 build", p.Name, name)
}

func recvName(fd *ast.FuncDecl) string {
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// literalIn is the figure of an integer literal the parser function uses
// (a slice bound, an offset, a buffer size): its value if the function
// still contains that literal, an error otherwise.
func literalIn(p *packages.Package, fn, lit string) (string, error) {
	want, err := strconv.ParseUint(lit, 0, 64)
	if err != nil {
		return "", fmt.Errorf("literal %q: %w", lit, err)
	}
	fd, err := funcDecl(p, fn)
	if err != nil {
		return "", err
	}
	found := false
	ast.Inspect(fd, func(n ast.Node) bool {
		if bl, ok := n.(*ast.BasicLit); ok && bl.Kind == token.INT {
			if v, err := strconv.ParseUint(strings.ReplaceAll(bl.Value, "_", ""), 0, 64); err == nil && v == want {
				found = true
			}
		}
		return !found
	})
	if !found {
		return "", fmt.Errorf("%s.%s no longer contains the literal %s", p.Name, fn, lit)
	}
	return strconv.FormatUint(want, 10), nil
}

// callArgs counts the arguments of the proc.Call(...) in fn: the
// parameter list of a function the code calls through a LazyProc.
func callArgs(p *packages.Package, fn, proc string) (string, error) {
	fd, err := funcDecl(p, fn)
	if err != nil {
		return "", err
	}
	n := -1
	ast.Inspect(fd, func(node ast.Node) bool {
		call, ok := node.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Call" {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == proc {
			n = len(call.Args)
		}
		return n < 0
	})
	if n < 0 {
		return "", fmt.Errorf("%s.%s no longer calls %s.Call", p.Name, fn, proc)
	}
	return strconv.Itoa(n), nil
}

// guidVar reads a package-level GUID: a string constant, or a variable
// written as a composite literal {Data1, Data2, Data3, Data4: [8]byte{...}}.
func guidVar(p *packages.Package, name string) (string, error) {
	if c, ok := p.Types.Scope().Lookup(name).(*types.Const); ok && c.Val().Kind() == constant.String {
		return strings.ToLower(strings.Trim(constant.StringVal(c.Val()), "{}")), nil
	}
	for _, f := range p.Syntax {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if id.Name != name || i >= len(vs.Values) {
						continue
					}
					return guidLiteral(p, vs.Values[i])
				}
			}
		}
	}
	return "", fmt.Errorf("%s.%s: no such GUID variable in the windows/amd64 build", p.Name, name)
}

func guidLiteral(p *packages.Package, e ast.Expr) (string, error) {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return "", fmt.Errorf("GUID %s is not a composite literal", types.ExprString(e))
	}
	val := func(e ast.Expr) (uint64, error) {
		tv, ok := p.TypesInfo.Types[e]
		if !ok || tv.Value == nil {
			return 0, fmt.Errorf("%s is not a constant", types.ExprString(e))
		}
		v, exact := constant.Uint64Val(tv.Value)
		if !exact {
			return 0, fmt.Errorf("%s is not an unsigned constant", types.ExprString(e))
		}
		return v, nil
	}
	var d1, d2, d3 uint64
	var d4 []uint64
	for _, elt := range cl.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			return "", fmt.Errorf("GUID literal without field names")
		}
		var err error
		switch kv.Key.(*ast.Ident).Name {
		case "Data1":
			d1, err = val(kv.Value)
		case "Data2":
			d2, err = val(kv.Value)
		case "Data3":
			d3, err = val(kv.Value)
		case "Data4":
			for _, b := range kv.Value.(*ast.CompositeLit).Elts {
				v, err := val(b)
				if err != nil {
					return "", err
				}
				d4 = append(d4, v)
			}
		}
		if err != nil {
			return "", err
		}
	}
	if len(d4) != 8 {
		return "", fmt.Errorf("GUID Data4 has %d bytes", len(d4))
	}
	b := make([]byte, 8)
	for i, v := range d4 {
		b[i] = byte(v)
	}
	return fmt.Sprintf("%08x-%04x-%04x-%x-%x", d1, d2, d3, b[:2], b[2:]), nil
}

// repoRoot is the root module's directory, two levels above cmd/internal.
func repoRoot() (string, error) {
	return filepath.Abs(filepath.Join("..", "..", ".."))
}
