package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// -o jsonpath=TEMPLATE prints parts of the JSON document, as kubectl's
// does, for the subset scripts use: text with {expressions} in it, where
// an expression is a path (.volumes[0].volume_id, .disks[*].disk_number,
// an index or * per array step), a quoted string ("\n", "\t"), or
// {range PATH}...{end} to repeat the inner template for each value. Several
// values of one expression are separated by spaces, as kubectl prints
// them. No filters, slices, recursive descent or functions: an expression
// using them is refused when the command line is checked, before any
// call. (The module does not link k8s.io/client-go, whose util/jsonpath
// has the full language, and the daemon's CLI should not pull it in.)

// jsonpathPrefix starts -o's jsonpath form.
const jsonpathPrefix = "jsonpath="

// jpNode is one piece of a parsed template.
type jpNode struct {
	text  string    // literal text, when path is nil and body is nil
	path  []jpStep  // an expression's path
	isRng bool      // {range path}...{end}
	body  []*jpNode // a range's inner template
}

// jpStep is one step of a path: a field, an index, or every element (*).
type jpStep struct {
	field string
	index int
	all   bool
	isIdx bool
}

// parseJSONPath parses a template; its errors say what part was refused.
func parseJSONPath(tmpl string) ([]*jpNode, error) {
	nodes, rest, err := parseJPNodes(tmpl, false)
	if err != nil {
		return nil, err
	}
	if rest != "" {
		return nil, fmt.Errorf("jsonpath: {end} without {range}")
	}
	return nodes, nil
}

// parseJPNodes parses until the end of s, or until {end} when inRange.
func parseJPNodes(s string, inRange bool) (nodes []*jpNode, rest string, err error) {
	for s != "" {
		open := strings.IndexByte(s, '{')
		if open < 0 {
			nodes = append(nodes, &jpNode{text: s})
			s = ""
			break
		}
		if open > 0 {
			nodes = append(nodes, &jpNode{text: s[:open]})
		}
		end := strings.IndexByte(s[open:], '}')
		if end < 0 {
			return nil, "", fmt.Errorf("jsonpath: unclosed { in %q", s[open:])
		}
		expr := strings.TrimSpace(s[open+1 : open+end])
		s = s[open+end+1:]
		switch {
		case expr == "end":
			if !inRange {
				return nil, "", fmt.Errorf("jsonpath: {end} without {range}")
			}
			return nodes, "end", nil
		case strings.HasPrefix(expr, "range "):
			path, err := parseJPPath(strings.TrimSpace(strings.TrimPrefix(expr, "range ")))
			if err != nil {
				return nil, "", err
			}
			body, r, err := parseJPNodes(s, true)
			if err != nil {
				return nil, "", err
			}
			if r != "end" {
				return nil, "", fmt.Errorf("jsonpath: {range %s} without {end}", expr[6:])
			}
			nodes = append(nodes, &jpNode{path: path, isRng: true, body: body})
			s = rangeRest(s)
		case strings.HasPrefix(expr, `"`):
			lit, err := strconv.Unquote(expr)
			if err != nil {
				return nil, "", fmt.Errorf("jsonpath: string %s: %w", expr, err)
			}
			nodes = append(nodes, &jpNode{text: lit})
		default:
			path, err := parseJPPath(expr)
			if err != nil {
				return nil, "", err
			}
			nodes = append(nodes, &jpNode{path: path})
		}
	}
	return nodes, "", nil
}

// rangeRest skips s past the {end} that closes the range whose body
// starts s (nested ranges included).
func rangeRest(s string) string {
	depth := 0
	for {
		open := strings.IndexByte(s, '{')
		end := strings.IndexByte(s[open:], '}')
		expr := strings.TrimSpace(s[open+1 : open+end])
		s = s[open+end+1:]
		switch {
		case strings.HasPrefix(expr, "range "):
			depth++
		case expr == "end" && depth == 0:
			return s
		case expr == "end":
			depth--
		}
	}
}

// parseJPPath parses ".a.b[0][*]"; "." alone is the whole document.
func parseJPPath(p string) ([]jpStep, error) {
	orig := p
	if p == "." || p == "@" {
		return []jpStep{}, nil
	}
	p = strings.TrimPrefix(p, "$")
	p = strings.TrimPrefix(p, "@")
	var steps []jpStep
	for p != "" {
		switch p[0] {
		case '.':
			p = p[1:]
			n := strings.IndexAny(p, ".[")
			if n < 0 {
				n = len(p)
			}
			name := p[:n]
			if name == "" || strings.ContainsAny(name, " ()?=<>!*'\"") {
				return nil, fmt.Errorf("jsonpath: %q: a field name after . is letters, digits and _ (filters, functions and recursive descent are not supported)", orig)
			}
			steps = append(steps, jpStep{field: name})
			p = p[n:]
		case '[':
			n := strings.IndexByte(p, ']')
			if n < 0 {
				return nil, fmt.Errorf("jsonpath: %q: unclosed [", orig)
			}
			in := p[1:n]
			p = p[n+1:]
			if in == "*" {
				steps = append(steps, jpStep{all: true})
				continue
			}
			i, err := strconv.Atoi(in)
			if err != nil {
				return nil, fmt.Errorf("jsonpath: %q: [%s]: only [N], [-N] and [*] are supported", orig, in)
			}
			steps = append(steps, jpStep{index: i, isIdx: true})
		default:
			return nil, fmt.Errorf("jsonpath: %q: a path starts with . (as in {.volumes[0].volume_id})", orig)
		}
	}
	return steps, nil
}

// evalJPPath follows path from each of values; a missing field or index
// is an error, as kubectl reports one.
func evalJPPath(values []any, path []jpStep) ([]any, error) {
	for _, st := range path {
		var next []any
		for _, v := range values {
			switch {
			case st.all:
				switch t := v.(type) {
				case []any:
					next = append(next, t...)
				case map[string]any:
					for _, k := range objectKeys(t) {
						next = append(next, t[k])
					}
				default:
					return nil, fmt.Errorf("jsonpath: [*] of a %T", v)
				}
			case st.isIdx:
				arr, ok := v.([]any)
				if !ok {
					return nil, fmt.Errorf("jsonpath: [%d] of a non-array", st.index)
				}
				i := st.index
				if i < 0 {
					i += len(arr)
				}
				if i < 0 || i >= len(arr) {
					return nil, fmt.Errorf("jsonpath: index [%d] is out of range (%d elements)", st.index, len(arr))
				}
				next = append(next, arr[i])
			default:
				obj, ok := v.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("jsonpath: .%s of a non-object", st.field)
				}
				f, ok := obj[st.field]
				if !ok {
					return nil, fmt.Errorf("jsonpath: %s is not found", st.field)
				}
				next = append(next, f)
			}
		}
		values = next
	}
	return values, nil
}

// objectKeys lists an object's keys in order, so [*] of an object prints
// the same every time.
func objectKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// execJSONPath renders nodes against doc (the command's JSON document).
func execJSONPath(w io.Writer, nodes []*jpNode, doc any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode JSON output: %w", err)
	}
	var root any
	if err := json.Unmarshal(b, &root); err != nil {
		return fmt.Errorf("decode JSON output: %w", err)
	}
	var out strings.Builder
	if err := execJPNodes(&out, nodes, root); err != nil {
		return err
	}
	_, err = io.WriteString(w, out.String())
	return err
}

func execJPNodes(out *strings.Builder, nodes []*jpNode, cur any) error {
	for _, n := range nodes {
		switch {
		case n.path == nil:
			out.WriteString(n.text)
		case n.isRng:
			vals, err := evalJPPath([]any{cur}, n.path)
			if err != nil {
				return err
			}
			for _, v := range vals {
				if err := execJPNodes(out, n.body, v); err != nil {
					return err
				}
			}
		default:
			vals, err := evalJPPath([]any{cur}, n.path)
			if err != nil {
				return err
			}
			for i, v := range vals {
				if i > 0 {
					out.WriteByte(' ')
				}
				out.WriteString(jpText(v))
			}
		}
	}
	return nil
}

// jpText prints a value as kubectl does: strings bare, numbers and
// booleans as JSON, null as empty, objects and arrays as JSON.
func jpText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return ""
	}
	b, _ := json.Marshal(v) //nolint:errchkjson // decoded from JSON a moment ago, so it encodes
	return string(b)
}
