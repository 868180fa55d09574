// Package callgate is the one place a call to a node's API groups is let
// through: whoever the caller and however the call arrived (the daemon's
// gRPC endpoints or library mode in-process), it is authorised, audited,
// metered and run here, in the same order with the same records.
//
// For each call the gate
//
//  1. checks that the caller still is who it was identified as, when the
//     transport can tell (Gate.Alive: the daemon's connections), and
//     refuses it with Unauthenticated when not;
//  2. asks the authorisation policy, paths and objects included, and
//     refuses a denied call with PermissionDenied: the refusal is logged
//     once, audited and counted;
//  3. when the call is audited and changes the node, writes its intent
//     record first and refuses it with Unavailable when that cannot be
//     written, so no change happens unaudited (fail closed);
//  4. runs it, and records its outcome under the intent's ID, a panic
//     included (as Internal, "internal error"), before the panic goes on
//     to the transport's own recovery;
//  5. tells a Metrics hook what happened, so the daemon's Prometheus
//     series and a library-mode driver's own see the same events.
//
// What differs between transports is handed in: how an error becomes a
// code and message for the record (Gate.Outcome), and what runs between
// the decision and the audit (Gate.Allowed: the daemon's rule label and
// deprecation notes). Refusals are *Refusal errors: they read as the
// daemon's status messages, carry their code, and wrap an errdefs
// sentinel, so library mode's callers use errors.Is and the daemon turns
// them into a status with the same code and message.
//
// The package links neither gRPC's server nor Prometheus: library mode
// builds on it.
package callgate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// The reasons a Metrics hook is given for a call refused before it ran: a
// small fixed set (never the policy's free-text reason, which quotes
// paths), the reason label of csi_node_proxy_denied_calls_total.
const (
	// DeniedNoRule: no policy rule lets the caller call the method.
	DeniedNoRule = "no_rule"
	// DeniedPath: a rule allows caller and method, but a path or object
	// in the request lies outside it (or the request cannot be
	// inspected).
	DeniedPath = "path"
	// DeniedAuditUnavailable: the call would change the node while the
	// audit log cannot take its intent record.
	DeniedAuditUnavailable = "audit_unavailable"
	// DeniedCallerExited: the process that opened the call's connection
	// has exited (Gate.Alive).
	DeniedCallerExited = "caller_exited"
)

// PanicMessage is the message a panicked call's record carries: the
// panic value may quote anything, and stays in the log.
const PanicMessage = "internal error"

// AuditUnavailableMessage is the message of a call refused because the
// audit log cannot take its intent record.
const AuditUnavailableMessage = "the audit log cannot be written, so calls that change the node are refused until it can; retry later"

// Metrics is told of every call the gate sees. The daemon's
// implementation feeds its Prometheus registry (internal/metrics), a
// library-mode driver's its own (inprocess/prommetrics) or nothing. The
// gate calls it synchronously on the call's path, so it must be quick and
// safe for concurrent use. Labels are group, version and method names,
// code names ("OK", "PermissionDenied"), rule names and the Denied
// reasons: never a value from a request.
type Metrics interface {
	// CallStarted is called when a call arrives, before it is authorised.
	CallStarted(group, version, method string)
	// CallDone is called once for every call CallStarted saw, refused or
	// not, with its outcome's code name, the policy rule that allowed it
	// ("" when none did or there is no policy) and how long it took.
	CallDone(group, version, method, code, rule string, d time.Duration)
	// CallDenied is called for a call refused before it ran, with one of
	// the Denied reasons.
	CallDenied(group, version, method, reason string)
}

// Method names what is called: the API group, the version the call came
// in (a wire version, or library mode's "inprocess"), the method as the
// caller named it (a wire version's, which policy rules and records
// name) and the group model's method it runs (Model; the same in library
// mode), whose meaning decides whether the call changes the node.
type Method struct {
	Group, Version, Name, Model string
}

// kind is the name the method is classified by: the model's, or Name
// when there is none.
func (m Method) kind() string {
	if m.Model != "" {
		return m.Model
	}
	return m.Name
}

// Mutating tells whether the method changes the node (audit.Classify of
// the model method): such calls are always audited, and refused while
// the audit log cannot take their intent.
func (m Method) Mutating() bool { return audit.Classify(m.kind()) != audit.Read }

// Call is one call arriving at the gate.
type Call struct {
	// Endpoint names where the call arrived, for logs and records: the
	// daemon's endpoint (csi-proxy-disk-v1) or library mode's.
	Endpoint string
	// Method is what is called; FullMethod its name in logs and records
	// (/v1.Disk/PartitionDisk, or disk.PartitionDisk in library mode).
	Method     Method
	FullMethod string
	// Caller is who calls, as the transport identified them; the gate
	// and what it calls read it and never change it (a transport's
	// connection shares one among its calls). nil is a caller of whom
	// nothing is known.
	Caller *identity.Caller
	// RequestID is the client's request ID for the record; "" for none.
	RequestID string
	// Model is the request as a group model struct; nil for a stream,
	// which has none. The audit log writes it redacted.
	Model any
	// Args are the paths, disks and volumes Model names (the policy
	// confines them) and Inspected whether Model was read for them: a
	// call without a model request fails every confining rule.
	Args      []policy.Arg
	Inspected bool

	argBuf [4]policy.Arg // Args' storage for the common case
	ctx    callContext   // the call's context below the gate (Authorize)
}

// callContext is a call's context below the gate: one node that answers
// for the caller (identity.FromContext) and, once the policy allowed the
// call, for the decision (policy.DecisionFromContext). Kept in the Call,
// which the daemon's Wire holds, it costs no allocation; a
// context.WithValue per key cost two, and a third for the boxed Decision
// (issue 26).
type callContext struct {
	context.Context
	caller  *identity.Caller
	decided bool
	dec     policy.Decision
}

// Value implements context.Context.
func (c *callContext) Value(key any) any {
	switch key {
	case identity.CallerKey():
		return c.caller
	case policy.DecisionKey():
		if c.decided {
			return &c.dec
		}
	}
	return c.Context.Value(key)
}

// Refusal is the error of a call the gate refused before it ran. Its
// text is exactly the message the caller sees (the daemon's status
// message), Code is the status code the daemon answers with, and it
// wraps Kind, an errdefs sentinel (or an error wrapping one), for
// errors.Is in library mode.
type Refusal struct {
	Code errdefs.Code
	Msg  string
	Kind error
}

// Error returns the message.
func (e *Refusal) Error() string { return e.Msg }

// Unwrap returns the sentinel kind.
func (e *Refusal) Unwrap() error { return e.Kind }

// ErrAuditUnavailable is the refusal of a call that changes the node while
// the audit log cannot take its intent record: retrying later may
// succeed.
var ErrAuditUnavailable = &Refusal{Code: errdefs.Unavailable, Msg: AuditUnavailableMessage, Kind: errdefs.ErrUnavailable}

// Gate lets calls through. Its fields are set once, before the first
// call; a zero field turns its step off (no policy: everything is
// allowed; no audit log: nothing is recorded), except that the caller's
// liveness is checked whenever Alive is set, with or without a policy.
type Gate struct {
	// Policy decides who may call what; nil allows every call.
	Policy *policy.Store
	// Objects answers where the disks and volumes a request names are,
	// for rules that confine them; nil fails such rules closed.
	Objects policy.ObjectHost
	// Audit records calls; nil records nothing.
	Audit *audit.Logger
	// Metrics is told of every call; nil tells nobody.
	Metrics Metrics
	// Log receives one line per refusal (at level 0). The zero Logger
	// discards them.
	Log logr.Logger
	// Alive, when set, reports whether the caller still is the process
	// that was identified: an error refuses the call with
	// Unauthenticated, whatever the policy.
	Alive func(ctx context.Context) error
	// Outcome turns what a call returned into the code and message of
	// its record and of CallDone; nil uses errdefs.CodeOf and the error's
	// text.
	Outcome func(error) (errdefs.Code, string)
	// Allowed, when set, runs for each call the policy allowed, before
	// it is audited and run; the context it returns is the call's from
	// then on.
	Allowed func(ctx context.Context, c *Call, d policy.Decision) context.Context
	// Origin describes calls whose context carries no Wire (library
	// mode's); nil refuses them, as a transport always says how its
	// calls arrived.
	Origin *Origin
	// Enter, when set, admits each call of a guarded group before
	// anything else (library mode refuses calls after Close); the leave
	// function it returns runs when the call is done.
	Enter func() (leave func(), err error)
	// Recover, when set, turns a panic in a guarded group's method into
	// the call's error (library mode: callers get an error, not a
	// panic); nil lets the panic go on to the transport's recovery.
	Recover func(c *Call, p any) error
}

// refusalLines rate-limits refusal log lines per caller at the audit
// log's default rate of denial records. One for the process: a daemon
// has a gate per endpoint, and a caller's rate holds over all of them.
var refusalLines = audit.NewDenialLimiter(audit.DefaultDenialBurst, audit.DefaultDenialInterval)

// outcome is Gate.Outcome or its default.
func (g *Gate) outcome(err error) (errdefs.Code, string) {
	if g.Outcome != nil {
		return g.Outcome(err)
	}
	if err == nil {
		return errdefs.OK, ""
	}
	return errdefs.CodeOf(err), err.Error()
}

// Authorize puts the caller in ctx (identity.FromContext, for everything
// below), checks its liveness and asks the policy. A refusal is logged,
// audited, counted (CallDenied) and returned as a *Refusal; the decision
// is returned either way. Do calls it; a transport calls it alone only
// for what it cannot run through Do (the daemon's streams).
func (g *Gate) Authorize(ctx context.Context, c *Call) (context.Context, policy.Decision, error) {
	if c.Caller == nil {
		c.Caller = &identity.Caller{}
	}
	c.ctx = callContext{Context: ctx, caller: c.Caller}
	ctx = &c.ctx
	if g.Alive != nil {
		if gone := g.Alive(ctx); gone != nil {
			d, err := g.callerGone(c, gone)
			return ctx, d, err
		}
	}
	d, err := g.decide(ctx, c)
	return ctx, d, err
}

// decide asks the policy and refuses what it denies. Apart from
// Authorize so that the policy.Call it builds and the refusal's
// formatting live in frames of their own: every call's handler runs on a
// stream worker whose stack the garbage collector shrinks while it
// waits, and a large frame on the common path made each call grow it
// again (runtime.newstack was a third of the gate's CPU).
func (g *Gate) decide(ctx context.Context, c *Call) (policy.Decision, error) {
	pc := policy.Call{Caller: *c.Caller, Group: c.Method.Group, Version: c.Method.Version, Method: c.Method.Name,
		Args: c.Args, Inspected: c.Inspected, Objects: g.Objects}
	d := g.Policy.DecideContext(ctx, &pc)
	if d.WouldDeny {
		g.wouldDeny(c, d)
	}
	if d.Allowed {
		return d, nil
	}
	return d, g.denied(c, &pc, d)
}

// denied refuses a call the policy denies.
func (g *Gate) denied(c *Call, pc *policy.Call, d policy.Decision) error {
	err := &Refusal{Code: errdefs.PermissionDenied, Msg: d.Message(*pc), Kind: errdefs.ErrPermissionDenied}
	g.refused(c, d, err, DenyReason(d), "call denied")
	return err
}

// callerGone refuses a call whose connecting process is gone: whoever
// holds the connection now was never identified.
func (g *Gate) callerGone(c *Call, gone error) (policy.Decision, error) {
	d := policy.Decision{Reason: gone.Error()}
	err := &Refusal{Code: errdefs.Unauthenticated, Kind: gone,
		Msg: fmt.Sprintf("caller %s may not call %s.%s: %v", c.Caller, c.Method.Group, c.Method.Name, gone)}
	g.refused(c, d, err, DeniedCallerExited, "call refused: the connecting process is gone")
	return d, err
}

// wouldDeny logs a call that an audit-only policy lets through although
// its rules deny it (its records say "would-deny").
func (g *Gate) wouldDeny(c *Call, d policy.Decision) {
	if ok, skipped := refusalLines.Admit(*c.Caller); ok {
		g.Log.Info("call would be denied; allowed by the audit-only policy", "endpoint", c.Endpoint, "method", c.FullMethod,
			"caller", c.Caller.String(), "reason", audit.Truncate(d.Reason, audit.MaxText), "suppressed", skipped)
	}
}

// DenyReason turns a policy denial into its fixed reason, DeniedNoRule or
// DeniedPath. The Decision's own Reason quotes the request's paths and
// must never become a metric label.
func DenyReason(d policy.Decision) string {
	if d.Reason == policy.NoRuleReason {
		return DeniedNoRule
	}
	return DeniedPath
}

// refused counts, logs and audits a call refused before it ran.
func (g *Gate) refused(c *Call, d policy.Decision, err *Refusal, reason, logMsg string) {
	if g.Metrics != nil {
		g.Metrics.CallDenied(c.Method.Group, c.Method.Version, c.Method.Name, reason)
	}
	// The reason quotes the request: bounded as the audit record bounds
	// it. And lines are rate-limited per caller as denial records are, so
	// a denial flood cannot grow the daemon's log without bound either.
	if ok, skipped := refusalLines.Admit(*c.Caller); ok {
		g.Log.Info(logMsg, "endpoint", c.Endpoint, "method", c.FullMethod, "caller", c.Caller.String(),
			"reason", audit.Truncate(d.Reason, audit.MaxText), "suppressed", skipped)
	}
	if g.Audit.Wants(c.Method.kind(), true) {
		r := g.record(c, d, time.Now())
		r.Code, r.Message = err.Code, err.Msg
		_ = g.Audit.Log(r) // a failure is logged and counted by Log; the call is refused anyway
	}
}

// Do lets one call through: Authorize, then Allowed, then, when the call
// is audited, its intent record (for a call that changes the node; when
// it cannot be written the call is refused with ErrAuditUnavailable and
// next never runs), then next, then its outcome record. The Metrics hook
// sees the call from start to end, refusals included. A panic in next is
// recorded as Internal and then goes on: the transport recovers it.
func (g *Gate) Do(ctx context.Context, c *Call, next func(context.Context) (any, error)) (resp any, err error) {
	start := time.Now()
	rule := ""
	if g.Metrics == nil {
		return g.do(ctx, c, start, &rule, next)
	}
	g.Metrics.CallStarted(c.Method.Group, c.Method.Version, c.Method.Name)
	finished := false
	defer func() {
		code := errdefs.Internal // next panicked
		if finished {
			code, _ = g.result(err)
		}
		g.Metrics.CallDone(c.Method.Group, c.Method.Version, c.Method.Name, code.String(), rule, time.Since(start))
	}()
	resp, err = g.do(ctx, c, start, &rule, next)
	finished = true
	return resp, err
}

// result is the code and message of what Do returns: a Refusal's own, or
// what Outcome makes of next's error.
func (g *Gate) result(err error) (errdefs.Code, string) {
	if rf := (*Refusal)(nil); errors.As(err, &rf) {
		return rf.Code, rf.Msg
	}
	return g.outcome(err)
}

// do is Do without the Metrics hook's bracket.
func (g *Gate) do(ctx context.Context, c *Call, start time.Time, rule *string, next func(context.Context) (any, error)) (any, error) {
	ctx, d, err := g.Authorize(ctx, c)
	if err != nil {
		return nil, err
	}
	*rule = d.Rule
	if g.Allowed != nil {
		ctx = g.Allowed(ctx, c, d)
	}
	// The allowing rule's terms reach the backend (smbPermissions), as
	// policy.NewDecisionContext would carry them.
	c.ctx.dec, c.ctx.decided = d, true
	// A would-deny is recorded like a denial, reads included: the
	// record is what an audit-only policy is run for.
	if !g.Audit.Wants(c.Method.kind(), d.WouldDeny) {
		return next(ctx)
	}
	return g.doAudited(ctx, c, d, start, next)
}

// doAudited runs an allowed call that is audited: its intent record
// first for a call that changes the node, then the call, then its
// outcome. Apart from do so that calls that are not audited (reads, in
// the shipped configuration) do not carry the record in their frame; see
// decide.
func (g *Gate) doAudited(ctx context.Context, c *Call, d policy.Decision, start time.Time, next func(context.Context) (any, error)) (any, error) {
	r := g.record(c, d, start)
	r.ID = audit.NewID()
	if c.Method.Mutating() {
		if g.Audit.Intent(&r) != nil { // logged and counted by Intent
			r.Code, r.Message = ErrAuditUnavailable.Code, ErrAuditUnavailable.Msg
			if g.Metrics != nil {
				g.Metrics.CallDenied(c.Method.Group, c.Method.Version, c.Method.Name, DeniedAuditUnavailable)
			}
			_ = g.Audit.Log(r) // the refusal, should the log take it now; logged and counted by Log
			return nil, ErrAuditUnavailable
		}
	}
	finished := false
	defer func() {
		if !finished { // next panicked; the transport recovers it
			r.Code, r.Message, r.Duration = errdefs.Internal, PanicMessage, time.Since(start)
			_ = g.Audit.Log(r) // logged and counted by Log
		}
	}()
	resp, err := next(ctx)
	finished = true
	r.Duration = time.Since(start)
	r.Code, r.Message = g.outcome(err)
	_ = g.Audit.Log(r) // logged and counted by Log; the call's outcome stands, and its intent is on file
	return resp, err
}

// record starts the audit record of a call.
func (g *Gate) record(c *Call, d policy.Decision, start time.Time) audit.Record {
	r := audit.Record{
		Time: start, Endpoint: c.Endpoint, Group: c.Method.Group, Version: c.Method.Version,
		Method: c.Method.Name, FullMethod: c.FullMethod, RequestID: c.RequestID, Caller: *c.Caller,
		Decision: audit.Allow, Rule: d.Rule, Reason: d.Reason, Model: c.Model,
	}
	switch {
	case d.WouldDeny:
		r.Decision = audit.WouldDeny
	case !d.Allowed:
		r.Decision = audit.Deny
	}
	return r
}
