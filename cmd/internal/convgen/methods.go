package convgen

// Method facts: what the generator knows about every method of every group,
// written out for the packages that need it and link no wire code:
//
//   - Config.GateDir gets the gate's method names: per group, every RPC of
//     every version, each once (callgate.Methods, which a policy is checked
//     against in the daemon and in library mode alike);
//   - Config.AuditDir gets whether each model Interface method changes the
//     node, from its //convgen:read or //convgen:mutates directive, and per
//     group which model method each RPC calls: its own, the one a
//     //convgen:rename names, or the one a hand-written handler calls. The
//     audit log classifies a call by either name;
//   - Config.HostMetricsDir gets the decorators that time each group's Host
//     (hostmetrics.go).
//
// A method is read or mutates by name alone (audit.Classify takes no
// group), so a name must mean the same in every group and version:
// generation fails when it does not.

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// MethodsFileName is the name of the method-facts file written to
// Config.GateDir and to Config.AuditDir.
const MethodsFileName = "zz_generated.methods.go"

// The model directives: one of them in the doc comment of every method of
// a group's Interface.
const (
	readDirective    = "read"
	mutatesDirective = "mutates"
)

// groupFacts is what a group's model and wire versions say about its
// methods.
type groupFacts struct {
	group   string
	model   *packages.Package
	rpcs    []string          // every RPC name over the versions, oldest version first, each once
	calls   map[string]string // RPC name -> the model Interface method serving it
	mutates map[string]bool   // model Interface method -> it changes the node
}

// generateFacts adds to files the method facts cfg asks for.
func generateFacts(cfg Config, gvs []*groupVersion, files map[string][]byte) error {
	if cfg.GateDir == "" && cfg.AuditDir == "" && cfg.HostMetricsDir == "" {
		return nil
	}
	groups, err := collectFacts(cfg, gvs)
	if err != nil {
		return err
	}
	type output struct {
		dir, file string
		gen       func(Config, []*groupFacts) ([]byte, error)
	}
	for _, o := range []output{
		{cfg.GateDir, MethodsFileName, generateGateMethods},
		{cfg.AuditDir, MethodsFileName, generateAuditMethods},
		{cfg.HostMetricsDir, HostMetricsFileName, generateHostMetrics},
	} {
		if o.dir == "" {
			continue
		}
		src, err := o.gen(cfg, groups)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(filepath.Join(o.dir, o.file))] = src
	}
	return nil
}

// collectFacts gathers, group by group in gvs' order, the RPC names and,
// when the audit tables are asked for, what each RPC calls and what each
// model method is.
func collectFacts(cfg Config, gvs []*groupVersion) ([]*groupFacts, error) {
	var groups []*groupFacts
	var errs []string
	for _, gv := range gvs {
		if len(groups) == 0 || groups[len(groups)-1].group != gv.group {
			groups = append(groups, &groupFacts{group: gv.group, model: gv.modelPkg, calls: map[string]string{}})
		}
		gf := groups[len(groups)-1]
		svc, err := findService(gv.apiPkg)
		if err != nil {
			return nil, err
		}
		for _, m := range svc.methods {
			if !slices.Contains(gf.rpcs, m.Name()) {
				gf.rpcs = append(gf.rpcs, m.Name())
			}
		}
		if cfg.AuditDir == "" {
			continue
		}
		errs = append(errs, rpcTargets(cfg, gv, svc, gf.calls)...)
	}
	if cfg.AuditDir != "" {
		for _, gf := range groups {
			var kindErrs []string
			gf.mutates, kindErrs = modelKinds(cfg, gf.model)
			errs = append(errs, kindErrs...)
		}
		errs = append(errs, sameEverywhere(groups)...)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("convgen:\n  %s", strings.Join(errs, "\n  "))
	}
	return groups, nil
}

// rpcTargets records in calls the model method each RPC of gv is served
// with, as its adapter serves it, and returns what is wrong.
func rpcTargets(cfg Config, gv *groupVersion, svc *service, calls map[string]string) []string {
	hw, err := loadHandWritten(cfg, gv, gv.outDir, "Server")
	if err != nil {
		return []string{err.Error()}
	}
	iface, err := modelInterface(gv)
	if err != nil {
		return []string{err.Error()}
	}
	var errs []string
	for _, m := range svc.methods {
		rpc := m.Name()
		target, renamed := hw.renames[rpc]
		how := "//convgen:rename " + rpc + "=" + target
		switch {
		case hw.methods[rpc]:
			called := hw.calls[rpc]
			if len(called) != 1 {
				what := "no method"
				if len(called) > 1 {
					what = strings.Join(called, ", ")
				}
				errs = append(errs, fmt.Sprintf("%s/%s: the hand-written (s *Server) %s calls %s of the group; it must call exactly one, directly (s.group.<Method>), for the audit log to tell whether %s changes the node", gv.group, gv.version, rpc, what, rpc))
				continue
			}
			target, how = called[0], "the hand-written (s *Server) "+rpc
		case !renamed:
			target, how = rpc, "RPC "+rpc
		}
		if lookupMethod(iface, target) == nil {
			errs = append(errs, fmt.Sprintf("%s/%s: %s: %s.Interface has no method %s", gv.group, gv.version, how, gv.modelPkg.Name, target))
			continue
		}
		if prev, ok := calls[rpc]; ok && prev != target {
			errs = append(errs, fmt.Sprintf("%s/%s: %s calls %s where an older version calls %s: an RPC name must mean one model method in every version", gv.group, gv.version, how, target, prev))
			continue
		}
		calls[rpc] = target
	}
	return errs
}

// groupCalls returns the group Interface methods the body of a
// hand-written handler calls (recv.group.M(...)), sorted, each once.
func groupCalls(fd *ast.FuncDecl) []string {
	if fd.Body == nil || len(fd.Recv.List) == 0 || len(fd.Recv.List[0].Names) == 0 {
		return nil
	}
	recv := fd.Recv.List[0].Names[0].Name
	var out []string
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		method, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		field, ok := method.X.(*ast.SelectorExpr)
		if !ok || field.Sel.Name != "group" {
			return true
		}
		if id, ok := field.X.(*ast.Ident); ok && id.Name == recv && !slices.Contains(out, method.Sel.Name) {
			out = append(out, method.Sel.Name)
		}
		return true
	})
	slices.Sort(out)
	return out
}

// modelKinds reads the //convgen:read and //convgen:mutates directives of
// the model package's Interface: method -> mutates. Every method must
// carry exactly one, in its doc comment; one anywhere else is an error.
func modelKinds(cfg Config, pkg *packages.Package) (map[string]bool, []string) {
	var errs []string
	where := func(p token.Pos) string {
		pos := pkg.Fset.Position(p)
		if root, err := filepath.Abs(cfg.Dir); err == nil {
			if rel, err := filepath.Rel(root, pos.Filename); err == nil {
				pos.Filename = filepath.ToSlash(rel)
			}
		}
		return pos.String()
	}
	tn, ok := pkg.Types.Scope().Lookup("Interface").(*types.TypeName)
	if !ok {
		return nil, []string{pkg.PkgPath + ": no Interface type"}
	}
	iface, ok := tn.Type().Underlying().(*types.Interface)
	if !ok {
		return nil, []string{pkg.PkgPath + ": Interface is not an interface"}
	}
	found := map[string][]string{}    // method -> the directives its doc comment carries
	placed := map[*ast.Comment]bool{} // the directives in a method's doc comment
	for _, f := range pkg.Syntax {
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || pkg.TypesInfo.Defs[ts.Name] != tn {
				return true
			}
			it, ok := ts.Type.(*ast.InterfaceType)
			if !ok {
				return false
			}
			for _, field := range it.Methods.List {
				if len(field.Names) == 0 || field.Doc == nil {
					continue
				}
				name := field.Names[0].Name
				for _, c := range field.Doc.List {
					if verb, _, ok := kindDirective(c.Text); ok {
						found[name] = append(found[name], verb)
						placed[c] = true
					}
				}
			}
			return false
		})
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				verb, args, ok := kindDirective(c.Text)
				switch {
				case !ok:
				case !placed[c]:
					errs = append(errs, fmt.Sprintf("%s: %s%s belongs in the doc comment of a method of %s.Interface", where(c.Pos()), directivePrefix, verb, pkg.Name))
				case args != "":
					errs = append(errs, fmt.Sprintf("%s: %s%s takes no arguments (a reason goes in the doc comment's prose)", where(c.Pos()), directivePrefix, verb))
				}
			}
		}
	}
	mutates := map[string]bool{}
	for i := 0; i < iface.NumMethods(); i++ {
		m := iface.Method(i)
		switch verbs := found[m.Name()]; len(verbs) {
		case 1:
			mutates[m.Name()] = verbs[0] == mutatesDirective
		case 0:
			errs = append(errs, fmt.Sprintf("%s: %s.Interface.%s: its doc comment needs %s%s or %s%s: say whether it changes the node (the audit log records and fails closed on what does)", where(m.Pos()), pkg.Name, m.Name(), directivePrefix, readDirective, directivePrefix, mutatesDirective))
		default:
			errs = append(errs, fmt.Sprintf("%s: %s.Interface.%s: its doc comment has %d read/mutates directives (%s); want exactly one", where(m.Pos()), pkg.Name, m.Name(), len(verbs), strings.Join(verbs, ", ")))
		}
	}
	return mutates, errs
}

// kindDirective parses a //convgen:read or //convgen:mutates comment; other
// comments, other directives included, are not one.
func kindDirective(text string) (verb, args string, ok bool) {
	rest, ok := strings.CutPrefix(text, directivePrefix)
	if !ok {
		return "", "", false
	}
	verb, args, _ = strings.Cut(rest, " ")
	if verb != readDirective && verb != mutatesDirective {
		return "", "", false
	}
	return verb, strings.TrimSpace(args), true
}

// sameEverywhere checks that a name, model method or RPC, is read in every
// group that has it or mutates in every group that has it: the audit log
// classifies by name alone. A method whose directive or an RPC whose
// model method is not known (an error already says why) is left out.
func sameEverywhere(groups []*groupFacts) []string {
	type seen struct {
		mutates bool
		what    string
	}
	byName := map[string]seen{}
	var errs []string
	check := func(name string, mutates bool, what string) {
		prev, ok := byName[name]
		if !ok {
			byName[name] = seen{mutates, what}
			return
		}
		if prev.mutates != mutates {
			errs = append(errs, fmt.Sprintf("%s is %s as %s but %s as %s: the audit log classifies a method by its name alone, so a name must be read everywhere or mutate everywhere", name, kindWord(prev.mutates), prev.what, kindWord(mutates), what))
		}
	}
	for _, gf := range groups {
		for _, m := range sortedKeys(gf.mutates) {
			check(m, gf.mutates[m], fmt.Sprintf("%s.Interface.%s", gf.group, m))
		}
		for _, rpc := range gf.rpcs {
			m := gf.calls[rpc]
			if mutates, ok := gf.mutates[m]; ok {
				check(rpc, mutates, fmt.Sprintf("%s's RPC %s (calling %s)", gf.group, rpc, m))
			}
		}
	}
	return errs
}

func kindWord(mutates bool) string {
	if mutates {
		return mutatesDirective
	}
	return readDirective
}

// generateGateMethods writes the gate's method names, per group.
func generateGateMethods(cfg Config, groups []*groupFacts) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by %s from %s. DO NOT EDIT.\n\npackage %s\n\n", cfg.Tool, filepath.ToSlash(cfg.APIRoot), filepath.Base(cfg.GateDir))
	b.WriteString(`// Methods are the method names of each API group, over every version the
// daemon serves (the older versions' names included), each once, oldest
// version first, then the model methods no wire version has (library
// mode's only, such as disk SetDiskReadOnly), by name: the names a policy
// rule may list (read only). The daemon and library mode both take them
// from here; library mode links no wire code, so convgen writes them out
// from the wire stubs and the group models.
var Methods = map[string][]string{
`)
	for _, gf := range groups {
		fmt.Fprintf(&b, "\t%q: {", gf.group)
		names := slices.Clone(gf.rpcs)
		for _, m := range sortedKeys(gf.mutates) {
			if !slices.Contains(names, m) {
				names = append(names, m)
			}
		}
		for i, name := range names {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", name)
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n")
	return formatFacts(cfg.GateDir, b.Bytes())
}

// generateAuditMethods writes the read/mutate table of the model methods
// and the model method each RPC calls, per group.
func generateAuditMethods(cfg Config, groups []*groupFacts) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by %s from %s, %s and %s. DO NOT EDIT.\n\npackage %s\n\n", cfg.Tool, filepath.ToSlash(cfg.ModelRoot), filepath.ToSlash(cfg.APIRoot), filepath.ToSlash(cfg.OutRoot), filepath.Base(cfg.AuditDir))
	b.WriteString(`// modelMutates tells, per group, whether each method of the group's model
// Interface changes the node: its //convgen:mutates or //convgen:read.
var modelMutates = map[string]map[string]bool{
`)
	for _, gf := range groups {
		fmt.Fprintf(&b, "\t%q: {\n", gf.group)
		for _, m := range sortedKeys(gf.mutates) {
			fmt.Fprintf(&b, "\t\t%q: %t,\n", m, gf.mutates[m])
		}
		b.WriteString("\t},\n")
	}
	b.WriteString(`}

// wireMethods names, per group, the model Interface method each RPC of
// every wire version calls: its own name, the one a //convgen:rename
// gives, or the one a hand-written handler calls.
var wireMethods = map[string]map[string]string{
`)
	for _, gf := range groups {
		fmt.Fprintf(&b, "\t%q: {\n", gf.group)
		for _, rpc := range sortedKeys(gf.calls) {
			fmt.Fprintf(&b, "\t\t%q: %q,\n", rpc, gf.calls[rpc])
		}
		b.WriteString("\t},\n")
	}
	b.WriteString("}\n")
	return formatFacts(cfg.AuditDir, b.Bytes())
}

func formatFacts(dir string, src []byte) ([]byte, error) {
	out, err := format.Source(src)
	if err != nil {
		return nil, fmt.Errorf("convgen: %s: gofmt of generated code: %w\n%s", filepath.ToSlash(dir), err, src)
	}
	return out, nil
}
