package policy

import (
	"errors"
	"fmt"
	"regexp"
	"sort"

	yaml "go.yaml.in/yaml/v2"
)

// The YAML decoder behind the policy (sigs.k8s.io/yaml, YAML 1.1) reads
// more than decimal numbers and true/false: 01000 is octal 512, 0x3e8
// hex, 1_000 a thousand, 1e3 a float, and yes, no, on, off, y and n (in
// any case) are booleans. A uid written 01000 would silently select uid
// 512, and "any: yes" would silently admit every caller. checkScalars
// refuses all of those before the file is decoded: integers are plain
// decimal, booleans true or false. Only the SMB modes are octal, as
// documented and as chmod writes them, with a leading 0.

var (
	decimalInt = regexp.MustCompile(`^-?(?:0|[1-9][0-9]*)$`)
	octalMode  = regexp.MustCompile(`^0[0-7]*$`)
)

// octalFields are the keys whose integers are written in octal.
var octalFields = map[string]bool{"fileMode": true, "dirMode": true}

// checkScalars returns an error for every integer that is not plain
// decimal (octal with a leading 0 for octalFields) and every boolean
// that is not true or false, naming where it is. A document the YAML
// parser refuses passes: the decoder reports it.
func checkScalars(data []byte) error {
	var root scalarNode
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil //nolint:nilerr // decodeStrict reports malformed YAML with its own message
	}
	var errs []error
	root.check("", "", &errs)
	return errors.Join(errs...)
}

// scalarNode is a YAML node as the decoder sees it: a sequence, a
// mapping, or a scalar with its text as written and its value as
// resolved.
type scalarNode struct {
	seq      []scalarNode
	mapping  map[string]scalarNode
	isScalar bool
	text     string
	value    any
}

// UnmarshalYAML tells the node's kind by what it decodes into: a
// sequence decodes into a slice only, a mapping into a map only, and a
// scalar into a string (its text as written) and into any (its
// resolved value).
func (n *scalarNode) UnmarshalYAML(unmarshal func(any) error) error {
	var seq []scalarNode
	if err := unmarshal(&seq); err == nil {
		n.seq = seq
		return nil
	}
	var m map[any]scalarNode
	if err := unmarshal(&m); err == nil {
		n.mapping = make(map[string]scalarNode, len(m))
		for k, v := range m {
			n.mapping[fmt.Sprint(k)] = v
		}
		return nil
	}
	n.isScalar = true
	if err := unmarshal(&n.value); err != nil {
		return err
	}
	_ = unmarshal(&n.text) // null has no text to check; values are checked by their text only when resolved
	return nil
}

func (n scalarNode) check(where, key string, errs *[]error) {
	switch {
	case n.seq != nil:
		for i, c := range n.seq {
			c.check(fmt.Sprintf("%s[%d]", where, i), key, errs)
		}
	case n.mapping != nil:
		keys := make([]string, 0, len(n.mapping))
		for k := range n.mapping {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			w := k
			if where != "" {
				w = where + "." + k
			}
			n.mapping[k].check(w, k, errs)
		}
	case n.isScalar:
		switch v := n.value.(type) {
		case bool:
			if n.text != "true" && n.text != "false" {
				*errs = append(*errs, fmt.Errorf("%s: %q is read by YAML as the boolean %t; write true or false (or quote it if it is text)", where, n.text, v))
			}
		case int, int64, uint64, float64:
			switch {
			case octalFields[key]:
				if !octalMode.MatchString(n.text) {
					*errs = append(*errs, fmt.Errorf("%s: %q is not a mode in octal with a leading 0 (such as 0770)", where, n.text))
				}
			case !decimalInt.MatchString(n.text):
				*errs = append(*errs, fmt.Errorf("%s: %q is not a plain decimal integer (YAML reads it as %v)", where, n.text, v))
			}
		}
	}
}
