package inprocess

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/callgate"
)

// The refusals that are library mode's own, worded as the daemon words
// them.
var (
	// errClosed is what a call after Close gets, as a call after the
	// client's Close does: a failed precondition, since retrying never
	// succeeds.
	errClosed = errdefs.Errorf(errdefs.ErrFailedPrecondition, "csi-node-proxy inprocess: the node is closed")
)

// panicError is what a call whose group Service panicked returns. It
// wraps no errdefs sentinel (even when the panic value is an error that
// does), so errgrpc.Code gives Internal, as the daemon answers.
type panicError struct {
	method string // group.Method
	value  any    // what the Service panicked with
}

func (e *panicError) Error() string {
	return fmt.Sprintf("csi-node-proxy inprocess: internal error: %s panicked: %v (a bug; the stack is in the log)", e.method, e.value)
}

// guard is one group of a Node in front of the call gate.
type guard struct {
	sec   *security
	group string
}

// call is library mode's face of the call gate (package callgate, which
// the daemon's gRPC endpoints use too): it runs one call of g's group
// through the gate, whose policy, audit log and metrics hook decide and
// record it as the daemon's would, then f, the group Service's method. A
// nil req is the empty request, as an empty message is on the wire.
//
// What is library mode's own: a closed Node refuses first
// (errdefs.ErrFailedPrecondition); the caller is the process itself; the
// request the policy and the audit log see is the model; and a panic in f
// is logged once with its stack and returned as an error wrapping no
// sentinel (Internal by errgrpc.Code; the gate has audited it as
// Internal), so it does not reach the caller as a panic. Refusals are the
// gate's: they read as the daemon's status messages and wrap
// errdefs.ErrPermissionDenied or errdefs.ErrUnavailable. The call counts
// as in flight throughout, so Close waits for its record.
func call[Req, Resp any](ctx context.Context, g *guard, method string, req *Req, f func(context.Context, *Req) (*Resp, error)) (resp *Resp, err error) {
	s := g.sec
	if !s.enter() {
		return nil, errClosed
	}
	defer s.leave()
	if req == nil {
		req = new(Req)
	}
	c := &callgate.Call{
		Endpoint: Endpoint, Method: callgate.Method{Group: g.group, Version: Version, Name: method},
		FullMethod: g.group + "." + method, Caller: s.caller, Model: req,
	}
	defer func() {
		if p := recover(); p != nil {
			s.gate.Log.Error(nil, "panic in call", "endpoint", Endpoint, "method", c.FullMethod,
				"caller", s.caller.String(), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			resp, err = nil, &panicError{method: c.FullMethod, value: p}
		}
	}()
	out, err := s.gate.Do(ctx, c, func(ctx context.Context) (any, error) { return f(ctx, req) })
	resp, _ = out.(*Resp)
	return resp, err
}
