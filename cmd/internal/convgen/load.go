package convgen

// Loading: finding the api/<group>/<version> packages, loading them and
// their models with go/packages, and reading the service and message types.

import (
	"fmt"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

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
