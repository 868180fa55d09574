package inprocess

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"google.golang.org/grpc/codes"
	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// kindError is an error whose text is exactly msg and which wraps a
// sentinel: a policy denial reads as the daemon's status message does,
// without errdefs.Errorf's ": permission denied" suffix.
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

// The refusals that are library mode's own, worded as the daemon words
// them.
var (
	errAuditUnavailable = &kindError{
		msg:  "the audit log cannot be written, so calls that change the node are refused until it can; retry later",
		kind: errdefs.ErrUnavailable,
	}
	// errClosed is what a call after Close gets, as a call after the
	// client's Close does: a failed precondition, since retrying never
	// succeeds.
	errClosed = errdefs.Errorf(errdefs.ErrFailedPrecondition, "csi-node-proxy inprocess: the node is closed")
)

// panicError is what a call whose group Service panicked returns. It
// wraps no errdefs sentinel (even when the panic value is an error that
// does), so errdefs.Code gives Internal, as the daemon answers.
type panicError struct {
	method string // group.Method
	value  any    // what the Service panicked with
}

func (e *panicError) Error() string {
	return fmt.Sprintf("csi-node-proxy inprocess: internal error: %s panicked: %v (a bug; the stack is in the log)", e.method, e.value)
}

// panicMessage is the Message of a panicked call's audit record, the
// daemon's: the panic value may quote anything, and stays in the log.
const panicMessage = "internal error"

// guard is what the daemon's authorisation and audit interceptors do
// (internal/server/guard.go), for one group of a Node.
type guard struct {
	sec   *security
	group string
}

// call runs one call of g's group through the policy and the audit log,
// then f, the group Service's method. A nil req is the empty request, as
// an empty message is on the wire.
//
// The order is the daemon's: a closed Node refuses first
// (errdefs.ErrFailedPrecondition); then the policy decides, and a denial
// is logged, audited and returned as errdefs.ErrPermissionDenied with the
// daemon's message; then, when the call is audited and changes the node,
// its intent record is written, and when it cannot be the call is refused
// (errdefs.ErrUnavailable) and f never runs, so no change happens
// unaudited; then f runs, and its outcome is recorded under the intent's
// ID. A panic in f is
// what the daemon makes of it: logged once with its stack, audited as
// Internal, and returned as an error wrapping no sentinel (Internal by
// errdefs.Code); it does not reach the caller as a panic. The call counts
// as in flight throughout, so Close waits for its record.
func call[Req, Resp any](ctx context.Context, g *guard, method string, req *Req, f func(context.Context, *Req) (*Resp, error)) (*Resp, error) {
	s := g.sec
	if !s.enter() {
		return nil, errClosed
	}
	defer s.leave()
	if req == nil {
		req = new(Req)
	}
	start := time.Now()
	ctx = identity.NewContext(ctx, s.caller)
	c := policy.Call{Caller: s.caller, Group: g.group, Version: Version, Method: method, Model: req, Objects: s.objects}
	d := s.policy.DecideContext(ctx, c)
	if !d.Allowed {
		err := &kindError{msg: d.Message(c), kind: errdefs.ErrPermissionDenied}
		klog.InfoS("call denied", "endpoint", Endpoint, "method", g.group+"."+method, "caller", s.caller.String(), "reason", d.Reason)
		if s.audit.Wants(method, true) {
			r := g.record(method, req, d, start)
			r.Code, r.Message = codes.PermissionDenied, err.Error()
			_ = s.audit.Log(r) // a failure is logged and counted by Log; the call is refused anyway
		}
		return nil, err
	}
	if !s.audit.Wants(method, false) {
		return run(ctx, g, method, req, f)
	}
	r := g.record(method, req, d, start)
	r.ID = audit.NewID()
	if audit.Classify(method) != audit.Read {
		if s.audit.Intent(&r) != nil { // logged and counted by Intent
			r.Code, r.Message = codes.Unavailable, errAuditUnavailable.Error()
			_ = s.audit.Log(r) // the refusal, should the log take it now; logged and counted by Log
			return nil, errAuditUnavailable
		}
	}
	resp, err := run(ctx, g, method, req, f)
	r.Duration, r.Code = time.Since(start), errdefs.Code(err)
	if err != nil {
		r.Message = err.Error()
		if pe := (*panicError)(nil); errors.As(err, &pe) {
			r.Message = panicMessage
		}
	}
	_ = s.audit.Log(r) // logged and counted by Log; the call's outcome stands, and its intent is on file
	return resp, err
}

// run calls f, turning a panic into a *panicError, logged once with the
// stack, as the daemon's recoverPanics interceptor does
// (internal/server/interceptors.go).
func run[Req, Resp any](ctx context.Context, g *guard, method string, req *Req, f func(context.Context, *Req) (*Resp, error)) (resp *Resp, err error) {
	defer func() {
		if p := recover(); p != nil {
			klog.ErrorS(nil, "panic in call", "endpoint", Endpoint, "method", g.group+"."+method,
				"caller", g.sec.caller.String(), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			resp, err = nil, &panicError{method: g.group + "." + method, value: p}
		}
	}()
	return f(ctx, req)
}

// record starts the audit record of a call, in the daemon's schema:
// endpoint and version are Endpoint and Version, full_method is
// group.Method, and the request is the model, redacted by the Logger.
func (g *guard) record(method string, req any, d policy.Decision, start time.Time) audit.Record {
	r := audit.Record{
		Time: start, Endpoint: Endpoint, Group: g.group, Version: Version,
		Method: method, FullMethod: g.group + "." + method, Caller: g.sec.caller,
		Decision: audit.Allow, Rule: d.Rule, Reason: d.Reason, Model: req,
	}
	if !d.Allowed {
		r.Decision = audit.Deny
	}
	return r
}
