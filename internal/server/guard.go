package server

import (
	"context"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/metrics"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/printable"
)

// healthPrefix begins the full method names of the health service, which
// every endpoint serves to anyone who can reach it: it says nothing about
// the node, so it is neither authorised nor audited.
const healthPrefix = "/grpc.health.v1.Health/"

func isHealth(fullMethod string) bool { return strings.HasPrefix(fullMethod, healthPrefix) }

// methodName returns the method of a gRPC full method name:
// /v1.Disk/PartitionDisk → PartitionDisk.
func methodName(fullMethod string) string {
	return fullMethod[strings.LastIndexByte(fullMethod, '/')+1:]
}

// errAuditUnavailable refuses calls that change the node while audit
// records cannot be written.
var errAuditUnavailable = status.Error(codes.Unavailable,
	"the audit log cannot be written, so calls that change the node are refused until it can; retry later")

type decisionKey struct{}

// decisionFrom returns the policy decision authorize made for the call.
func decisionFrom(ctx context.Context) policy.Decision {
	d, ok := ctx.Value(decisionKey{}).(policy.Decision)
	if !ok {
		return policy.Decision{Allowed: true}
	}
	return d
}

// guard holds what the authorisation and audit interceptors of one
// endpoint share.
type guard struct {
	endpoint string
	api      adapter.API
	policy   *policy.Store     // nil: no policy, every caller may call
	objects  policy.ObjectHost // nil: rules confining disks and volumes refuse calls naming them
	audit    *audit.Logger     // nil: no audit
	metrics  *metrics.Metrics  // nil: no metrics
}

// noRuleReason is the Reason policy.Decide gives when no rule matches the
// caller and method; any other denial is about the request's paths.
// TestDenyReasons pins the two apart.
const noRuleReason = "no rule allows it"

// denyReason turns a policy denial into the fixed reason label of
// csi_node_proxy_denied_calls_total. The Decision's own Reason quotes the
// request's paths and must never become a label.
func denyReason(d policy.Decision) string {
	if d.Reason == noRuleReason {
		return metrics.DeniedNoRule
	}
	return metrics.DeniedPath
}

// maxRequestID bounds the client-chosen request ID an audit record
// carries.
const maxRequestID = 128

// record starts the audit record of a call.
func (g *guard) record(ctx context.Context, fullMethod string, req any, start time.Time) audit.Record {
	c, _ := identity.FromContext(ctx)
	d := decisionFrom(ctx)
	r := audit.Record{
		Time: start, Endpoint: g.endpoint, Group: g.api.Group, Version: g.api.Version,
		Method: methodName(fullMethod), FullMethod: fullMethod, Caller: c,
		Decision: audit.Allow, Rule: d.Rule, Reason: d.Reason,
	}
	if !d.Allowed {
		r.Decision = audit.Deny
	}
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		// Client-chosen: kept only when short and printable, so it can
		// neither bloat nor forge lines of the log.
		if v := md.Get(audit.RequestIDMetadata); len(v) > 0 && len(v[0]) <= maxRequestID && printable.Check("request ID", v[0]) == nil {
			r.RequestID = v[0]
		}
	}
	if m, ok := req.(proto.Message); ok {
		r.Request = m
	}
	return r
}

// decide attaches the caller to ctx and asks the policy. A denial is
// logged and audited here, since the call goes no further.
func (g *guard) decide(ctx context.Context, fullMethod string, req any) (context.Context, error) {
	c, _ := identity.FromContext(ctx)
	ctx = identity.NewContext(ctx, c)
	if isHealth(fullMethod) {
		return ctx, nil
	}
	msg, _ := req.(proto.Message)
	call := policy.Call{Caller: c, Group: g.api.Group, Version: g.api.Version, Method: methodName(fullMethod), Request: msg, Objects: g.objects}
	if err := identity.CheckAlive(ctx); err != nil {
		// The identity was taken from a process that is gone: whoever
		// holds the connection now was never identified.
		return g.refuseGone(ctx, fullMethod, req, call, err)
	}
	d := g.policy.DecideContext(ctx, call)
	ctx = context.WithValue(ctx, decisionKey{}, d)
	if d.Allowed {
		return ctx, nil
	}
	err := status.Error(codes.PermissionDenied, d.Message(call))
	g.metrics.CallDenied(g.api.Group, g.api.Version, call.Method, denyReason(d))
	klog.InfoS("call denied", "endpoint", g.endpoint, "method", fullMethod, "caller", c.String(), "reason", d.Reason)
	if g.audit.Wants(call.Method, true) {
		r := g.record(ctx, fullMethod, req, time.Now())
		r.Code, r.Message = codes.PermissionDenied, status.Convert(err).Message()
		_ = g.audit.Log(r) // a failure is logged and counted by Log; the call is refused anyway
	}
	return ctx, err
}

// refuseGone refuses a call whose connection's connecting process has
// exited (identity.CheckAlive) with codes.Unauthenticated, logs it,
// counts it (metrics.DeniedCallerExited) and audits it as a denial, with
// or without a policy.
func (g *guard) refuseGone(ctx context.Context, fullMethod string, req any, call policy.Call, gone error) (context.Context, error) {
	d := policy.Decision{Reason: gone.Error()}
	ctx = context.WithValue(ctx, decisionKey{}, d)
	err := status.Errorf(codes.Unauthenticated, "caller %s may not call %s.%s: %v", call.Caller, call.Group, call.Method, gone)
	g.metrics.CallDenied(g.api.Group, g.api.Version, call.Method, metrics.DeniedCallerExited)
	klog.InfoS("call refused: the connecting process is gone", "endpoint", g.endpoint, "method", fullMethod, "caller", call.Caller.String(), "reason", d.Reason)
	if g.audit.Wants(call.Method, true) {
		r := g.record(ctx, fullMethod, req, time.Now())
		r.Code, r.Message = codes.Unauthenticated, status.Convert(err).Message()
		_ = g.audit.Log(r) // a failure is logged and counted by Log; the call is refused anyway
	}
	return ctx, err
}

// authorize identifies the caller of each call, puts it in the context
// for everything below, refuses the call with codes.Unauthenticated when
// the process that opened its connection has exited (the connection was
// handed on), and with codes.PermissionDenied unless the policy allows
// it. Without a policy every call of a live connection is allowed: the
// liveness check runs either way.
func (g *guard) authorize(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	ctx, err := g.decide(ctx, info.FullMethod, req)
	if err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

// authorizeStream is authorize for streaming methods. The APIs have none;
// the health service's Watch is the only one, but a stream the policy
// cannot see into must not slip past it either.
func (g *guard) authorizeStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx, err := g.decide(ss.Context(), info.FullMethod, nil)
	if err != nil {
		return err
	}
	return handler(srv, &contextStream{ServerStream: ss, ctx: ctx})
}

// contextStream replaces a stream's context.
type contextStream struct {
	grpc.ServerStream
	ctx context.Context
}

// Context returns the replaced context.
func (s *contextStream) Context() context.Context { return s.ctx }

// auditCalls writes the audit records of every allowed call the Logger
// wants (see audit.Logger.Wants). A call that changes the node is
// audited before it runs: its intent record (audit.Logger.Intent) must
// be written first, and when it cannot be, the call is refused with
// codes.Unavailable and nothing changes, since an unaudited change is
// what the audit log exists to prevent. So every change that happened
// has its intent on file, even when its outcome record is lost. The
// outcome ("done", same ID) is written when the call ends, panics
// included; a read has only that record. Reads go on whatever the audit
// log's state, and a change goes ahead as soon as its intent is written.
func (g *guard) auditCalls(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	if g.audit == nil || isHealth(info.FullMethod) || !g.audit.Wants(methodName(info.FullMethod), false) {
		return handler(ctx, req)
	}
	start := time.Now()
	r := g.record(ctx, info.FullMethod, req, start)
	r.ID = audit.NewID()
	if audit.Classify(r.Method) != audit.Read {
		if g.audit.Intent(&r) != nil { // logged and counted by Intent
			r.Code, r.Message = codes.Unavailable, status.Convert(errAuditUnavailable).Message()
			g.metrics.CallDenied(g.api.Group, g.api.Version, r.Method, metrics.DeniedAuditUnavailable)
			_ = g.audit.Log(r) // the refusal, should the log take it now; logged and counted by Log
			return nil, errAuditUnavailable
		}
	}
	finished := false
	defer func() {
		if !finished { // the handler panicked; recoverPanics answers Internal
			r.Code, r.Message, r.Duration = codes.Internal, "internal error", time.Since(start)
			_ = g.audit.Log(r) // logged and counted by Log
		}
	}()
	resp, err = handler(ctx, req)
	finished = true
	r.Duration = time.Since(start)
	r.Code = status.Code(err)
	if err != nil {
		r.Message = status.Convert(err).Message()
	}
	_ = g.audit.Log(r) // logged and counted by Log; the call's outcome stands, and its intent is on file
	return resp, err
}
