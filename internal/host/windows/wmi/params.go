package wmi

import (
	"fmt"
	"math"
	"strconv"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// Param is one named in-parameter of a WMI method. Parameters are set by
// name on the method's InParameters object, never by position, and
// parameters the caller leaves out stay NULL, which providers read as "not
// specified" (Learn "SWbemObject.ExecMethod_").
type Param struct {
	name  string
	value any
}

// Arg returns the in-parameter name = v. v may be a string, a bool, a Go
// integer, a []string, or nil (the parameter is left unset). The value is
// converted to what scripting automation expects by Encode.
func Arg(name string, v any) Param { return Param{name: name, value: v} }

// Name returns the parameter's name.
func (p Param) Name() string { return p.name }

// Value returns the parameter's value as given to Arg.
func (p Param) Value() any { return p.value }

// String reads "Name=value" for messages and test records.
func (p Param) String() string { return fmt.Sprintf("%s=%v", p.name, p.value) }

// Encode converts a parameter value into the Go value the COM layer hands
// to IDispatch, following Learn "Numbers (WMI)" and the fact sheet §B5:
//
//   - string, bool and []string pass through (VT_BSTR, VT_BOOL,
//     VT_ARRAY|VT_BSTR);
//   - integers that fit a signed 32-bit value become int32 (VT_I4), the
//     type scripting uses for uint8/uint16/uint32/sint32 parameters;
//   - a uint32 above 2^31-1 becomes the int32 with the same bits, as
//     Learn "Numbers (WMI)" maps uint32 to VT_I4 (VBScript's &H80000002
//     for HKEY_LOCAL_MACHINE is the same negative VT_I4);
//   - other values beyond 32 bits (Go int, int64, uint, uint64) become
//     decimal strings, because CIM sint64/uint64 travel as strings through
//     automation and go-ole would otherwise send VT_I8/VT_UI8 or truncate;
//   - nil reports ok == false: leave the parameter unset.
//
// Any other type is an error wrapping errdefs.ErrInvalidArgument.
func Encode(v any) (enc any, ok bool, err error) {
	switch x := v.(type) {
	case nil:
		return nil, false, nil
	case string, bool, []string:
		return x, true, nil
	case int:
		return fitInt32(int64(x)), true, nil
	case int8:
		return int32(x), true, nil
	case int16:
		return int32(x), true, nil
	case int32:
		return x, true, nil
	case int64:
		return fitInt32(x), true, nil
	case uint:
		return fitUint32(uint64(x)), true, nil
	case uint8:
		return int32(x), true, nil
	case uint16:
		return int32(x), true, nil
	case uint32:
		return int32(x), true, nil // same bits: uint32 travels as VT_I4
	case uint64:
		return strconv.FormatUint(x, 10), true, nil
	}
	return nil, false, errdefs.Errorf(errdefs.ErrInvalidArgument, "a %T cannot be a WMI method parameter", v)
}

func fitInt32(n int64) any {
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		return int32(n)
	}
	return strconv.FormatInt(n, 10)
}

func fitUint32(n uint64) any {
	if n <= math.MaxInt32 {
		return int32(n)
	}
	return strconv.FormatUint(n, 10)
}
