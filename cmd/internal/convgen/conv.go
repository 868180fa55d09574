package convgen

// Conversions: the field-by-field functions between a wire message and a
// model type, shared by adapter and client mode (which differ in the
// directions they need and in what may fail).

import (
	"bytes"
	"fmt"
	"go/types"
	"strings"
)

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

// gen accumulates one generated file (an adapter or a client stub).
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
	diskid   bool            // a //convgen:diskid conversion calls the diskid package
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
	ps, errs := g.pairings(c, wire, model)
	g.errs = append(g.errs, errs...)
	var body bytes.Buffer
	var unmatched, orphans []string // orphans: wire fields with no model field
	parses := false                 // a //convgen:diskid field is parsed: the function can fail
	for _, p := range ps {
		wf, mf := p.wf, p.mf
		switch {
		case p.ignored:
			if c.dir == toModel {
				fmt.Fprintf(&body, "\t// in.%s is dropped (//convgen:ignore).\n", wf.Name())
			} else {
				fmt.Fprintf(&body, "\t// out.%s stays empty (//convgen:ignore).\n", wf.Name())
			}
			continue
		case p.d != nil && p.d.verb == "mapkeys":
			body.WriteString(mapKeys(p, c.dir))
			continue
		case mf == nil:
			unmatched = append(unmatched, fmt.Sprintf("%s has no counterpart", wf.Name()))
			orphans = append(orphans, wf.Name())
			continue
		case p.d != nil && p.d.verb == "diskid":
			code, fails, ok := g.diskID(p, c.dir)
			if !ok {
				g.errs = append(g.errs, fmt.Sprintf("%s/%s: %s: //convgen:diskid %s: %s (%s) and %s (%s) are not a disk ID and a disk number", g.gv.group, g.gv.version, c.wire, p.d.text, wf.Name(), g.typeString(wf.Type()), mf.Name(), g.typeString(mf.Type())))
				continue
			}
			parses = parses || fails
			body.WriteString(code)
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
	if parses && !g.mayFail(c) {
		g.errs = append(g.errs, fmt.Sprintf("%s/%s: %s: //convgen:diskid parses a field of a message whose conversion cannot fail (only an RPC's request or, in a client, response can); write %s", g.gv.group, g.gv.version, c.wire, g.signature(c, c.funcName())))
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
	if parses || (!override && len(uncarried) > 0) {
		// Generated fallible conversion: refuse what the version cannot
		// carry, return what a field's parsing fails with.
		g.p("%s {\n\tif in == nil {\n\t\treturn nil, nil\n\t}\n", g.fallibleSignature(c, name))
		for _, f := range uncarried {
			if !override {
				g.refuse(c, fieldFold(model, f))
			}
		}
		g.p("\tout := &%s{}\n", g.target(c))
		if parses {
			g.p("\tvar err error\n")
		}
		g.buf.Write(body.Bytes())
		g.p("\treturn out, nil\n}\n")
		return
	}
	g.p("%s {\n\tif in == nil {\n\t\treturn nil\n\t}\n", g.signature(c, name))
	g.p("\tout := &%s{}\n", g.target(c))
	g.buf.Write(body.Bytes())
	g.p("\treturn out\n}\n")
}

// refuse emits the check that refuses mf, a model field the version
// cannot carry, when it is set: with the reason a //convgen:refuse gives,
// or a general one.
func (g *gen) refuse(c conv, mf *types.Var) {
	cond := nonZero("in."+mf.Name(), mf.Type())
	if d := g.hw.fieldDirective(c.model, mf.Name(), "refuse"); d != nil {
		d.used = true
		msg := fmt.Sprintf("%s.%s is %%v, but the %s %s API %s", c.model, mf.Name(), g.gv.group, g.gv.version, strings.ReplaceAll(d.reason, "%", "%%"))
		g.p("\tif %s {\n\t\treturn nil, errdefs.Errorf(errdefs.ErrInvalidArgument, %q, in.%s)\n\t}\n", cond, msg, mf.Name())
		return
	}
	g.p("\tif %s {\n\t\treturn nil, errdefs.Errorf(errdefs.ErrInvalidArgument, %q)\n\t}\n", cond,
		fmt.Sprintf("%s.%s is set, but the %s %s API has no field for it: leave it unset or use a daemon that serves a version with it", c.model, mf.Name(), g.gv.group, g.gv.version))
}

// importDiskID adds the import of the diskid package at path to the
// import block ending at offset at, if a conversion calls it; field names
// the Config field that sets the path, for the error when it is empty.
func (g *gen) importDiskID(path, field string, at int) {
	if !g.diskid {
		return
	}
	if path == "" {
		g.errs = append(g.errs, fmt.Sprintf("%s/%s: //convgen:diskid needs %s, the import path of the diskid package", g.gv.group, g.gv.version, field))
		return
	}
	g.insertImport(at, path)
}

// importErrdefs adds the errdefs import at at (in the import block) when
// the generated code names a sentinel or errdefs.Errorf; errgrpc, which
// maps errors to and from statuses, is imported always.
func (g *gen) importErrdefs(at int) {
	if !bytes.Contains(g.buf.Bytes()[at:], []byte("errdefs.")) {
		return
	}
	g.insertImport(at, g.cfg.ErrdefsPath)
}

// insertImport inserts the import of path at offset at of the buffer, in
// the import block: an import only the generated body shows to be needed.
func (g *gen) insertImport(at int, path string) {
	src := g.buf.Bytes()
	out := append(append(append([]byte(nil), src[:at]...), fmt.Sprintf("\t%q\n", path)...), src[at:]...)
	g.buf.Reset()
	g.buf.Write(out)
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
// hand-written override that does, or a generated conversion that must
// refuse model fields its version cannot carry (client) or parses a field
// (//convgen:diskid towards the model).
func (g *gen) fallible(c conv) bool {
	if g.hw.funcs[c.funcName()] {
		return g.hw.fallible[c.funcName()]
	}
	return len(g.uncarried(c)) > 0 || g.parses(c)
}

// parses tells whether c parses a field: every //convgen:diskid field
// converted towards the model is, and parsing can fail.
func (g *gen) parses(c conv) bool {
	wire := g.structOf(g.gv.apiPkg, c.wire)
	model := g.structOf(g.gv.modelPkg, c.model)
	if c.dir != toModel || wire == nil || model == nil {
		return false
	}
	ps, _ := g.pairings(c, wire, model)
	for _, p := range ps {
		if p.d != nil && p.d.verb == "diskid" && p.mf != nil {
			return true
		}
	}
	return false
}

// uncarried returns, for a client stub's conversion of a model message to
// the wire, the model fields no wire field carries (by name or by a
// directive). An adapter leaves a model field the wire lacks at its zero
// value, which is right: the older version never had it. A client sending
// it would drop the caller's value silently, so the client refuses a set
// value instead.
func (g *gen) uncarried(c conv) []string {
	if !g.client || c.dir != fromModel {
		return nil
	}
	wire := g.structOf(g.gv.apiPkg, c.wire)
	model := g.structOf(g.gv.modelPkg, c.model)
	if wire == nil || model == nil {
		return nil
	}
	carried := map[*types.Var]bool{}
	ps, _ := g.pairings(c, wire, model)
	for _, p := range ps {
		switch {
		case p.ignored:
			// An ignored wire field counts as carrying its namesake.
			if mf := fieldFold(model, p.wf.Name()); mf != nil {
				carried[mf] = true
			}
		case p.mf != nil:
			carried[p.mf] = true
		}
		for _, mf := range p.keys {
			carried[mf] = true
		}
	}
	var out []string
	for i := 0; i < model.NumFields(); i++ {
		mf := model.Field(i)
		if mf.Exported() && !carried[mf] {
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
	nonNil := g.client && d == toModel
	if nonNil {
		if code, ok := g.assignEach(dst, src, dt, st, d, true); ok {
			return code, true
		}
	}
	if expr, ok := g.value(src, dt, st, d); ok {
		return fmt.Sprintf("\t%s = %s\n", dst, expr), true
	}
	return g.assignEach(dst, src, dt, st, d, false)
}

// assignEach returns code that sets the list or map dst from src element by
// element; false for other types, for elements that cannot be converted and
// for maps whose keys differ (an override converts those). With nonNil, dst
// comes out empty rather than nil when src is nil or empty; without, a nil
// src leaves dst nil.
func (g *gen) assignEach(dst, src string, dt, st types.Type, d direction, nonNil bool) (string, bool) {
	// The loop is written once and indented for where it stands: at the
	// top of the function with nonNil, inside "if src != nil" without.
	indent := "\t\t"
	if nonNil {
		indent = "\t"
	}
	var loop string
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
		loop = fmt.Sprintf("%[5]s%[1]s = make(%[3]s, 0, len(%[2]s))\n%[5]sfor _, v := range %[2]s {\n%[5]s\t%[1]s = append(%[1]s, %[4]s)\n%[5]s}\n",
			dst, src, g.typeString(dt), elem, indent)
	case *types.Map:
		stt, ok := st.(*types.Map)
		if !ok {
			return "", false
		}
		sameKeys := types.Identical(dtt.Key(), stt.Key())
		// With nonNil this is only the first try: when the keys differ,
		// assign tries again without, and that try asks for the element
		// conversion (once, so a conflict is reported once).
		if nonNil && !sameKeys {
			return "", false
		}
		// The elements first: even when the keys differ and an override
		// must convert the map, it can call the element conversion.
		elem, ok := g.value("v", dtt.Elem(), stt.Elem(), d)
		if !ok || !sameKeys {
			return "", false
		}
		loop = fmt.Sprintf("%[5]s%[1]s = make(%[3]s, len(%[2]s))\n%[5]sfor k, v := range %[2]s {\n%[5]s\t%[1]s[k] = %[4]s\n%[5]s}\n",
			dst, src, g.typeString(dt), elem, indent)
	default:
		return "", false
	}
	if nonNil {
		return loop, true
	}
	return "\tif " + src + " != nil {\n" + loop + "\t}\n", true
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
