package convgen

// Field directives: how a wire field pairs with a model field when the
// name rule cannot tell (//convgen:field, diskid, mapkeys), and the code
// the disk ID and map key conversions take.

import (
	"fmt"
	"go/types"
	"strings"
)

// pairing is how one wire field of a conversion converts.
type pairing struct {
	wf      *types.Var
	mf      *types.Var      // the model field; nil when ignored, for mapkeys and when there is none
	d       *fieldDirective // the directive that pairs them, if any
	keys    []*types.Var    // mapkeys: the model fields, in the directive's order
	ignored bool            // //convgen:ignore
}

// pairings pairs the wire fields of c with model fields: by a directive,
// else by name ignoring case. errs says which directives do not fit the
// messages.
func (g *gen) pairings(c conv, wire, model *types.Struct) (ps []pairing, errs []string) {
	where := fmt.Sprintf("%s/%s: %s", g.gv.group, g.gv.version, c.wire)
	for i := 0; i < wire.NumFields(); i++ {
		wf := wire.Field(i)
		if !wf.Exported() || strings.HasPrefix(wf.Name(), "XXX_") {
			continue
		}
		p := pairing{wf: wf}
		if _, ok := g.hw.ignore[strings.ToLower(wf.Name())]; ok {
			g.ignored[strings.ToLower(wf.Name())] = true
			p.ignored = true
			ps = append(ps, p)
			continue
		}
		p.d = g.hw.fieldDirective(c.wire, wf.Name(), "field", "diskid", "mapkeys")
		switch {
		case p.d == nil:
			p.mf = fieldFold(model, wf.Name())
		case p.d.verb == "mapkeys":
			p.d.used = true
			if !isStringMap(wf.Type()) {
				errs = append(errs, fmt.Sprintf("%s: //convgen:mapkeys %s: %s is a %s, not a map[string]string", where, p.d.text, wf.Name(), g.typeString(wf.Type())))
				continue
			}
			for _, k := range p.d.keys {
				mf := fieldFold(model, k[1])
				if mf == nil || !types.Identical(mf.Type(), types.Typ[types.String]) {
					errs = append(errs, fmt.Sprintf("%s: //convgen:mapkeys %s: %s.%s has no string field %s", where, p.d.text, g.modelPkg, c.model, k[1]))
					continue
				}
				p.keys = append(p.keys, mf)
			}
		default:
			p.d.used = true
			name := p.d.model
			if name == "" {
				name = wf.Name()
			}
			if p.mf = fieldFold(model, name); p.mf == nil {
				errs = append(errs, fmt.Sprintf("%s: //convgen:%s %s: %s.%s has no field %s", where, p.d.verb, p.d.text, g.modelPkg, c.model, name))
				continue
			}
		}
		ps = append(ps, p)
	}
	return ps, errs
}

// diskID returns the code converting p's fields, which a //convgen:diskid
// says carry a disk number (the model's uint32; on the wire a decimal
// string, an int64, or the decimal string keys of a map), in direction d;
// whether it can fail (every conversion towards the model parses); and
// false when the types are not such a pair.
func (g *gen) diskID(p pairing, d direction) (code string, fails, ok bool) {
	wt, mt := p.wf.Type(), p.mf.Type()
	dst, src := "out."+p.mf.Name(), "in."+p.wf.Name()
	if d == fromModel {
		dst, src = "out."+p.wf.Name(), "in."+p.mf.Name()
	}
	set := func(expr string) string { return fmt.Sprintf("\t%s = %s\n", dst, expr) }
	parse := func(expr string) string {
		return fmt.Sprintf("\tif %s, err = %s; err != nil {\n\t\treturn nil, err\n\t}\n", dst, expr)
	}
	g.diskid = true
	uint32T := types.Typ[types.Uint32]
	switch {
	case types.Identical(wt, types.Typ[types.String]) && types.Identical(mt, uint32T):
		if d == toModel {
			return parse("diskid.Parse(" + src + ")"), true, true
		}
		return set("diskid.Format(" + src + ")"), false, true
	case types.Identical(wt, types.Typ[types.Int64]) && types.Identical(mt, uint32T):
		if d == toModel {
			return parse("diskid.FromInt64(" + src + ")"), true, true
		}
		return set("int64(" + src + ")"), false, true
	}
	wm, ok1 := wt.(*types.Map)
	mm, ok2 := mt.(*types.Map)
	if !ok1 || !ok2 || !types.Identical(wm.Key(), types.Typ[types.String]) || !types.Identical(mm.Key(), uint32T) {
		return "", false, false
	}
	if d == toModel {
		fn, ok := g.elemFunc(mm.Elem(), wm.Elem(), d)
		return parse("diskid.ParseKeys(" + src + ", " + fn + ")"), true, ok
	}
	fn, ok := g.elemFunc(wm.Elem(), mm.Elem(), d)
	return set("diskid.FormatKeys(" + src + ", " + fn + ")"), false, ok
}

// elemFunc returns a function converting a map's values of type st to dt:
// the conversion function itself where there is one.
func (g *gen) elemFunc(dt, st types.Type, d direction) (string, bool) {
	expr, ok := g.value("v", dt, st, d)
	if !ok {
		return "", false
	}
	if name, call := strings.CutSuffix(expr, "(v)"); call && identRE.MatchString(name) {
		return name, true
	}
	return fmt.Sprintf("func(v %s) %s { return %s }", g.typeString(st), g.typeString(dt), expr), true
}

// mapKeys returns the code converting p's wire map[string]string and the
// model's string fields a //convgen:mapkeys names, in direction d. Towards
// the wire every key is set, empty or not; towards the model a missing key
// is an empty field.
func mapKeys(p pairing, d direction) string {
	var b strings.Builder
	if d == toModel {
		for i, mf := range p.keys {
			fmt.Fprintf(&b, "\tout.%s = in.%s[%q]\n", mf.Name(), p.wf.Name(), p.d.keys[i][0])
		}
		return b.String()
	}
	var elems []string
	for i, mf := range p.keys {
		elems = append(elems, fmt.Sprintf("%q: in.%s", p.d.keys[i][0], mf.Name()))
	}
	return fmt.Sprintf("\tout.%s = map[string]string{%s}\n", p.wf.Name(), strings.Join(elems, ", "))
}

// isStringMap tells whether t is map[string]string.
func isStringMap(t types.Type) bool {
	m, ok := t.(*types.Map)
	return ok && types.Identical(m.Key(), types.Typ[types.String]) && types.Identical(m.Elem(), types.Typ[types.String])
}

// unusedFieldDirectives reports the field directives that matched no field
// of a converted message, which is a mistake (a misspelt name, a version
// that changed): where names the group-version.
func (g *gen) unusedFieldDirectives(where string) {
	for _, d := range g.hw.fields {
		switch {
		case d.used:
		case d.verb == "refuse" && !g.client:
			// Reported once, by the adapter's check for client-only directives.
		case d.verb == "refuse":
			g.errs = append(g.errs, fmt.Sprintf("%s: //convgen:refuse %s: no generated conversion refuses such a field", where, d.text))
		default:
			g.errs = append(g.errs, fmt.Sprintf("%s: //convgen:%s %s: no converted message has such a field", where, d.verb, d.text))
		}
	}
}
