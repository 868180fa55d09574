package wmi

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Props are the properties of one WMI object (a query result row, or a
// method's out-parameters), decoded from their VARIANTs into plain Go
// values:
//
//	VT_NULL, VT_EMPTY                → nil
//	VT_BSTR                          → string (CIM strings, and 64-bit integers, which scripting delivers as decimal strings)
//	VT_I1 … VT_UI8, VT_INT, VT_UINT  → int64
//	VT_BOOL                          → bool
//	VT_R4, VT_R8                     → float64
//	VT_ARRAY|VT_BSTR                 → []string
//	other arrays                     → []any
//	VT_DISPATCH (embedded object)    → string (its MOF text)
//
// The typed getters then apply the CIM-over-automation rules from Learn
// "Numbers (WMI)": uint32 arrives as VT_I4 and must be masked, uint64 and
// sint64 arrive as strings. They exist so each rule is written and tested
// once, instead of in every caller.
type Props map[string]any

// get looks name up exactly, then without case (CIM names are
// case-insensitive).
func (p Props) get(name string) (any, bool) {
	if v, ok := p[name]; ok {
		return v, true
	}
	for k, v := range p {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

// Has tells whether the object has the property (NULL or not).
func (p Props) Has(name string) bool {
	_, ok := p.get(name)
	return ok
}

// IsNull tells whether the property is missing or NULL.
func (p Props) IsNull(name string) bool {
	v, _ := p.get(name)
	return v == nil
}

func (p Props) value(name string) (any, error) {
	v, ok := p.get(name)
	if !ok {
		return nil, fmt.Errorf("WMI object has no property %s", name)
	}
	if v == nil {
		return nil, fmt.Errorf("WMI property %s is NULL", name)
	}
	return v, nil
}

// String returns a string property; NULL reads as "".
func (p Props) String(name string) (string, error) {
	v, ok := p.get(name)
	if !ok {
		return "", fmt.Errorf("WMI object has no property %s", name)
	}
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	}
	return "", fmt.Errorf("WMI property %s is a %T, not a string", name, v)
}

// Strings returns a string array property; NULL reads as nil.
func (p Props) Strings(name string) ([]string, error) {
	v, ok := p.get(name)
	if !ok {
		return nil, fmt.Errorf("WMI object has no property %s", name)
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []string:
		return x, nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("WMI property %s holds a %T, not a string", name, e)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("WMI property %s is a %T, not a string array", name, v)
}

// Bool returns a boolean property.
func (p Props) Bool(name string) (bool, error) {
	v, err := p.value(name)
	if err != nil {
		return false, err
	}
	switch x := v.(type) {
	case bool:
		return x, nil
	case int64: // a VARIANT_BOOL read through a numeric path: 0 or -1
		return x != 0, nil
	}
	return false, fmt.Errorf("WMI property %s is a %T, not a boolean", name, v)
}

// Uint16 returns a CIM uint16, which automation delivers as VT_I4.
func (p Props) Uint16(name string) (uint16, error) {
	n, err := p.integer(name)
	if err != nil {
		return 0, err
	}
	if n < 0 || n > math.MaxUint16 {
		return 0, fmt.Errorf("WMI property %s = %d is out of range for uint16", name, n)
	}
	return uint16(n), nil
}

// Uint32 returns a CIM uint32. Automation delivers uint32 as VT_I4, so
// values of 2^31 and above arrive negative; they are masked back.
func (p Props) Uint32(name string) (uint32, error) {
	n, err := p.integer(name)
	if err != nil {
		return 0, err
	}
	if n < math.MinInt32 || n > math.MaxUint32 {
		return 0, fmt.Errorf("WMI property %s = %d is out of range for uint32", name, n)
	}
	return uint32(n & 0xFFFFFFFF), nil
}

// Uint64 returns a CIM uint64, which automation delivers as a decimal
// string (VT_BSTR).
func (p Props) Uint64(name string) (uint64, error) {
	v, err := p.value(name)
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case string:
		n, err := strconv.ParseUint(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("WMI property %s = %q is not a uint64: %w", name, x, err)
		}
		return n, nil
	case int64:
		if x < 0 {
			return 0, fmt.Errorf("WMI property %s = %d is negative", name, x)
		}
		return uint64(x), nil
	}
	return 0, fmt.Errorf("WMI property %s is a %T, not a number", name, v)
}

// Char16 returns a CIM char16 (for example MSFT_Partition.DriveLetter),
// which arrives as an integer code unit or, depending on the path, a
// one-character string. NULL reads as 0.
func (p Props) Char16(name string) (rune, error) {
	v, ok := p.get(name)
	if !ok {
		return 0, fmt.Errorf("WMI object has no property %s", name)
	}
	switch x := v.(type) {
	case nil:
		return 0, nil
	case int64:
		if x < 0 || x > math.MaxUint16 {
			return 0, fmt.Errorf("WMI property %s = %d is not a char16", name, x)
		}
		return rune(x), nil
	case string:
		r := []rune(x)
		if len(r) != 1 {
			return 0, fmt.Errorf("WMI property %s = %q is not one character", name, x)
		}
		return r[0], nil
	}
	return 0, fmt.Errorf("WMI property %s is a %T, not a char16", name, v)
}

// integer reads an integral property delivered as a VARIANT integer or,
// for some paths, a decimal string.
func (p Props) integer(name string) (int64, error) {
	v, err := p.value(name)
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case int64:
		return x, nil
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("WMI property %s = %q is not an integer: %w", name, x, err)
		}
		return n, nil
	}
	return 0, fmt.Errorf("WMI property %s is a %T, not an integer", name, v)
}
