//go:build windows

package wmi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	ole "github.com/go-ole/go-ole"
	"github.com/go-ole/go-ole/oleutil"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// ExecQuery flags (Learn "SWbemServices.ExecQuery"): semisynchronous and
// forward-only, the cheapest way to read a result set once.
const (
	wbemFlagReturnImmediately = 0x10
	wbemFlagForwardOnly       = 0x20
)

// CoInitializeSecurity arguments (Learn "Setting the Default Process
// Security Level Using C++"), the values upstream csi-proxy uses: packet
// privacy, and impersonation so storage providers can act with the
// caller's rights.
const (
	rpcCAuthnLevelPktPrivacy = 6
	rpcCImpLevelImpersonate  = 3
)

// security records that process-wide COM security has been set (or was
// already set by someone else). It is guarded by a mutex rather than a
// sync.Once so that a failure is retried by the next call.
var security struct {
	sync.Mutex
	done bool
}

// coInitializeSecurity is go-ole's; a test counts the calls.
var coInitializeSecurity = ole.CoInitializeSecurity

// initSecurity calls CoInitializeSecurity once per process, lazily, on
// the first WMI call rather than in init(): a process that never uses WMI
// never touches COM. RPC_E_TOO_LATE means COM security is already set
// (by an earlier call or implicitly), which is fine. Turned off
// (EnvCOMSecurity, SkipCOMSecurity), it is never called.
func initSecurity() error {
	if !COMSecurityWanted() {
		return nil
	}
	security.Lock()
	defer security.Unlock()
	if security.done {
		return nil
	}
	err := coInitializeSecurity(-1, rpcCAuthnLevelPktPrivacy, rpcCImpLevelImpersonate, 0)
	if err != nil && hresultOf(err) != hrRPCTooLate {
		return comError("CoInitializeSecurity", err)
	}
	security.done = true
	return nil
}

// coInit initialises COM for the current (locked) thread in the
// multithreaded apartment and returns the matching cleanup. S_FALSE (COM
// already initialised on this thread) still needs its CoUninitialize;
// RPC_E_CHANGED_MODE (the thread is in a single-threaded apartment, set up
// by someone else) is usable as it is and must not be uninitialised by us.
func coInit() (func(), error) {
	err := ole.CoInitializeEx(0, ole.COINIT_MULTITHREADED)
	switch {
	case err == nil, hresultOf(err) == hrSFalse:
		return ole.CoUninitialize, nil
	case hresultOf(err) == hrRPCChangedMode:
		return func() {}, nil
	}
	return nil, comError("CoInitializeEx", err)
}

// scope runs fn with an SWbemServices object connected to the client's
// namespace, inside one COM scope on one locked OS thread. Everything fn
// obtains must be released before it returns.
func (c *Client) scope(ctx context.Context, fn func(svc *ole.IDispatch) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	uninit, err := coInit()
	if err != nil {
		return err
	}
	defer uninit() // registered first, so it runs after every Release below
	if err := initSecurity(); err != nil {
		return err
	}
	unk, err := oleutil.CreateObject("WbemScripting.SWbemLocator")
	if err != nil {
		return comError("create WbemScripting.SWbemLocator", err)
	}
	defer unk.Release()
	locator, err := unk.QueryInterface(ole.IID_IDispatch)
	if err != nil {
		return comError("SWbemLocator.QueryInterface(IDispatch)", err)
	}
	defer locator.Release()
	// "." names the local computer. A NULL server would too, but Wine's
	// SWbemLocator rejects it with DISP_E_TYPEMISMATCH.
	svcV, err := oleutil.CallMethod(locator, "ConnectServer", ".", c.namespace)
	if err != nil {
		return comError(`ConnectServer(".", `+c.namespace+`)`, err)
	}
	defer clearVariant(svcV)
	svc := svcV.ToIDispatch()
	if svc == nil {
		return fmt.Errorf("ConnectServer(%s) returned a VARIANT of type %d, not an object", c.namespace, svcV.VT)
	}
	return fn(svc)
}

// Query implements API.
func (c *Client) Query(ctx context.Context, q *WQL) ([]Props, error) {
	text, err := q.Build()
	if err != nil {
		return nil, err
	}
	rows := []Props{}
	err = c.scope(ctx, func(svc *ole.IDispatch) error {
		return execQuery(svc, text, func(obj *ole.IDispatch) error {
			p, err := readProps(obj, q.props)
			if err != nil {
				return fmt.Errorf("%s: %w", text, err)
			}
			rows = append(rows, p)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// Call implements API.
func (c *Client) Call(ctx context.Context, q *WQL, method string, in ...Param) (Props, error) {
	text, err := q.Build()
	if err != nil {
		return nil, err
	}
	args, err := encodeArgs(q.class, method, in)
	if err != nil {
		return nil, err
	}
	var out Props
	err = c.scope(ctx, func(svc *ole.IDispatch) error {
		var target *ole.IDispatch
		n := 0
		err := execQuery(svc, text, func(obj *ole.IDispatch) error {
			n++
			if n == 1 {
				obj.AddRef() // keep it past the enumeration's Clear
				target = obj
			}
			return nil
		})
		if target != nil {
			defer target.Release()
		}
		switch {
		case err != nil:
			return err
		case n == 0:
			return errdefs.Errorf(errdefs.ErrNotFound, "no %s instance matches %s", q.class, text)
		case n > 1:
			return fmt.Errorf("%d %s instances match %s; refusing to call %s on more than one", n, q.class, text, method)
		}
		out, err = execMethod(target, q.class, method, args)
		return err
	})
	return out, err
}

// CallStatic implements API.
func (c *Client) CallStatic(ctx context.Context, class, method string, in ...Param) (Props, error) {
	if err := checkIdentifier(class); err != nil {
		return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "class: %v", err)
	}
	args, err := encodeArgs(class, method, in)
	if err != nil {
		return nil, err
	}
	var out Props
	err = c.scope(ctx, func(svc *ole.IDispatch) error {
		clsV, err := oleutil.CallMethod(svc, "Get", class)
		if err != nil {
			return comError("Get("+class+")", err)
		}
		defer clearVariant(clsV)
		cls := clsV.ToIDispatch()
		if cls == nil {
			return fmt.Errorf("Get(%s) returned a VARIANT of type %d, not a class object", class, clsV.VT)
		}
		out, err = execMethod(cls, class, method, args)
		return err
	})
	return out, err
}

type encodedArg struct {
	name  string
	value any
}

// encodeArgs checks the method and parameter names and encodes the values
// before any COM work, so a bad call fails without side effects.
func encodeArgs(class, method string, in []Param) ([]encodedArg, error) {
	if err := checkIdentifier(method); err != nil {
		return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "%s method: %v", class, err)
	}
	var out []encodedArg
	for _, p := range in {
		if err := checkIdentifier(p.name); err != nil {
			return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "%s.%s parameter: %v", class, method, err)
		}
		v, ok, err := Encode(p.value)
		if err != nil {
			return nil, fmt.Errorf("%s.%s parameter %s: %w", class, method, p.name, err)
		}
		if ok {
			out = append(out, encodedArg{p.name, v})
		}
	}
	return out, nil
}

// execQuery runs a WQL query and calls fn for each object; fn must not
// keep obj without AddRef.
func execQuery(svc *ole.IDispatch, text string, fn func(obj *ole.IDispatch) error) error {
	setV, err := oleutil.CallMethod(svc, "ExecQuery", text, "WQL", int32(wbemFlagReturnImmediately|wbemFlagForwardOnly))
	if err != nil {
		return comError("ExecQuery("+text+")", err)
	}
	defer clearVariant(setV)
	set := setV.ToIDispatch()
	if set == nil {
		return fmt.Errorf("ExecQuery(%s) returned a VARIANT of type %d, not a result set", text, setV.VT)
	}
	if err := forEach(set, fn); err != nil {
		var ce *COMError
		if errors.As(err, &ce) && ce.Op == "IEnumVARIANT.Next" {
			// With wbemFlagReturnImmediately, query errors (a bad class,
			// a bad property) surface while enumerating.
			ce.Op = "ExecQuery(" + text + ")"
		}
		return err
	}
	return nil
}

// forEach enumerates a collection (SWbemObjectSet, SWbemPropertySet)
// through _NewEnum, clearing every item after fn.
func forEach(coll *ole.IDispatch, fn func(item *ole.IDispatch) error) error {
	enumV, err := oleutil.GetProperty(coll, "_NewEnum")
	if err != nil {
		return comError("_NewEnum", err)
	}
	defer clearVariant(enumV)
	unk := enumV.ToIUnknown()
	if unk == nil {
		return fmt.Errorf("_NewEnum returned a VARIANT of type %d, not IUnknown", enumV.VT)
	}
	enum, err := unk.IEnumVARIANT(ole.IID_IEnumVariant)
	if err != nil {
		return comError("QueryInterface(IEnumVARIANT)", err)
	}
	defer enum.Release()
	for {
		item, n, err := enum.Next(1)
		if n == 0 {
			// S_FALSE with no item is the normal end.
			if err != nil && hresultOf(err) != hrSFalse {
				return comError("IEnumVARIANT.Next", err)
			}
			return nil
		}
		ferr := func() error {
			defer clearVariant(&item)
			d := item.ToIDispatch()
			if d == nil {
				return fmt.Errorf("enumerated a VARIANT of type %d, not an object", item.VT)
			}
			return fn(d)
		}()
		if ferr != nil {
			return ferr
		}
	}
}

// readProps reads obj's properties through Properties_: Item(name).Value
// for the named ones, or every property when names is empty. Direct
// dispatch access (obj.Name) is avoided: Wine answers it with E_NOTIMPL,
// and names that collide with SWbemObject's own members would resolve to
// those.
func readProps(obj *ole.IDispatch, names []string) (Props, error) {
	setV, err := oleutil.GetProperty(obj, "Properties_")
	if err != nil {
		return nil, comError("Properties_", err)
	}
	defer clearVariant(setV)
	set := setV.ToIDispatch()
	if set == nil {
		return nil, fmt.Errorf("Properties_ returned a VARIANT of type %d, not an object", setV.VT)
	}
	out := Props{}
	if len(names) == 0 {
		err := forEach(set, func(p *ole.IDispatch) error {
			nameV, err := oleutil.GetProperty(p, "Name")
			if err != nil {
				return comError("SWbemProperty.Name", err)
			}
			name := nameV.ToString()
			clearVariant(nameV)
			v, err := propertyValue(p, name)
			if err != nil {
				return err
			}
			out[name] = v
			return nil
		})
		return out, err
	}
	for _, name := range names {
		itemV, err := oleutil.CallMethod(set, "Item", name)
		if err != nil {
			return nil, comError("Properties_.Item("+name+")", err)
		}
		item := itemV.ToIDispatch()
		if item == nil {
			clearVariant(itemV)
			return nil, fmt.Errorf("Properties_.Item(%s) returned a VARIANT of type %d", name, itemV.VT)
		}
		v, err := propertyValue(item, name)
		clearVariant(itemV)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

func propertyValue(prop *ole.IDispatch, name string) (any, error) {
	valV, err := oleutil.GetProperty(prop, "Value")
	if err != nil {
		return nil, comError(name+".Value", err)
	}
	defer clearVariant(valV)
	v, err := decode(valV)
	if err != nil {
		return nil, fmt.Errorf("property %s: %w", name, err)
	}
	return v, nil
}

// decode converts a VARIANT into the Go values Props documents.
func decode(v *ole.VARIANT) (any, error) {
	switch {
	case v.VT == ole.VT_NULL || v.VT == ole.VT_EMPTY:
		return nil, nil
	case v.VT&ole.VT_ARRAY != 0:
		arr := v.ToArray()
		if arr == nil || arr.Array == nil {
			return nil, nil
		}
		if v.VT&^ole.VT_ARRAY == ole.VT_BSTR {
			return arr.ToStringArray(), nil
		}
		vals := arr.ToValueArray()
		out := make([]any, len(vals))
		for i, e := range vals {
			out[i] = normalize(e)
		}
		return out, nil
	case v.VT == ole.VT_BSTR:
		return v.ToString(), nil
	case v.VT == ole.VT_BOOL:
		return v.Val != 0, nil
	case v.VT == ole.VT_DISPATCH:
		return objectText(v.ToIDispatch())
	}
	if n := normalize(v.Value()); n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("unsupported VARIANT type %d", v.VT)
}

// normalize maps go-ole's typed numbers to int64 (uint64 beyond int64 to
// its decimal string, as automation would deliver it) and float32 to
// float64.
func normalize(v any) any {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case uint8:
		return int64(x)
	case int16:
		return int64(x)
	case uint16:
		return int64(x)
	case int32:
		return int64(x)
	case uint32:
		return int64(x)
	case int64:
		return x
	case uint64:
		if x > math.MaxInt64 {
			return fmt.Sprint(x)
		}
		return int64(x)
	case int:
		return int64(x)
	case uint:
		return int64(x)
	case float32:
		return float64(x)
	case float64, string, bool:
		return x
	}
	return nil
}

// objectText renders an embedded object (for example an ExtendedStatus
// MSFT_StorageExtendedStatus) as its MOF text.
func objectText(obj *ole.IDispatch) (any, error) {
	if obj == nil {
		return nil, nil
	}
	tV, err := oleutil.CallMethod(obj, "GetObjectText_")
	if err != nil {
		return nil, comError("GetObjectText_", err)
	}
	defer clearVariant(tV)
	return tV.ToString(), nil
}

// execMethod runs SWbemObject.ExecMethod_ on obj (an instance, or a class
// for a static method) with the in-parameters set by name on a spawned
// InParameters instance, and returns the out-parameters. A non-zero
// ReturnValue is a *MethodError.
func execMethod(obj *ole.IDispatch, class, method string, args []encodedArg) (Props, error) {
	op := class + "." + method
	var outV *ole.VARIANT
	var err error
	if len(args) == 0 {
		outV, err = oleutil.CallMethod(obj, "ExecMethod_", method)
	} else {
		var inst *ole.IDispatch
		var release func()
		inst, release, err = inParameters(obj, op, method, args)
		if err != nil {
			return nil, err
		}
		outV, err = oleutil.CallMethod(obj, "ExecMethod_", method, inst)
		release()
	}
	if err != nil {
		return nil, comError(op, err)
	}
	defer clearVariant(outV)
	outObj := outV.ToIDispatch()
	if outObj == nil {
		return Props{}, nil // a method without out-parameters
	}
	out, err := readProps(outObj, nil)
	if err != nil {
		return nil, fmt.Errorf("%s out-parameters: %w", op, err)
	}
	if !out.Has("ReturnValue") {
		return out, nil
	}
	code, err := out.Uint32("ReturnValue")
	if err != nil {
		return out, fmt.Errorf("%s: %w", op, err)
	}
	if code != 0 {
		ext, _ := out.String("ExtendedStatus") // best effort: only for the message
		return out, &MethodError{Class: class, Method: method, Code: ReturnCode(code), ExtendedStatus: ext}
	}
	return out, nil
}

// inParameters builds the method's in-parameter object:
// Methods_.Item(method).InParameters.SpawnInstance_(), then
// Properties_.Item(name).Value = value for each argument.
func inParameters(obj *ole.IDispatch, op, method string, args []encodedArg) (*ole.IDispatch, func(), error) {
	methodsV, err := oleutil.GetProperty(obj, "Methods_")
	if err != nil {
		return nil, nil, comError(op+": Methods_", err)
	}
	defer clearVariant(methodsV)
	mV, err := oleutil.CallMethod(methodsV.ToIDispatch(), "Item", method)
	if err != nil {
		return nil, nil, comError(op+": Methods_.Item", err)
	}
	defer clearVariant(mV)
	defV, err := oleutil.GetProperty(mV.ToIDispatch(), "InParameters")
	if err != nil {
		return nil, nil, comError(op+": InParameters", err)
	}
	defer clearVariant(defV)
	def := defV.ToIDispatch()
	if def == nil {
		return nil, nil, fmt.Errorf("%s takes no in-parameters, but %d were given", op, len(args))
	}
	instV, err := oleutil.CallMethod(def, "SpawnInstance_")
	if err != nil {
		return nil, nil, comError(op+": InParameters.SpawnInstance_", err)
	}
	inst := instV.ToIDispatch()
	if inst == nil {
		clearVariant(instV)
		return nil, nil, fmt.Errorf("%s: SpawnInstance_ returned a VARIANT of type %d", op, instV.VT)
	}
	release := func() { clearVariant(instV) }
	propsV, err := oleutil.GetProperty(inst, "Properties_")
	if err != nil {
		release()
		return nil, nil, comError(op+": in-parameters Properties_", err)
	}
	defer clearVariant(propsV)
	for _, a := range args {
		if err := setProperty(propsV.ToIDispatch(), a); err != nil {
			release()
			// Not wrapped with %w: a parameter the method lacks is this
			// program's mistake, not a missing disk (WBEM_E_NOT_FOUND).
			return nil, nil, fmt.Errorf("%s parameter %s: %v", op, a.name, err) //nolint:errorlint // deliberately not wrapped, see above
		}
	}
	return inst, release, nil
}

func setProperty(props *ole.IDispatch, a encodedArg) error {
	itemV, err := oleutil.CallMethod(props, "Item", a.name)
	if err != nil {
		return comError("Properties_.Item", err)
	}
	defer clearVariant(itemV)
	r, err := oleutil.PutProperty(itemV.ToIDispatch(), "Value", a.value)
	if err != nil {
		return comError("Value", err)
	}
	clearVariant(r)
	return nil
}

// clear releases a VARIANT (and the BSTR, array or object it holds).
// VARIANT.ToIDispatch does not AddRef, so clearing the VARIANT is the one
// release of an object obtained from it.
func clearVariant(v *ole.VARIANT) {
	if v != nil {
		_ = v.Clear() // VariantClear fails only for malformed VARIANTs; nothing to do then
	}
}

func hresultOf(err error) uint32 {
	var oe *ole.OleError
	if errors.As(err, &oe) {
		return uint32(oe.Code())
	}
	return 0
}

// comError converts a go-ole error into a *COMError, keeping the WBEM
// status an exception carries.
func comError(op string, err error) error {
	var oe *ole.OleError
	if !errors.As(err, &oe) {
		return fmt.Errorf("%s: %w", op, err)
	}
	ce := &COMError{Op: op, HRESULT: uint32(oe.Code()), Description: oe.Description()}
	var ei ole.EXCEPINFO
	if sub := oe.SubError(); sub != nil && errors.As(sub, &ei) {
		ce.SCode = ei.SCODE()
	}
	return ce
}
