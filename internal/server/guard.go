package server

import (
	"context"
	"errors"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/callgate"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity/grpccreds"
	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/printable"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
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

// guard is one endpoint's gRPC face of the call gate (package callgate).
// The gate itself sits below the adapter, in front of the groups
// (callgate.Gate.Guard), so it sees every call as the group model request
// whatever version carried it; the guard identifies the caller, puts how
// the call arrived in its context (callgate.Wire) and answers the gate's
// refusals with their own codes. The rules themselves live in the gate,
// shared with library mode.
type guard struct {
	endpoint string
	api      adapter.API
	gate     *callgate.Gate
	obs      *observer // announces the build on health checks; may be nil
}

// newGuard returns the guard of one endpoint; obs, when not nil, runs
// for every call the policy allowed (see observer) and answers health
// checks with the build.
func newGuard(endpoint string, api adapter.API, cfg Config, obs *observer) *guard {
	g := &guard{endpoint: endpoint, api: api, obs: obs}
	g.gate = &callgate.Gate{
		Policy:  cfg.Policy,
		Objects: cfg.Objects,
		Audit:   cfg.Audit,
		Metrics: cfg.Metrics.GateHook(),
		Log:     klog.Background(),
		Alive:   grpccreds.CheckAlive,
		Outcome: statusOutcome,
	}
	payloads := cfg.PayloadLogLevel
	// Asked once: the daemon's verbosity is fixed at start, and with a
	// logger set in klog every klog.V allocates (see callLogger).
	payloadsOn := klog.V(payloads).Enabled()
	g.gate.Allowed = func(ctx context.Context, c *callgate.Call, d policy.Decision) context.Context {
		if payloadsOn {
			v := klog.V(payloads)
			// The model request, with what its type declares secret
			// redacted: logged when the call begins, so a call that
			// hangs shows up. Denied calls' requests are in the audit log.
			v.InfoS("request", "endpoint", c.Endpoint, "method", c.FullMethod, "caller", c.Caller.String(), "request", renderModel(c.Model))
		}
		if obs != nil {
			obs.allowed(ctx, *c.Caller, c.Method.Name, d.Rule)
		}
		return ctx
	}
	return g
}

// maxRequestID bounds the client-chosen request ID an audit record
// carries.
const maxRequestID = 128

// statusOutcome is the code and message of a call's audit record: the
// status the client receives, as the adapter maps the group's error.
func statusOutcome(err error) (errdefs.Code, string) {
	if err == nil {
		return errdefs.OK, ""
	}
	st := status.Convert(errgrpc.ToGRPC(err))
	return errdefs.Code(st.Code()), st.Message()
}

// wire describes how a gRPC call arrived, for the gate below the adapter.
func (g *guard) wire(ctx context.Context, fullMethod string, c *identity.Caller) *callgate.Wire {
	w := &callgate.Wire{
		Endpoint:   g.endpoint,
		Group:      g.api.Group,
		Version:    g.api.Version,
		Method:     methodName(fullMethod),
		FullMethod: fullMethod,
		Caller:     c,
	}
	if g.gate.Audit == nil {
		return w
	}
	// Client-chosen: kept only when short and printable, so it can
	// neither bloat nor forge lines of the log. Looked up by key:
	// FromIncomingContext would copy the whole metadata on every call (6%
	// of the daemon's allocated bytes in the shipped configuration).
	if v := metadata.ValueFromIncomingContext(ctx, audit.RequestIDMetadata); len(v) > 0 && len(v[0]) <= maxRequestID && printable.Check("request ID", v[0]) == nil {
		w.RequestID = v[0]
	}
	return w
}

// errNotGated answers a call that succeeded without passing the gate: an
// adapter that answered without calling its group. Nothing may answer a
// caller unauthorised, so the answer is withheld.
var errNotGated = status.Error(codes.Internal, "internal error: the call was answered without passing the call gate")

// unary puts the caller and how the call arrived in its context and runs
// the chain: the adapter converts the request and calls the guarded
// group, where the gate refuses a call on a connection whose connecting
// process has exited (codes.Unauthenticated, with or without a policy:
// the connection was handed on) and a call the policy does not allow
// (codes.PermissionDenied), audits the calls the audit log wants
// (refusing a change whose intent cannot be written with
// codes.Unavailable), and runs the group Service. A request that does not
// convert is refused by the adapter (codes.InvalidArgument) before the
// gate: it is counted here, as the gate counts the calls it sees, and
// logged by log, which runs handler (callLogger). Health checks only get
// the caller and the observer's header.
func (g *guard) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler, log *callLogger) (any, error) {
	if isHealth(info.FullMethod) {
		g.obs.announceBuild(ctx)
		c, _ := grpccreds.FromContext(ctx)
		return log.unary(identity.NewContext(ctx, c), req, info, handler)
	}
	// The connection's caller, shared by its calls: not copied per call.
	w := g.wire(ctx, info.FullMethod, grpccreds.Caller(ctx))
	var start time.Time
	if g.gate.Metrics != nil {
		start = time.Now()
	}
	// The caller reaches the context below at the gate (its call
	// context); the call log reads it from the connection.
	resp, err := log.unary(callgate.WithWire(ctx, w), req, info, handler)
	switch {
	case w.Refusal() != nil:
		rf := w.Refusal()
		return nil, status.Error(codes.Code(rf.Code), rf.Msg)
	case w.Reached():
		return resp, err
	case err == nil:
		klog.ErrorS(nil, "call answered without passing the call gate", "endpoint", g.endpoint, "method", info.FullMethod)
		err, resp = errNotGated, nil
	}
	if m := g.gate.Metrics; m != nil {
		api := g.api
		m.CallStarted(api.Group, api.Version, w.Method)
		m.CallDone(api.Group, api.Version, w.Method, status.Code(err).String(), "", time.Since(start))
	}
	return resp, err
}

// authorizeStream authorises streaming methods. The APIs have none; the
// health service's Watch is the only one, but a stream the policy cannot
// see into must not slip past it either: it has no model request, so
// every rule that confines paths or objects refuses it.
func (g *guard) authorizeStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx := ss.Context()
	if isHealth(info.FullMethod) {
		c, _ := grpccreds.FromContext(ctx)
		ctx = identity.NewContext(ctx, c)
	} else {
		c := grpccreds.Caller(ctx)
		w := g.wire(ctx, info.FullMethod, c)
		call := &callgate.Call{
			Endpoint:   w.Endpoint,
			Method:     callgate.Method{Group: g.api.Group, Version: w.Version, Name: w.Method},
			FullMethod: w.FullMethod,
			Caller:     c,
			RequestID:  w.RequestID,
		}
		var err error
		if ctx, _, err = g.gate.Authorize(ctx, call); err != nil {
			return toStatus(err)
		}
	}
	return handler(srv, &contextStream{ServerStream: ss, ctx: ctx})
}

// toStatus turns the gate's refusals into the statuses clients receive,
// with the refusal's code and message; other errors pass unchanged.
func toStatus(err error) error {
	if rf := (*callgate.Refusal)(nil); errors.As(err, &rf) {
		return status.Error(codes.Code(rf.Code), rf.Msg)
	}
	return err
}

// contextStream replaces a stream's context.
type contextStream struct {
	grpc.ServerStream
	ctx context.Context
}

// Context returns the replaced context.
func (s *contextStream) Context() context.Context { return s.ctx }
