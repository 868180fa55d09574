package wmi

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// WQL is a WMI query under construction: one class, optionally a list of
// properties, and conditions joined with AND. It is built only through its
// methods, so class and property names are checked as identifiers and every
// value goes through Literal; nothing a caller sends is pasted into the
// query text (the class of bug behind CVE-2023-3893).
//
// A WQL is immutable once handed to a Client; the builder methods modify
// and return the receiver for chaining.
type WQL struct {
	class  string
	props  []string
	conds  []condition
	errors []error
}

type condition struct {
	prop string
	op   string
	val  any
}

// Query starts a query of class: Query("MSFT_Disk").Where("Number", 3) is
// SELECT * FROM MSFT_Disk WHERE Number = 3.
func Query(class string) *WQL {
	q := &WQL{class: class}
	if err := checkIdentifier(class); err != nil {
		q.errors = append(q.errors, fmt.Errorf("class: %w", err))
	}
	return q
}

// Select restricts the query to the named properties (SELECT a, b FROM …).
// Without it the query selects every property (SELECT *). Client.Query
// returns exactly the selected properties of each instance.
func (q *WQL) Select(props ...string) *WQL {
	for _, p := range props {
		if err := checkIdentifier(p); err != nil {
			q.errors = append(q.errors, fmt.Errorf("selected property: %w", err))
		}
	}
	q.props = append(q.props, props...)
	return q
}

// Where adds the condition prop = v. v must be a string, a bool or an
// integer; see Literal.
func (q *WQL) Where(prop string, v any) *WQL { return q.cond(prop, "=", v) }

// WhereNot adds the condition prop <> v. Whether WMI lets instances whose
// prop is NULL through <> is not documented, so callers should not rely on
// it either way.
func (q *WQL) WhereNot(prop string, v any) *WQL { return q.cond(prop, "<>", v) }

func (q *WQL) cond(prop, op string, v any) *WQL {
	if err := checkIdentifier(prop); err != nil {
		q.errors = append(q.errors, fmt.Errorf("condition property: %w", err))
	}
	if _, err := Literal(v); err != nil {
		q.errors = append(q.errors, fmt.Errorf("value for %s: %w", prop, err))
	}
	q.conds = append(q.conds, condition{prop: prop, op: op, val: v})
	return q
}

// Class returns the queried class.
func (q *WQL) Class() string { return q.class }

// Properties returns the selected properties; nil means every property.
func (q *WQL) Properties() []string { return append([]string(nil), q.props...) }

// Build returns the query text, or an error wrapping
// errdefs.ErrInvalidArgument when a name or value cannot be expressed
// safely.
func (q *WQL) Build() (string, error) {
	if len(q.errors) > 0 {
		return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "WQL query of %q: %v", q.class, q.errors[0])
	}
	var b strings.Builder
	b.WriteString("SELECT ")
	if len(q.props) == 0 {
		b.WriteString("*")
	} else {
		b.WriteString(strings.Join(q.props, ", "))
	}
	b.WriteString(" FROM ")
	b.WriteString(q.class)
	for i, c := range q.conds {
		if i == 0 {
			b.WriteString(" WHERE ")
		} else {
			b.WriteString(" AND ")
		}
		lit, _ := Literal(c.val) // checked in cond
		b.WriteString(c.prop)
		b.WriteString(" ")
		b.WriteString(c.op)
		b.WriteString(" ")
		b.WriteString(lit)
	}
	return b.String(), nil
}

// String returns the query text for messages; an unbuildable query reads
// "<invalid WQL: reason>".
func (q *WQL) String() string {
	s, err := q.Build()
	if err != nil {
		return "<invalid WQL: " + err.Error() + ">"
	}
	return s
}

// Literal renders v as a WQL literal. It is the one function that turns a
// value into query text.
//
//   - A string becomes a single-quoted literal in which backslash, single
//     quote and double quote are escaped with a backslash, as the WQL
//     grammar requires (Learn "WHERE Clause (WMI)", MS-WMI 2.2.1).
//     Backslash is escaped first, so an escape can never be undone by a
//     later one: the volume ID \\?\Volume{…}\ becomes '\\\\?\\Volume{…}\\'.
//     (Upstream csi-proxy doubled single quotes SQL-style, which WQL does
//     not define.) Strings that are not valid UTF-8 or that contain control
//     characters are refused: no value the backends query by can contain
//     them, and refusing is safer than guessing how WMI reads them.
//   - A bool becomes TRUE or FALSE.
//   - Any Go integer type becomes its decimal form.
//
// Other types are refused with an error wrapping errdefs.ErrInvalidArgument.
func Literal(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return quote(x)
	case bool:
		if x {
			return "TRUE", nil
		}
		return "FALSE", nil
	case int:
		return strconv.FormatInt(int64(x), 10), nil
	case int8:
		return strconv.FormatInt(int64(x), 10), nil
	case int16:
		return strconv.FormatInt(int64(x), 10), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint8:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint16:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint32:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	}
	return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "a %T cannot be a WQL literal", v)
}

func quote(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "WQL string %q is not valid UTF-8", s)
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "WQL string %q contains a control character", s)
		case r == '\\', r == '\'', r == '"':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('\'')
	return b.String(), nil
}

// checkIdentifier accepts CIM class and property names: a letter or
// underscore, then letters, digits and underscores. That covers every
// Storage Management name (MSFT_Disk, DiskNumber, __PATH) and nothing that
// could end a clause.
func checkIdentifier(s string) error {
	if s == "" {
		return fmt.Errorf("empty name")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9'
		if !ok {
			return fmt.Errorf("%q is not a CIM identifier", s)
		}
	}
	return nil
}
