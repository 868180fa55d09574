// Package convgen generates the thin gRPC adapters that serve each API
// version of a group on top of the group's internal model.
//
// Inputs, found by convention under a module root:
//
//	api/<group>/<version>/   protoc-gen-go(-grpc) output: messages and <Svc>Server
//	groups/<group>/          the model: an Interface and plain request/response types
//	internal/adapter/<group><version>/   output, plus hand-written overrides
//
// For every RPC of the version's service the generator emits a handler on
// Server that converts the request to the model, calls the group Interface
// method of the same name, converts the response back and maps the error
// with errdefs.ToGRPC. Conversions are generated field by field: a wire
// field matches the model field whose name is equal ignoring case (so the
// wire's VolumeIds matches the model's VolumeIDs); basic types are copied,
// enums are converted by value, nested messages, repeated messages and maps
// of messages are converted recursively.
//
// Where the wire and the model differ (a renamed or retyped field, a renamed
// RPC), hand-written files in the output package supply the difference and
// the generator steps aside:
//
//   - a function toModel<Msg>(*pb.Msg) *model.T or
//     fromModel<Msg>(*model.T) *pb.Msg replaces the generated conversion;
//     the generator then emits autoToModel<Msg> / autoFromModel<Msg> with the
//     fields it can match, for the override to call. The override for an
//     RPC's request may instead return (*model.T, error) when the conversion
//     can fail (a number sent as a string); the handler then answers with
//     errdefs.ToGRPC of that error without calling the group. Conversions of
//     nested messages are generated even for a field the override converts
//     (a map whose key type changed), so it can call them;
//   - a method (s *Server) <RPC> replaces the generated handler;
//   - the directive //convgen:rename <RPC>=<Method> serves an RPC with the
//     model Interface method of another name (upstream renamed it in a later
//     version); the request and response convert to and from that method's
//     types, whatever the messages are called;
//   - the directive //convgen:ignore <Field>... leaves wire fields of that
//     name (in any message, compared ignoring case) out of every conversion:
//     a request's is dropped, a response's stays at its zero value.
//
// When a field or RPC has no counterpart and no override, generation fails
// with a message naming the function or directive to write. A directive
// that matches nothing fails too. Output is gofmt'ed and deterministic.
//
// With Config.ClientDir set, the generator also writes the other side of
// the wire for the client module: per group-version stubs that implement
// the model Interface by calling the version's RPCs, with their own
// hand-written overrides, and the registry of known versions; client.go
// in this package has the rules.
package convgen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Config says where the inputs and outputs are. Paths are relative to Dir.
type Config struct {
	// Dir is the tree to generate in (normally the module root).
	Dir string
	// APIRoot holds api/<group>/<version> packages. Default "api".
	APIRoot string
	// ModelRoot holds groups/<group> packages. Default "groups".
	ModelRoot string
	// OutRoot receives <group><version> adapter packages and the registry.
	// Default "internal/adapter".
	OutRoot string
	// ErrdefsPath is the import path of the errdefs package.
	ErrdefsPath string
	// Tool names the generator in the "Code generated" header.
	Tool string
	// ClientDir, when set, is the root of the client module: the client
	// stubs go to <ClientDir>/internal/<group><version> and the registry
	// of known versions to <ClientDir>/zz_generated.versions.go (see
	// client.go in this package). Empty generates no client side.
	ClientDir string
}

// GeneratedFileName is the name of the generated file in each adapter
// package; RegistryFileName the registry's in OutRoot.
const (
	GeneratedFileName = "zz_generated.adapter.go"
	RegistryFileName  = "zz_generated.registry.go"
)

// groupVersion is one api/<group>/<version> directory.
type groupVersion struct {
	group, version string
	apiDir         string // relative to Dir
	apiPkg         *packages.Package
	modelPkg       *packages.Package
	outDir         string // relative to Dir
	outImport      string
	clientImport   string // import path of the client stub, with Config.ClientDir
}

// Generate computes every generated file. It returns file contents keyed by
// path relative to cfg.Dir; it writes nothing.
func Generate(cfg Config) (map[string][]byte, error) {
	if cfg.APIRoot == "" {
		cfg.APIRoot = "api"
	}
	if cfg.ModelRoot == "" {
		cfg.ModelRoot = "groups"
	}
	if cfg.OutRoot == "" {
		cfg.OutRoot = "internal/adapter"
	}
	if cfg.Tool == "" {
		cfg.Tool = "convgen"
	}
	gvs, err := discover(cfg)
	if err != nil {
		return nil, err
	}
	if len(gvs) == 0 {
		return nil, fmt.Errorf("convgen: no api/<group>/<version> packages with a gRPC service under %s", filepath.Join(cfg.Dir, cfg.APIRoot))
	}
	if err := load(cfg, gvs); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	var errs []string
	for _, gv := range gvs {
		src, err := generateAdapter(cfg, gv)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		files[filepath.ToSlash(filepath.Join(gv.outDir, GeneratedFileName))] = src
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("convgen:\n  %s", strings.Join(errs, "\n  "))
	}
	reg, err := generateRegistry(cfg, gvs)
	if err != nil {
		return nil, err
	}
	files[filepath.ToSlash(filepath.Join(cfg.OutRoot, RegistryFileName))] = reg
	if cfg.ClientDir == "" {
		return files, nil
	}
	for _, gv := range gvs {
		src, err := generateClient(cfg, gv)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		files[filepath.ToSlash(filepath.Join(clientOutDir(cfg, gv), ClientFileName))] = src
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("convgen:\n  %s", strings.Join(errs, "\n  "))
	}
	creg, err := generateClientRegistry(cfg, gvs)
	if err != nil {
		return nil, err
	}
	files[filepath.ToSlash(filepath.Join(cfg.ClientDir, ClientRegistryFileName))] = creg
	return files, nil
}

// Write writes files under dir, creating directories as needed.
func Write(dir string, files map[string][]byte) error {
	for name, src := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, src, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func discover(cfg Config) ([]*groupVersion, error) {
	root := filepath.Join(cfg.Dir, cfg.APIRoot)
	groups, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("convgen: %w", err)
	}
	var out []*groupVersion
	for _, g := range groups {
		if !g.IsDir() {
			continue
		}
		versions, err := os.ReadDir(filepath.Join(root, g.Name()))
		if err != nil {
			return nil, err
		}
		for _, v := range versions {
			if !v.IsDir() {
				continue
			}
			grpcFiles, _ := filepath.Glob(filepath.Join(root, g.Name(), v.Name(), "*_grpc.pb.go"))
			if len(grpcFiles) == 0 {
				continue
			}
			out = append(out, &groupVersion{
				group:   g.Name(),
				version: v.Name(),
				apiDir:  filepath.Join(cfg.APIRoot, g.Name(), v.Name()),
				outDir:  filepath.Join(cfg.OutRoot, g.Name()+v.Name()),
			})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].group != out[j].group {
			return out[i].group < out[j].group
		}
		return CompareVersions(out[i].version, out[j].version) < 0
	})
	return out, nil
}

func load(cfg Config, gvs []*groupVersion) error {
	var patterns []string
	seenModel := map[string]bool{}
	for _, gv := range gvs {
		patterns = append(patterns, "./"+filepath.ToSlash(gv.apiDir))
		m := "./" + filepath.ToSlash(filepath.Join(cfg.ModelRoot, gv.group))
		if !seenModel[m] {
			seenModel[m] = true
			patterns = append(patterns, m)
		}
	}
	pcfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedSyntax | packages.NeedModule | packages.NeedFiles,
		Dir:  cfg.Dir,
	}
	pkgs, err := packages.Load(pcfg, patterns...)
	if err != nil {
		return fmt.Errorf("convgen: load: %w", err)
	}
	var loadErrs []string
	byDir := map[string]*packages.Package{}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			loadErrs = append(loadErrs, e.Error())
		}
		if len(p.GoFiles) > 0 {
			byDir[filepath.Dir(p.GoFiles[0])] = p
		}
	}
	if len(loadErrs) > 0 {
		return fmt.Errorf("convgen: load:\n  %s", strings.Join(loadErrs, "\n  "))
	}
	abs := func(rel string) string {
		a, _ := filepath.Abs(filepath.Join(cfg.Dir, rel))
		return a
	}
	for _, gv := range gvs {
		gv.apiPkg = byDir[abs(gv.apiDir)]
		gv.modelPkg = byDir[abs(filepath.Join(cfg.ModelRoot, gv.group))]
		if gv.apiPkg == nil {
			return fmt.Errorf("convgen: %s: package not loaded", gv.apiDir)
		}
		if gv.modelPkg == nil {
			return fmt.Errorf("convgen: %s/%s: no model package %s", gv.group, gv.version, filepath.Join(cfg.ModelRoot, gv.group))
		}
		// The output's import path follows from the api package's: both sit
		// in the same module at known relative paths.
		rel := filepath.ToSlash(gv.apiDir)
		if !strings.HasSuffix(gv.apiPkg.PkgPath, "/"+rel) {
			return fmt.Errorf("convgen: %s: import path %s does not end in its directory", gv.apiDir, gv.apiPkg.PkgPath)
		}
		base := strings.TrimSuffix(gv.apiPkg.PkgPath, "/"+rel)
		gv.outImport = base + "/" + filepath.ToSlash(gv.outDir)
		if cfg.ClientDir != "" {
			gv.clientImport = base + "/" + filepath.ToSlash(clientOutDir(cfg, gv))
		}
	}
	return nil
}

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

// service describes the version's gRPC service.
type service struct {
	name     string // Go name, e.g. Disk
	fullName string // e.g. v1.Disk
	methods  []*types.Func
}

var fullMethodName = regexp.MustCompile(`^/([^/]+)/[^/]+$`)

func findService(pkg *packages.Package) (*service, error) {
	scope := pkg.Types.Scope()
	var svcs []*service
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		tn, ok := obj.(*types.TypeName)
		if !ok || !strings.HasSuffix(name, "Server") {
			continue
		}
		iface, ok := tn.Type().Underlying().(*types.Interface)
		if !ok {
			continue
		}
		svcName := strings.TrimSuffix(name, "Server")
		marker := "mustEmbedUnimplemented" + name
		var methods []*types.Func
		found := false
		for i := 0; i < iface.NumMethods(); i++ {
			m := iface.Method(i)
			if m.Name() == marker {
				found = true
				continue
			}
			methods = append(methods, m)
		}
		if !found {
			continue
		}
		svc := &service{name: svcName, methods: methods}
		for _, m := range methods {
			c, ok := scope.Lookup(svcName + "_" + m.Name() + "_FullMethodName").(*types.Const)
			if !ok {
				continue
			}
			if sm := fullMethodName.FindStringSubmatch(constant(c)); sm != nil {
				svc.fullName = sm[1]
				break
			}
		}
		if svc.fullName == "" {
			return nil, fmt.Errorf("%s: cannot tell the gRPC service name of %s", pkg.PkgPath, name)
		}
		sort.Slice(svc.methods, func(i, j int) bool { return svc.methods[i].Pos() < svc.methods[j].Pos() })
		svcs = append(svcs, svc)
	}
	if len(svcs) != 1 {
		return nil, fmt.Errorf("%s: want exactly one gRPC service, found %d", pkg.PkgPath, len(svcs))
	}
	return svcs[0], nil
}

func constant(c *types.Const) string {
	s, err := strconv.Unquote(c.Val().ExactString())
	if err != nil {
		return ""
	}
	return s
}

// direction of a conversion.
type direction int

const (
	toModel direction = iota
	fromModel
)

func (d direction) prefix() string {
	if d == toModel {
		return "toModel"
	}
	return "fromModel"
}

// conv is one conversion function the adapter needs, between the wire
// message wire and the model type model (the same name unless an RPC is
// renamed).
type conv struct {
	dir   direction
	wire  string
	model string
}

func (c conv) funcName() string { return c.dir.prefix() + c.wire }

// gen accumulates one adapter file.
type gen struct {
	cfg      Config
	gv       *groupVersion
	hw       handWritten
	modelPkg string // model package name, e.g. disk
	buf      bytes.Buffer
	queue    []conv
	queued   map[conv]bool
	funcs    map[string]conv // function name -> the conversion it is
	client   bool            // generating client stubs, not adapters
	outDir   string          // the output package's directory, relative to Config.Dir
	requests map[conv]bool   // the conversions of an RPC's request or response that may fail
	nested   map[conv]bool   // conversions called for a message's field
	ignored  map[string]bool // //convgen:ignore names that matched a field
	errs     []string
}

func (g *gen) p(format string, args ...any) { fmt.Fprintf(&g.buf, format, args...) }

func (g *gen) need(c conv) string {
	if prev, ok := g.funcs[c.funcName()]; ok && prev != c {
		g.errs = append(g.errs, fmt.Sprintf("%s/%s: %s would convert to both %s.%s and %s.%s", g.gv.group, g.gv.version, c.funcName(), g.modelPkg, prev.model, g.modelPkg, c.model))
		return c.funcName()
	}
	if !g.queued[c] {
		g.queued[c] = true
		g.funcs[c.funcName()] = c
		g.queue = append(g.queue, c)
	}
	return c.funcName()
}

func generateAdapter(cfg Config, gv *groupVersion) ([]byte, error) {
	svc, err := findService(gv.apiPkg)
	if err != nil {
		return nil, err
	}
	hw, err := scanHandWritten(filepath.Join(cfg.Dir, gv.outDir), "Server")
	if err != nil {
		return nil, err
	}
	if len(hw.skip) > 0 {
		hw.errs = append(hw.errs, fmt.Sprintf("%s: //convgen:skip is for client stubs only: the daemon serves every RPC", gv.outDir))
	}
	modelIface, err := modelInterface(gv)
	if err != nil {
		return nil, err
	}
	g := newGen(cfg, gv, hw, gv.outDir, false)
	pkgName := gv.group + gv.version
	g.p("// Code generated by %s from %s and %s. DO NOT EDIT.\n\n", cfg.Tool, filepath.ToSlash(gv.apiDir), filepath.ToSlash(filepath.Join(cfg.ModelRoot, gv.group)))
	g.p("// Package %s serves the %s %s API (gRPC service %s) on top of the\n// %s group: it converts, calls, converts back and maps errors.\n", pkgName, gv.group, gv.version, svc.fullName, g.modelPkg)
	g.p("package %s\n\n", pkgName)
	g.p("import (\n\t\"context\"\n\n\t\"google.golang.org/grpc\"\n\n\tpb %q\n\t%q\n\t%q\n)\n\n", gv.apiPkg.PkgPath, cfg.ErrdefsPath, gv.modelPkg.PkgPath)
	g.p("// ServiceName is the fully qualified gRPC service this package serves.\nconst ServiceName = %q\n\n", svc.fullName)
	g.p("// Server serves %s by calling a %s.Interface.\ntype Server struct {\n\tpb.Unimplemented%sServer\n\tgroup %s.Interface\n}\n\n", svc.fullName, g.modelPkg, svc.name, g.modelPkg)
	g.p("var _ pb.%sServer = (*Server)(nil)\n\n", svc.name)
	g.p("// New returns a Server backed by group.\nfunc New(group %s.Interface) *Server { return &Server{group: group} }\n\n", g.modelPkg)
	g.p("// Register registers a Server backed by group on s.\nfunc Register(s grpc.ServiceRegistrar, group %s.Interface) {\n\tpb.Register%sServer(s, New(group))\n}\n", g.modelPkg, svc.name)

	rpcs := map[string]bool{}
	for _, m := range svc.methods {
		rpcs[m.Name()] = true
	}
	for _, rpc := range sortedKeys(hw.renames) {
		switch {
		case !rpcs[rpc]:
			g.errs = append(g.errs, fmt.Sprintf("%s/%s: //convgen:rename %s=%s: %s has no RPC %s", gv.group, gv.version, rpc, hw.renames[rpc], svc.fullName, rpc))
		case hw.methods[rpc]:
			g.errs = append(g.errs, fmt.Sprintf("%s/%s: //convgen:rename %s=%s: a hand-written (s *Server) %s serves the RPC already", gv.group, gv.version, rpc, hw.renames[rpc], rpc))
		}
	}
	for _, m := range svc.methods {
		if hw.methods[m.Name()] {
			continue // hand-written handler
		}
		sig := m.Type().(*types.Signature)
		reqT := messageName(sig.Params().At(1).Type())
		respT := messageName(sig.Results().At(0).Type())
		target, renamed := hw.renames[m.Name()]
		if !renamed {
			target = m.Name()
		}
		mm := lookupMethod(modelIface, target)
		if mm == nil {
			if renamed {
				g.errs = append(g.errs, fmt.Sprintf("%s/%s: //convgen:rename %s=%s: %s.Interface has no method %s", gv.group, gv.version, m.Name(), target, g.modelPkg, target))
				continue
			}
			g.errs = append(g.errs, fmt.Sprintf("%s/%s: RPC %s has no method in %s.Interface; add //convgen:rename %s=<Method> to a hand-written file of %s if a method does the same under another name, or write func (s *Server) %s(ctx context.Context, in *pb.%s) (*pb.%s, error) there", gv.group, gv.version, m.Name(), g.modelPkg, m.Name(), gv.outDir, m.Name(), reqT, respT))
			continue
		}
		msig := mm.Type().(*types.Signature)
		if msig.Params().Len() != 2 || msig.Results().Len() != 2 {
			g.errs = append(g.errs, fmt.Sprintf("%s/%s: %s.Interface.%s is not func(context.Context, *Request) (*Response, error)", gv.group, gv.version, g.modelPkg, target))
			continue
		}
		in := conv{toModel, reqT, messageName(msig.Params().At(1).Type())}
		out := conv{fromModel, respT, messageName(msig.Results().At(0).Type())}
		g.requests[in] = true
		if renamed {
			g.p("\n// %s serves %s/%s with the group's %s (//convgen:rename).\n", m.Name(), svc.fullName, m.Name(), target)
		} else {
			g.p("\n// %s serves %s/%s.\n", m.Name(), svc.fullName, m.Name())
		}
		g.p("func (s *Server) %s(ctx context.Context, in *pb.%s) (*pb.%s, error) {\n", m.Name(), reqT, respT)
		if hw.fallible[in.funcName()] {
			// The hand-written request conversion can fail: its error is the
			// client's, reported before the group is called.
			g.p("\treq, err := %s(in)\n", g.need(in))
			g.p("\tif err != nil {\n\t\treturn nil, errdefs.ToGRPC(err)\n\t}\n")
			g.p("\tout, err := s.group.%s(ctx, req)\n", target)
		} else {
			g.p("\tout, err := s.group.%s(ctx, %s(in))\n", target, g.need(in))
		}
		g.p("\tif err != nil {\n\t\treturn nil, errdefs.ToGRPC(err)\n\t}\n")
		// gRPC cannot send a nil message; an empty response is what a nil
		// model response means.
		g.p("\tif out == nil {\n\t\treturn &pb.%s{}, nil\n\t}\n", respT)
		g.p("\treturn %s(out), nil\n}\n", g.need(out))
	}
	for i := 0; i < len(g.queue); i++ {
		g.conversion(g.queue[i])
	}
	for _, lower := range sortedKeys(hw.ignore) {
		if !g.ignored[lower] {
			g.errs = append(g.errs, fmt.Sprintf("%s/%s: //convgen:ignore %s: no converted message has such a field", gv.group, gv.version, hw.ignore[lower]))
		}
	}
	if len(g.errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(g.errs, "\n  "))
	}
	src, err := format.Source(g.buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s: gofmt of generated code: %w\n%s", gv.outDir, err, g.buf.String())
	}
	return src, nil
}

func lookupMethod(iface *types.Interface, name string) *types.Func {
	for i := 0; i < iface.NumMethods(); i++ {
		if m := iface.Method(i); m.Name() == name {
			return m
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// messageName returns the name of *pb.Msg.
func messageName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Name()
	}
	return t.String()
}

func (g *gen) structOf(pkg *packages.Package, name string) *types.Struct {
	tn, ok := pkg.Types.Scope().Lookup(name).(*types.TypeName)
	if !ok {
		return nil
	}
	s, _ := tn.Type().Underlying().(*types.Struct)
	return s
}

// conversion emits the function for c, or its auto part when an override
// exists.
func (g *gen) conversion(c conv) {
	override := g.hw.funcs[c.funcName()]
	if override && g.hw.fallible[c.funcName()] && !g.mayFail(c) {
		what := "an RPC's request"
		if g.client {
			what = "an RPC's request or response"
		}
		g.errs = append(g.errs, fmt.Sprintf("%s/%s: %s returns an error, which only the conversion of %s may; write %s", g.gv.group, g.gv.version, c.funcName(), what, g.signature(c, c.funcName())))
	}
	wire := g.structOf(g.gv.apiPkg, c.wire)
	model := g.structOf(g.gv.modelPkg, c.model)
	if wire == nil {
		g.errs = append(g.errs, fmt.Sprintf("%s/%s: no message %s", g.gv.group, g.gv.version, c.wire))
		return
	}
	if model == nil {
		if !override {
			g.errs = append(g.errs, fmt.Sprintf("%s/%s: message %s has no type %s.%s; write %s in a hand-written file of %s", g.gv.group, g.gv.version, c.wire, g.modelPkg, c.model, g.signature(c, c.funcName()), g.outDir))
		}
		return
	}
	var body bytes.Buffer
	var unmatched, orphans []string // orphans: wire fields with no model field
	for i := 0; i < wire.NumFields(); i++ {
		wf := wire.Field(i)
		if !wf.Exported() || strings.HasPrefix(wf.Name(), "XXX_") {
			continue
		}
		if _, ok := g.hw.ignore[strings.ToLower(wf.Name())]; ok {
			g.ignored[strings.ToLower(wf.Name())] = true
			if c.dir == toModel {
				fmt.Fprintf(&body, "\t// in.%s is dropped (//convgen:ignore).\n", wf.Name())
			} else {
				fmt.Fprintf(&body, "\t// out.%s stays empty (//convgen:ignore).\n", wf.Name())
			}
			continue
		}
		mf := fieldFold(model, wf.Name())
		if mf == nil {
			unmatched = append(unmatched, fmt.Sprintf("%s has no counterpart", wf.Name()))
			orphans = append(orphans, wf.Name())
			continue
		}
		var code string
		var ok bool
		if c.dir == toModel {
			code, ok = g.assign("out."+mf.Name(), "in."+wf.Name(), mf.Type(), wf.Type(), toModel)
		} else {
			code, ok = g.assign("out."+wf.Name(), "in."+mf.Name(), wf.Type(), mf.Type(), fromModel)
		}
		if !ok {
			unmatched = append(unmatched, fmt.Sprintf("%s (%s) and %s (%s) differ in type", wf.Name(), g.typeString(wf.Type()), mf.Name(), g.typeString(mf.Type())))
			continue
		}
		body.WriteString(code)
	}
	// A client must not drop what the caller asked for: model fields the
	// wire message has no field for are refused when set, unless an
	// override carries them some other way.
	uncarried := g.uncarried(c)
	if len(uncarried) > 0 && !override && !g.mayFail(c) {
		unmatched = append(unmatched, fmt.Sprintf("model field %s has no counterpart", strings.Join(uncarried, " and ")))
	}
	name := c.funcName()
	if override {
		name = "auto" + strings.ToUpper(name[:1]) + name[1:]
		for _, f := range uncarried {
			unmatched = append(unmatched, fmt.Sprintf("model field %s has no counterpart", f))
		}
	} else if len(unmatched) > 0 {
		write := g.signature(c, c.funcName())
		if g.mayFail(c) {
			write += fmt.Sprintf(" (or, if the conversion can fail, one returning (%s, error))", g.resultType(c))
		}
		ignore := ""
		if len(orphans) > 0 {
			ignore = fmt.Sprintf("; or, if %s carries nothing the model needs, add //convgen:ignore %s there", strings.Join(orphans, " and "), strings.Join(orphans, " "))
		}
		g.errs = append(g.errs, fmt.Sprintf("%s/%s: %s: %s; write %s in a hand-written file of %s (it may call the generated auto%s)%s",
			g.gv.group, g.gv.version, c.wire, strings.Join(unmatched, ", "), write, g.outDir, strings.ToUpper(name[:1])+name[1:], ignore))
		return
	}
	if override && len(unmatched) > 0 {
		g.p("\n// %s converts the fields of %s that match by name; the hand-written\n// %s handles the rest: %s.\n", name, c.wire, c.funcName(), strings.Join(unmatched, "; "))
	} else if override {
		g.p("\n// %s converts the fields of %s that match by name, for the\n// hand-written %s.\n", name, c.wire, c.funcName())
	} else if c.dir == toModel && c.model == c.wire {
		g.p("\n// %s converts a wire %s into the model's.\n", name, c.wire)
	} else if c.dir == toModel {
		g.p("\n// %s converts a wire %s into the model's %s.\n", name, c.wire, c.model)
	} else if c.model == c.wire {
		g.p("\n// %s converts a model %s into the wire's.\n", name, c.wire)
	} else {
		g.p("\n// %s converts a model %s into the wire's %s.\n", name, c.model, c.wire)
	}
	if !override && len(uncarried) > 0 {
		// Generated fallible conversion: refuse what the version cannot carry.
		g.p("%s {\n\tif in == nil {\n\t\treturn nil, nil\n\t}\n", g.fallibleSignature(c, name))
		for _, f := range uncarried {
			mf := fieldFold(model, f)
			g.p("\tif %s {\n\t\treturn nil, errdefs.Errorf(errdefs.ErrInvalidArgument, %q)\n\t}\n",
				nonZero("in."+mf.Name(), mf.Type()),
				fmt.Sprintf("%s.%s is set, but the %s %s API has no field for it: leave it unset or use a daemon that serves a version with it", c.model, mf.Name(), g.gv.group, g.gv.version))
		}
		g.p("\tout := &%s{}\n", g.target(c))
		g.buf.Write(body.Bytes())
		g.p("\treturn out, nil\n}\n")
		return
	}
	g.p("%s {\n\tif in == nil {\n\t\treturn nil\n\t}\n", g.signature(c, name))
	g.p("\tout := &%s{}\n", g.target(c))
	g.buf.Write(body.Bytes())
	g.p("\treturn out\n}\n")
}

// modelInterface returns the Interface type of gv's model package, the
// methods an adapter serves and a client stub implements.
func modelInterface(gv *groupVersion) (*types.Interface, error) {
	iface, ok := gv.modelPkg.Types.Scope().Lookup("Interface").(*types.TypeName)
	if !ok {
		return nil, fmt.Errorf("%s: no Interface type", gv.modelPkg.PkgPath)
	}
	modelIface, ok := iface.Type().Underlying().(*types.Interface)
	if !ok {
		return nil, fmt.Errorf("%s: Interface is not an interface", gv.modelPkg.PkgPath)
	}
	return modelIface, nil
}

// newGen returns a generator for one output package of gv (an adapter, or
// with client a client stub) in outDir, starting with hw's errors.
func newGen(cfg Config, gv *groupVersion, hw handWritten, outDir string, client bool) *gen {
	g := &gen{cfg: cfg, gv: gv, hw: hw, modelPkg: gv.modelPkg.Name, outDir: outDir, client: client, queued: map[conv]bool{},
		funcs: map[string]conv{}, requests: map[conv]bool{}, nested: map[conv]bool{}, ignored: map[string]bool{}}
	g.errs = append(g.errs, hw.errs...)
	return g
}

// mayFail tells whether the conversion c may return an error: an adapter's
// request conversion (a malformed request is the caller's error), or a
// client stub's request or response conversion (a field the version cannot
// carry, a malformed answer), but never a nested message's.
func (g *gen) mayFail(c conv) bool {
	if !g.requests[c] || g.nested[c] {
		return false
	}
	return g.client || c.dir == toModel
}

// fallible tells whether the function for c returns an error: a
// hand-written override that does, or a generated client conversion that
// must refuse model fields its version cannot carry.
func (g *gen) fallible(c conv) bool {
	if g.hw.funcs[c.funcName()] {
		return g.hw.fallible[c.funcName()]
	}
	return len(g.uncarried(c)) > 0
}

// uncarried returns, for a client stub's conversion of a model message to
// the wire, the model fields no wire field matches by name. An adapter
// leaves a model field the wire lacks at its zero value, which is right:
// the older version never had it. A client sending it would drop the
// caller's value silently, so the client refuses a set value instead.
func (g *gen) uncarried(c conv) []string {
	if !g.client || c.dir != fromModel {
		return nil
	}
	wire := g.structOf(g.gv.apiPkg, c.wire)
	model := g.structOf(g.gv.modelPkg, c.model)
	if wire == nil || model == nil {
		return nil
	}
	var out []string
	for i := 0; i < model.NumFields(); i++ {
		mf := model.Field(i)
		if mf.Exported() && fieldFold(wire, mf.Name()) == nil {
			out = append(out, mf.Name())
		}
	}
	return out
}

// nonZero returns a condition that holds when expr, of type t, is set.
func nonZero(expr string, t types.Type) string {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsBoolean != 0:
			return expr
		case u.Info()&types.IsString != 0:
			return expr + ` != ""`
		}
		return expr + " != 0"
	case *types.Slice, *types.Map:
		return "len(" + expr + ") != 0"
	}
	return expr + " != nil"
}

// resultType is what the function for c returns, without the error.
func (g *gen) resultType(c conv) string {
	if c.dir == toModel {
		return "*" + g.modelPkg + "." + c.model
	}
	return "*pb." + c.wire
}

func (g *gen) fallibleSignature(c conv, name string) string {
	if c.dir == toModel {
		return fmt.Sprintf("func %s(in *pb.%s) (*%s.%s, error)", name, c.wire, g.modelPkg, c.model)
	}
	return fmt.Sprintf("func %s(in *%s.%s) (*pb.%s, error)", name, g.modelPkg, c.model, c.wire)
}

func (g *gen) target(c conv) string {
	if c.dir == toModel {
		return g.modelPkg + "." + c.model
	}
	return "pb." + c.wire
}

func (g *gen) signature(c conv, name string) string {
	if c.dir == toModel {
		return fmt.Sprintf("func %s(in *pb.%s) *%s.%s", name, c.wire, g.modelPkg, c.model)
	}
	return fmt.Sprintf("func %s(in *%s.%s) *pb.%s", name, g.modelPkg, c.model, c.wire)
}

func fieldFold(s *types.Struct, name string) *types.Var {
	for i := 0; i < s.NumFields(); i++ {
		if f := s.Field(i); f.Exported() && strings.EqualFold(f.Name(), name) {
			return f
		}
	}
	return nil
}

// assign returns code that sets dst (of type dt) from src (of type st), in
// direction d, or false when the types cannot be converted.
func (g *gen) assign(dst, src string, dt, st types.Type, d direction) (string, bool) {
	// A client's response has empty, never nil, lists and maps, as library
	// mode's do: the wire cannot tell an empty list from none, and a driver
	// comparing results (or marshalling them) must not see the modes
	// differ.
	if g.client && d == toModel {
		if code, ok := g.assignNonNil(dst, src, dt, st, d); ok {
			return code, true
		}
	}
	if expr, ok := g.value(src, dt, st, d); ok {
		return fmt.Sprintf("\t%s = %s\n", dst, expr), true
	}
	switch dtt := dt.(type) {
	case *types.Slice:
		stt, ok := st.(*types.Slice)
		if !ok {
			return "", false
		}
		elem, ok := g.value("v", dtt.Elem(), stt.Elem(), d)
		if !ok {
			return "", false
		}
		return fmt.Sprintf("\tif %[2]s != nil {\n\t\t%[1]s = make(%[3]s, 0, len(%[2]s))\n\t\tfor _, v := range %[2]s {\n\t\t\t%[1]s = append(%[1]s, %[4]s)\n\t\t}\n\t}\n",
			dst, src, g.typeString(dt), elem), true
	case *types.Map:
		stt, ok := st.(*types.Map)
		if !ok {
			return "", false
		}
		// The elements first: even when the keys differ and an override
		// must convert the map, it can call the element conversion.
		elem, ok := g.value("v", dtt.Elem(), stt.Elem(), d)
		if !ok || !types.Identical(dtt.Key(), stt.Key()) {
			return "", false
		}
		return fmt.Sprintf("\tif %[2]s != nil {\n\t\t%[1]s = make(%[3]s, len(%[2]s))\n\t\tfor k, v := range %[2]s {\n\t\t\t%[1]s[k] = %[4]s\n\t\t}\n\t}\n",
			dst, src, g.typeString(dt), elem), true
	}
	return "", false
}

// assignNonNil is assign for a list or map that must come out empty rather
// than nil when src is nil or empty; false for other types and for maps
// whose keys differ (an override converts those).
func (g *gen) assignNonNil(dst, src string, dt, st types.Type, d direction) (string, bool) {
	switch dtt := dt.(type) {
	case *types.Slice:
		stt, ok := st.(*types.Slice)
		if !ok {
			return "", false
		}
		elem, ok := g.value("v", dtt.Elem(), stt.Elem(), d)
		if !ok {
			return "", false
		}
		return fmt.Sprintf("\t%[1]s = make(%[3]s, 0, len(%[2]s))\n\tfor _, v := range %[2]s {\n\t\t%[1]s = append(%[1]s, %[4]s)\n\t}\n",
			dst, src, g.typeString(dt), elem), true
	case *types.Map:
		stt, ok := st.(*types.Map)
		if !ok || !types.Identical(dtt.Key(), stt.Key()) {
			return "", false
		}
		elem, ok := g.value("v", dtt.Elem(), stt.Elem(), d)
		if !ok {
			return "", false
		}
		return fmt.Sprintf("\t%[1]s = make(%[3]s, len(%[2]s))\n\tfor k, v := range %[2]s {\n\t\t%[1]s[k] = %[4]s\n\t}\n",
			dst, src, g.typeString(dt), elem), true
	}
	return "", false
}

// value returns an expression converting src of type st to type dt.
func (g *gen) value(src string, dt, st types.Type, d direction) (string, bool) {
	if types.Identical(dt, st) {
		if isBasicOrBasicContainer(dt) {
			return src, true
		}
		return "", false
	}
	// Enums: named integer types on both sides share their numbering.
	if isNamedInteger(dt) && isNamedInteger(st) {
		return fmt.Sprintf("%s(%s)", g.typeString(dt), src), true
	}
	// Nested messages: *pb.X <-> *model.X with the same name.
	dp, ok1 := dt.(*types.Pointer)
	sp, ok2 := st.(*types.Pointer)
	if ok1 && ok2 {
		dn, ok1 := dp.Elem().(*types.Named)
		sn, ok2 := sp.Elem().(*types.Named)
		if ok1 && ok2 && dn.Obj().Name() == sn.Obj().Name() && isStruct(dn) && isStruct(sn) {
			c := conv{d, dn.Obj().Name(), dn.Obj().Name()}
			g.nested[c] = true
			return g.need(c) + "(" + src + ")", true
		}
	}
	return "", false
}

func isStruct(t types.Type) bool { _, ok := t.Underlying().(*types.Struct); return ok }

func isNamedInteger(t types.Type) bool {
	n, ok := t.(*types.Named)
	if !ok {
		return false
	}
	b, ok := n.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}

func isBasicOrBasicContainer(t types.Type) bool {
	switch tt := t.(type) {
	case *types.Basic:
		return true
	case *types.Slice:
		_, ok := tt.Elem().(*types.Basic)
		return ok
	case *types.Map:
		_, ok1 := tt.Key().(*types.Basic)
		_, ok2 := tt.Elem().(*types.Basic)
		return ok1 && ok2
	}
	return false
}

// typeString writes a type as the generated file spells it: the api
// package as pb, the model package by its name.
func (g *gen) typeString(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string {
		switch p.Path() {
		case g.gv.apiPkg.PkgPath:
			return "pb"
		case g.gv.modelPkg.PkgPath:
			return g.modelPkg
		}
		return p.Name()
	})
}

func generateRegistry(cfg Config, gvs []*groupVersion) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by %s. DO NOT EDIT.\n\npackage %s\n\nimport (\n\t\"google.golang.org/grpc\"\n\n", cfg.Tool, filepath.Base(cfg.OutRoot))
	for _, gv := range gvs {
		fmt.Fprintf(&b, "\t%q\n", gv.outImport)
	}
	b.WriteString(")\n\nvar generated = []API{\n")
	for _, gv := range gvs {
		pkg := gv.group + gv.version
		field := strings.ToUpper(gv.group[:1]) + gv.group[1:]
		fmt.Fprintf(&b, "\t{Group: %q, Version: %q, Service: %s.ServiceName, Register: func(s grpc.ServiceRegistrar, g Groups) { %s.Register(s, g.%s) }},\n", gv.group, gv.version, pkg, pkg, field)
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("convgen: gofmt of registry: %w\n%s", err, b.String())
	}
	return src, nil
}

// CompareVersions orders Kubernetes-style API versions: v1alpha1 < v1alpha2
// < v1beta1 < v1 < v2alpha1 < v2. It returns -1, 0 or 1.
func CompareVersions(a, b string) int {
	ka, kb := versionKey(a), versionKey(b)
	for i := range ka {
		if ka[i] != kb[i] {
			if ka[i] < kb[i] {
				return -1
			}
			return 1
		}
	}
	return strings.Compare(a, b)
}

var versionRE = regexp.MustCompile(`^v(\d+)(?:(alpha|beta)(\d+))?$`)

// versionKey maps a version to (major, stability, minor); unparseable
// versions sort first.
func versionKey(v string) [3]int {
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return [3]int{-1, 0, 0}
	}
	major, _ := strconv.Atoi(m[1])
	stability := 2
	switch m[2] {
	case "alpha":
		stability = 0
	case "beta":
		stability = 1
	}
	minor, _ := strconv.Atoi(m[3])
	return [3]int{major, stability, minor}
}
