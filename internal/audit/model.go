package audit

import (
	"fmt"
	"reflect"

	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/fieldname"
)

// Redacted replaces the value of every non-empty secret string in a
// model request.
const Redacted = "REDACTED"

// GuardTag is the struct tag by which a group model request declares
// what each field holds (see package groups): a field tagged
// `guard:"secret"` (SMB's password, iSCSI's CHAP secrets) is never
// written. The declaration is the one statement of what is secret: no
// field name is guessed at.
const GuardTag = "guard"

// isSecret tells whether a model field is declared secret.
func isSecret(f reflect.StructField) bool { return f.Tag.Get(GuardTag) == "secret" }

// maxModelDepth bounds the walk; the models nest two levels deep.
const maxModelDepth = 16

// RedactModel renders a group model request (a struct or a pointer to one)
// as audit records show requests: a JSON-ready map keyed by the fields'
// snake_case names, leaving out fields with their zero value (as
// protojson leaves out unset fields). A field declared secret
// (`guard:"secret"`) that is set becomes Redacted when it is a string and is
// left out otherwise, so a record shows that a secret was sent and never
// what it was. Values of types with a String method (enums) are written
// as that string. Strings and lists are bounded (MaxRequestString,
// MaxRequestBytes, MaxRequestElements), their cut-off ends replaced by a
// marker (Truncate), so no request makes a record large.
func RedactModel(model any) any {
	r := renderer{budget: MaxRequestBytes}
	return r.render(reflect.ValueOf(model), false, 0)
}

// renderer renders one request, spending its string budget as it goes.
type renderer struct{ budget int }

// text bounds one string of the request and charges it to the budget.
func (r *renderer) text(s string) string {
	s = Truncate(s, max(min(MaxRequestString, r.budget), MinKept))
	r.budget -= len(s)
	return s
}

var stringerType = reflect.TypeFor[fmt.Stringer]()

func (r *renderer) render(v reflect.Value, secret bool, depth int) any {
	if depth > maxModelDepth || !v.IsValid() {
		return nil
	}
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if secret {
		// Whatever its type, a secret's value is never rendered.
		if v.Kind() == reflect.String && v.String() != "" {
			return Redacted
		}
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		out := map[string]any{}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || v.Field(i).IsZero() {
				continue
			}
			name := fieldname.Snake(f.Name)
			if fv := r.render(v.Field(i), isSecret(f), depth+1); fv != nil {
				out[name] = fv
			}
		}
		return out
	case reflect.Slice, reflect.Array:
		n := min(v.Len(), MaxRequestElements)
		out := make([]any, n, n+1)
		for i := range n {
			out[i] = r.render(v.Index(i), false, depth+1)
		}
		if more := v.Len() - n; more > 0 {
			out = append(out, fmt.Sprintf("…[%d more elements]", more))
		}
		return out
	case reflect.Map:
		out := map[string]any{}
		iter := v.MapRange()
		for iter.Next() {
			if len(out) == MaxRequestElements {
				out["…"] = fmt.Sprintf("[%d more entries]", v.Len()-len(out))
				break
			}
			out[r.text(fmt.Sprint(iter.Key().Interface()))] = r.render(iter.Value(), false, depth+1)
		}
		return out
	}
	if v.Type().Implements(stringerType) {
		return r.text(v.Interface().(fmt.Stringer).String())
	}
	if v.Kind() == reflect.String {
		return r.text(v.String())
	}
	if v.CanInterface() {
		return v.Interface()
	}
	return nil
}
