package server

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
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

// guard is one endpoint's gRPC face of the call gate (package callgate):
// it turns a gRPC call into a callgate.Call, lets the gate authorise,
// audit and meter it, and turns the gate's refusals into statuses. The
// rules themselves live in the gate, shared with library mode.
type guard struct {
	endpoint string
	api      adapter.API
	gate     callgate.Gate
	obs      *observer // announces the build on health checks; may be nil
}

// newGuard returns the guard of one endpoint; obs, when not nil, runs
// for every call the policy allowed (see observer) and answers health
// checks with the build.
func newGuard(endpoint string, api adapter.API, cfg Config, obs *observer) *guard {
	g := &guard{endpoint: endpoint, api: api, obs: obs}
	g.gate = callgate.Gate{
		Policy:  cfg.Policy,
		Objects: cfg.Objects,
		Audit:   cfg.Audit,
		Metrics: cfg.Metrics.GateHook(),
		Log:     klog.Background(),
		Alive:   grpccreds.CheckAlive,
		Outcome: statusOutcome,
	}
	if obs != nil {
		g.gate.Allowed = func(ctx context.Context, c *callgate.Call, d policy.Decision) context.Context {
			obs.allowed(ctx, c.Caller, c.Method.Name, d.Rule)
			return ctx
		}
	}
	return g
}

// maxRequestID bounds the client-chosen request ID an audit record
// carries.
const maxRequestID = 128

// statusOutcome is the code and message of a call's audit record: the
// status the client receives.
func statusOutcome(err error) (errdefs.Code, string) {
	if err == nil {
		return errdefs.OK, ""
	}
	st := status.Convert(err)
	return errdefs.Code(st.Code()), st.Message()
}

// toStatus turns the gate's refusals into the statuses clients receive,
// with the refusal's code and message; other errors pass unchanged.
func toStatus(err error) error {
	if rf := (*callgate.Refusal)(nil); errors.As(err, &rf) {
		return status.Error(codes.Code(rf.Code), rf.Msg)
	}
	return err
}

// call describes a gRPC call for the gate.
func (g *guard) call(ctx context.Context, fullMethod string, req any, c identity.Caller) *callgate.Call {
	gc := &callgate.Call{
		Endpoint:   g.endpoint,
		Method:     callgate.Method{Group: g.api.Group, Version: g.api.Version, Name: methodName(fullMethod)},
		FullMethod: fullMethod,
		Caller:     c,
	}
	if m, ok := req.(proto.Message); ok {
		gc.Request = m
	}
	if g.gate.Audit == nil {
		return gc
	}
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		// Client-chosen: kept only when short and printable, so it can
		// neither bloat nor forge lines of the log.
		if v := md.Get(audit.RequestIDMetadata); len(v) > 0 && len(v[0]) <= maxRequestID && printable.Check("request ID", v[0]) == nil {
			gc.RequestID = v[0]
		}
	}
	return gc
}

// unary lets each unary call through the gate: it identifies the caller
// and puts it in the context for everything below; the gate refuses a
// call on a connection whose connecting process has exited
// (codes.Unauthenticated, with or without a policy: the connection was
// handed on) and a call the policy does not allow
// (codes.PermissionDenied), audits the calls the audit log wants
// (refusing a change whose intent cannot be written with
// codes.Unavailable), and runs the rest of the chain. Health checks only
// get the caller and the observer's header.
func (g *guard) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	c, _ := grpccreds.FromContext(ctx)
	if isHealth(info.FullMethod) {
		g.obs.announceBuild(ctx)
		return handler(identity.NewContext(ctx, c), req)
	}
	resp, err := g.gate.Do(ctx, g.call(ctx, info.FullMethod, req, c), func(ctx context.Context) (any, error) {
		return handler(ctx, req)
	})
	return resp, toStatus(err)
}

// authorizeStream authorises streaming methods. The APIs have none; the
// health service's Watch is the only one, but a stream the policy cannot
// see into must not slip past it either.
func (g *guard) authorizeStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx := ss.Context()
	c, _ := grpccreds.FromContext(ctx)
	if isHealth(info.FullMethod) {
		ctx = identity.NewContext(ctx, c)
	} else {
		var err error
		if ctx, _, err = g.gate.Authorize(ctx, g.call(ctx, info.FullMethod, nil, c)); err != nil {
			return toStatus(err)
		}
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
