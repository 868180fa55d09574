package inprocess

import (
	"context"
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
	errClosed = &kindError{msg: "the in-process node is closed", kind: errdefs.ErrUnavailable}
)

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
// The order is the daemon's: the policy decides first, and a denial is
// logged, audited and returned as errdefs.ErrPermissionDenied with the
// daemon's message; then, when the call is audited, a call that changes
// the node is refused (errdefs.ErrUnavailable) while the audit log cannot
// be written; then f runs, and its outcome is recorded, a panic included
// (recorded as Internal and passed on).
func call[Req, Resp any](ctx context.Context, g *guard, method string, req *Req, f func(context.Context, *Req) (*Resp, error)) (*Resp, error) {
	s := g.sec
	if s.closed.Load() {
		return nil, errClosed
	}
	if req == nil {
		req = new(Req)
	}
	start := time.Now()
	ctx = identity.NewContext(ctx, s.caller)
	c := policy.Call{Caller: s.caller, Group: g.group, Version: Version, Method: method, Model: req}
	d := s.policy.Decide(c)
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
		return f(ctx, req)
	}
	r := g.record(method, req, d, start)
	if audit.Classify(method) != audit.Read && !s.audit.Healthy() {
		r.Code, r.Message = codes.Unavailable, errAuditUnavailable.Error()
		_ = s.audit.Log(r) // logged and counted by Log
		return nil, errAuditUnavailable
	}
	finished := false
	defer func() {
		if !finished { // f panicked; the panic goes on to the caller
			r.Code, r.Message, r.Duration = codes.Internal, "internal error", time.Since(start)
			_ = s.audit.Log(r) // logged and counted by Log
		}
	}()
	resp, err := f(ctx, req)
	finished = true
	r.Duration, r.Code = time.Since(start), errdefs.Code(err)
	if err != nil {
		r.Message = err.Error()
	}
	_ = s.audit.Log(r) // logged and counted by Log; the call's outcome stands
	return resp, err
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
