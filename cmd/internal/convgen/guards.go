package convgen

// Guards: the call gate's face of every group (one guarded groups.Set that
// the daemon's adapters and library mode both call), the accessors that
// read a model request's paths, disks and volumes from the declarations
// on its type, and library mode's Node accessors.

import (
	"bytes"
	"fmt"
	"go/format"
	"go/types"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/fieldname"
)

// GuardTag is the struct tag by which a group model request declares what
// each of its fields holds. Every field of every request type must carry
// one, so adding a field is a decision about what the gate must confine,
// not a name the gate might or might not recognise:
//
//	guard:"path"    a host path (string or []string): confined by a rule's pathRoots
//	guard:"disk"    a disk number (uint32): confined by a rule's objects
//	guard:"volume"  a volume ID (string): confined by a rule's objects
//	guard:"secret"  a secret (string): never logged or audited
//	guard:"-"       none of these (a flag, a size, a remote share, a name)
const GuardTag = "guard"

// Output files of the guard generator.
const (
	GuardFileName = "zz_generated.guard.go"
	NodeFileName  = "zz_generated.groups.go"
)

// modelGroup is one group model package and what the guards need of it.
type modelGroup struct {
	name    string // disk
	pkg     *types.Package
	methods []*types.Func // the Interface's methods, by name
}

// modelGroups returns the distinct group models of gvs, in group order.
func modelGroups(gvs []*groupVersion) ([]*modelGroup, error) {
	var out []*modelGroup
	seen := map[string]bool{}
	for _, gv := range gvs {
		if seen[gv.group] {
			continue
		}
		seen[gv.group] = true
		obj := gv.modelPkg.Types.Scope().Lookup("Interface")
		if obj == nil {
			return nil, fmt.Errorf("convgen: %s has no Interface", gv.modelPkg.PkgPath)
		}
		iface, ok := obj.Type().Underlying().(*types.Interface)
		if !ok {
			return nil, fmt.Errorf("convgen: %s.Interface is no interface", gv.modelPkg.PkgPath)
		}
		g := &modelGroup{name: gv.group, pkg: gv.modelPkg.Types}
		for i := range iface.NumMethods() {
			g.methods = append(g.methods, iface.Method(i))
		}
		sort.Slice(g.methods, func(i, j int) bool { return g.methods[i].Name() < g.methods[j].Name() })
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// requestType returns the named request type of an Interface method,
// func(context.Context, *Req) (*Resp, error), and its response's name.
func requestType(g *modelGroup, m *types.Func) (*types.Named, string, error) {
	sig := m.Type().(*types.Signature)
	if sig.Params().Len() != 2 || sig.Results().Len() != 2 {
		return nil, "", fmt.Errorf("%s.Interface.%s: want func(context.Context, *Req) (*Resp, error)", g.name, m.Name())
	}
	req, ok1 := pointee(sig.Params().At(1).Type())
	resp, ok2 := pointee(sig.Results().At(0).Type())
	if !ok1 || !ok2 || req.Obj().Pkg() != g.pkg || resp.Obj().Pkg() != g.pkg {
		return nil, "", fmt.Errorf("%s.Interface.%s: request and response must be pointers to the group's own types", g.name, m.Name())
	}
	return req, resp.Obj().Name(), nil
}

func pointee(t types.Type) (*types.Named, bool) {
	p, ok := t.(*types.Pointer)
	if !ok {
		return nil, false
	}
	n, ok := p.Elem().(*types.Named)
	return n, ok
}

// guardedField is one field of a request that the gate confines.
type guardedField struct {
	goName, field, kind string // kind: path, disk or volume
	list                bool   // a []string of paths
}

// guardedFields reads the guard tags of a request struct, checking that
// every field has one that fits its type.
func guardedFields(g *modelGroup, req *types.Named) ([]guardedField, []string) {
	st, ok := req.Underlying().(*types.Struct)
	if !ok {
		return nil, []string{fmt.Sprintf("%s.%s is no struct", g.name, req.Obj().Name())}
	}
	var out []guardedField
	var errs []string
	for i := range st.NumFields() {
		f := st.Field(i)
		if !f.Exported() {
			continue
		}
		where := fmt.Sprintf("%s.%s.%s", g.name, req.Obj().Name(), f.Name())
		tag, ok := reflect.StructTag(st.Tag(i)).Lookup(GuardTag)
		if !ok {
			errs = append(errs, fmt.Sprintf(`%s has no %s tag: declare what it holds (path, disk, volume, secret, or "-" for none of these; see convgen.GuardTag)`, where, GuardTag))
			continue
		}
		basic := func(k types.BasicKind) bool {
			b, ok := f.Type().Underlying().(*types.Basic)
			return ok && b.Kind() == k
		}
		gf := guardedField{goName: f.Name(), field: fieldname.Snake(f.Name()), kind: tag}
		switch tag {
		case "-":
			continue
		case "path":
			if s, ok := f.Type().(*types.Slice); ok {
				b, ok := s.Elem().Underlying().(*types.Basic)
				gf.list = ok && b.Kind() == types.String
				if !gf.list {
					errs = append(errs, where+`: guard:"path" needs a string or []string`)
					continue
				}
			} else if !basic(types.String) {
				errs = append(errs, where+`: guard:"path" needs a string or []string`)
				continue
			}
		case "volume", "secret":
			if !basic(types.String) {
				errs = append(errs, fmt.Sprintf(`%s: guard:%q needs a string`, where, tag))
				continue
			}
			if tag == "secret" {
				continue // the audit log reads this tag itself
			}
		case "disk":
			if !basic(types.Uint32) {
				errs = append(errs, where+`: guard:"disk" needs a uint32 disk number`)
				continue
			}
		default:
			errs = append(errs, fmt.Sprintf(`%s: unknown guard %q (path, disk, volume, secret or "-")`, where, tag))
			continue
		}
		out = append(out, gf)
	}
	return out, errs
}

// argKinds are the policy's names of the guarded kinds.
var argKinds = map[string]string{"path": "policy.ArgPath", "disk": "policy.ArgDisk", "volume": "policy.ArgVolume"}

// generateGuards returns the call gate's guard file and library mode's
// Node accessors, keyed by path relative to cfg.Dir.
func generateGuards(cfg Config, gvs []*groupVersion) (map[string][]byte, error) {
	groups, err := modelGroups(gvs)
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		return nil, nil
	}
	gate, err := generateGateGuards(cfg, groups)
	if err != nil {
		return nil, err
	}
	node, err := generateNodeAccessors(cfg, groups)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		filepath.ToSlash(filepath.Join(cfg.GateDir, GuardFileName)):   gate,
		filepath.ToSlash(filepath.Join(cfg.LibraryDir, NodeFileName)): node,
	}, nil
}

func generateGateGuards(cfg Config, groups []*modelGroup) ([]byte, error) {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	root := path.Dir(groups[0].pkg.Path())
	p("// Code generated by %s from the group models under %s. DO NOT EDIT.\n\npackage %s\n\nimport (\n\t\"context\"\n\n", cfg.Tool, cfg.ModelRoot, path.Base(cfg.GateDir))
	p("\t%q\n", root)
	for _, g := range groups {
		p("\t%q\n", g.pkg.Path())
	}
	p("\t%q\n)\n\n", cfg.PolicyPath)

	p("// Guard returns s with every method of every group going through g:\n")
	p("// the one guarded groups.Set that the daemon's adapters and library\n")
	p("// mode both call, so the gate sees every call as its group's model\n// request, whatever API version carried it.\n")
	p("func (g *Gate) Guard(s %s.Set) %s.Set {\n\treturn %s.Set{\n", path.Base(root), path.Base(root), path.Base(root))
	for _, g := range groups {
		p("\t\t%s: %sGuard{g: g, s: s.%s},\n", setField(g.name), g.name, setField(g.name))
	}
	p("\t}\n}\n")

	var errs []string
	type reqCase struct {
		typ    string
		fields []guardedField
	}
	var cases []reqCase
	seenReq := map[string]bool{}
	for _, g := range groups {
		typ := g.name + "Guard"
		p("\n// %s is the %s group behind the gate.\n", typ, g.name)
		p("type %s struct {\n\tg *Gate\n\ts %s.Interface\n}\n\nvar _ %s.Interface = %sGuard{}\n", typ, g.name, g.name, g.name)
		for _, m := range g.methods {
			req, resp, err := requestType(g, m)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			q := g.name + "." + req.Obj().Name()
			p("\n// %s runs the %s group's %s through the gate.\n", m.Name(), g.name, m.Name())
			p("func (x %s) %s(ctx context.Context, r *%s) (*%s.%s, error) {\n", typ, m.Name(), q, g.name, resp)
			p("\treturn run(ctx, x.g, %q, %q, r, x.s.%s)\n}\n", g.name, m.Name(), m.Name())
			if seenReq[q] {
				continue
			}
			seenReq[q] = true
			fields, ferrs := guardedFields(g, req)
			errs = append(errs, ferrs...)
			cases = append(cases, reqCase{typ: q, fields: fields})
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("convgen: guards:\n  %s", strings.Join(errs, "\n  "))
	}

	p("\n// appendArgs appends the paths, disks and volumes a model request\n")
	p("// names, as its type's guard tags declare them, and tells whether req\n")
	p("// is a model request at all (a value that is not cannot be inspected,\n// and fails every confining rule).\n")
	p("func appendArgs(req any, dst []policy.Arg) ([]policy.Arg, bool) {\n\tswitch r := req.(type) {\n")
	for _, c := range cases {
		p("\tcase *%s:\n", c.typ)
		if len(c.fields) == 0 {
			p("\t\treturn dst, true\n")
			continue
		}
		for _, f := range c.fields {
			switch {
			case f.list:
				p("\t\tfor _, v := range r.%s {\n\t\t\tdst = append(dst, policy.Arg{Field: %q, Kind: %s, Value: v})\n\t\t}\n", f.goName, f.field, argKinds[f.kind])
			case f.kind == "disk":
				p("\t\tdst = append(dst, policy.Arg{Field: %q, Kind: %s, Disk: r.%s})\n", f.field, argKinds[f.kind], f.goName)
			default:
				p("\t\tdst = append(dst, policy.Arg{Field: %q, Kind: %s, Value: r.%s})\n", f.field, argKinds[f.kind], f.goName)
			}
		}
		p("\t\treturn dst, true\n")
	}
	p("\t}\n\treturn dst, false\n}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("convgen: gofmt of guards: %w\n%s", err, b.String())
	}
	return src, nil
}

// titles are how prose names a group where it is not its name.
var titles = map[string]string{"smb": "SMB", "iscsi": "iSCSI", "smbmappings": "SMB mappings"}

func generateNodeAccessors(cfg Config, groups []*modelGroup) ([]byte, error) {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("// Code generated by %s from the group models under %s. DO NOT EDIT.\n\npackage %s\n\nimport (\n", cfg.Tool, cfg.ModelRoot, path.Base(cfg.LibraryDir))
	for _, g := range groups {
		p("\t%q\n", g.pkg.Path())
	}
	p(")\n")
	for _, g := range groups {
		title := g.name
		if t, ok := titles[g.name]; ok {
			title = t
		}
		p("\n// %s returns the %s group.\n", setField(g.name), title)
		p("func (n *Node) %s() %s.Interface { return n.set.%s }\n", setField(g.name), g.name, setField(g.name))
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("convgen: gofmt of node accessors: %w\n%s", err, b.String())
	}
	return src, nil
}
