package callgate

import (
	"context"
	"errors"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// Wire is how a call arrived over a transport: the daemon's interceptor
// puts it in the context (WithWire) before the adapter converts the wire
// request to the group model and calls the guarded group (Gate.Guard),
// so the gate sees the model request, in one shape whatever the version,
// and records still name the version and method the caller spelled.
type Wire struct {
	// Endpoint names where the call arrived (csi-proxy-disk-v1beta2).
	Endpoint string
	// Group is the endpoint's API group; "" is the called group's own.
	Group string
	// Version is the wire version called (v1beta2) and Method the wire
	// method (SetAttachState), which policy rules name; FullMethod is the
	// gRPC full method (/v1beta2.Disk/SetAttachState).
	Version, Method, FullMethod string
	// RequestID is the client's request ID; "" for none.
	RequestID string
	// Caller is who calls, as the transport identified them: the
	// connection's, shared by its calls, which must not change it. nil
	// is a caller of whom nothing is known.
	Caller *identity.Caller

	// Set by the gate:
	call    Call     // the call's description, kept here to spare an allocation per call
	reached bool     // the call reached the gate
	refusal *Refusal // the gate refused it
	model   any      // the model request the gate saw
}

// Reached tells whether the call reached the gate: false when the
// adapter refused the request before calling its group (it did not
// convert) or answered without calling it.
func (w *Wire) Reached() bool { return w.reached }

// Refusal returns the gate's refusal of the call, or nil.
func (w *Wire) Refusal() *Refusal { return w.refusal }

// Model returns the group model request the gate saw, or nil.
func (w *Wire) Model() any { return w.model }

type wireKey struct{}

// WithWire returns ctx carrying w, for the gate below the adapter.
func WithWire(ctx context.Context, w *Wire) context.Context {
	return context.WithValue(ctx, wireKey{}, w)
}

func wireFrom(ctx context.Context) *Wire {
	w, _ := ctx.Value(wireKey{}).(*Wire)
	return w
}

// Origin describes the calls that arrive with no Wire in their context:
// library mode's, made by the process itself.
type Origin struct {
	// Endpoint and Version name them in logs and records (inprocess).
	Endpoint, Version string
	// Caller is who calls: the process itself.
	Caller identity.Caller
}

// errNoOrigin refuses a call that says neither how it arrived nor has a
// default origin: a transport that forgot WithWire must not reach a group
// unidentified.
var errNoOrigin = &Refusal{Code: errdefs.Internal, Kind: errors.New("internal error"),
	Msg: "internal error: the call reached the call gate without saying how it arrived"}

// newCall describes a call of the group model method group.method with
// request req, from the context's Wire or else the gate's Origin.
func (g *Gate) newCall(ctx context.Context, group, method string, req any) (*Call, *Wire, error) {
	w := wireFrom(ctx)
	var c *Call
	if w != nil {
		w.call = Call{Model: req}
		c = &w.call
	} else {
		c = &Call{Model: req}
	}
	switch {
	case w != nil:
		w.reached, w.model = true, req
		if w.Group != "" {
			group = w.Group
		}
		c.Endpoint, c.FullMethod, c.RequestID, c.Caller = w.Endpoint, w.FullMethod, w.RequestID, w.Caller
		c.Method = Method{Group: group, Version: w.Version, Name: w.Method, Model: method}
	case g.Origin != nil:
		c.Endpoint, c.FullMethod, c.Caller = g.Origin.Endpoint, group+"."+method, &g.Origin.Caller
		c.Method = Method{Group: group, Version: g.Origin.Version, Name: method, Model: method}
	default:
		return nil, nil, errNoOrigin
	}
	c.Args, c.Inspected = appendArgs(req, c.argBuf[:0])
	return c, w, nil
}

// run lets one call of a guarded group through the gate (see Guard): it
// describes the call, runs Gate.Enter's admission when set, and f, the
// group Service's method, through Do. A nil req is the empty request, as
// an empty message is on the wire. A panic in f goes to Gate.Recover
// when set, and on up otherwise.
func run[Req, Resp any](ctx context.Context, g *Gate, group, method string, req *Req, f func(context.Context, *Req) (*Resp, error)) (resp *Resp, err error) {
	if req == nil {
		req = new(Req)
	}
	if g.Enter != nil {
		leave, err := g.Enter()
		if err != nil {
			return nil, err
		}
		defer leave()
	}
	c, w, err := g.newCall(ctx, group, method, req)
	if err != nil {
		return nil, err
	}
	if g.Recover != nil {
		defer func() {
			if p := recover(); p != nil {
				resp, err = nil, g.Recover(c, p)
			}
		}()
	}
	out, err := g.Do(ctx, c, func(ctx context.Context) (any, error) { return f(ctx, req) })
	if rf := (*Refusal)(nil); w != nil && errors.As(err, &rf) {
		w.refusal = rf
	}
	resp, _ = out.(*Resp)
	return resp, err
}

// ArgsOf returns the paths, disks and volumes a group model request
// names, as the gate hands them to the policy, and false for a value that
// is no model request. Tests use it to tell which arguments confinement
// must see.
func ArgsOf(req any) ([]policy.Arg, bool) { return appendArgs(req, nil) }
