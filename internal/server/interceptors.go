package server

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity/grpccreds"
)

// unaryChain runs the steps of one endpoint's unary calls in this order,
// each calling the next directly: recoverPanic, the per-caller bound on
// calls in progress and the pacing of refusals (callLimiter), the guard (identity, the gate's wire
// description, refusals) and the call log (callLogger, with mapErrors
// innermost, right above the adapter). As separate interceptors of
// grpc.ChainUnaryInterceptor they cost a closure per step per call (5% of
// the daemon's allocations in the shipped configuration, issue 26).
type unaryChain struct {
	endpoint string
	calls    *callLimiter
	guard    *guard
	log      *callLogger
}

// intercept is the endpoint's unary interceptor. Being the first step,
// it also moves the mark of a request the codec could not decode into
// the call's context, for mapErrors to answer (see requestCodec).
func (u *unaryChain) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	ctx = liftDecodeError(ctx, req)
	defer recoverPanic(u.endpoint, info, &resp, &err)
	key := callerKey(ctx, info)
	if err := u.calls.awaitStart(ctx, key); err != nil {
		return nil, err
	}
	if err := u.calls.enter(ctx, key); err != nil {
		u.calls.holdRefusal(ctx, key)
		return nil, err
	}
	resp, err = u.entered(ctx, key, req, info, handler)
	// After the call has given back its place among its caller's calls
	// in progress: a refusal waiting for its turn must not take the
	// places of the caller's other calls (a driver's, when a hostile
	// process shares its key).
	u.calls.pace(ctx, key, err)
	return resp, err
}

// entered runs a call enter counted under key, and ends what it counted.
func (u *unaryChain) entered(ctx context.Context, key string, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	defer u.calls.leave(key)
	return u.guard.unary(ctx, req, info, handler, u.log)
}

// recoverPanic, deferred, turns a panicking handler into a codes.Internal
// answer. Without it one bad request would take every endpoint of the
// daemon down with it. The stack is logged here, once; the client learns
// only that the error is internal, since the panic value may quote the
// request.
func recoverPanic(endpoint string, info *grpc.UnaryServerInfo, resp *any, err *error) {
	if r := recover(); r != nil {
		klog.ErrorS(nil, "panic in call", "endpoint", endpoint, "method", info.FullMethod,
			"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		*resp, *err = nil, status.Error(codes.Internal, "internal error")
	}
}

// callLogger logs every call once, when it completes: at callLevel when
// it succeeds, at level 0 when it fails. At payloadLevel the request is
// also logged when the call begins (so a call that hangs shows up) and
// the response when it ends, both redacted. Handlers below never log
// their errors: this is the one place. Every line names the caller.
//
// The lines of calls that failed through the caller's fault (a denial,
// a bad request) are rate-limited per caller by faults, at the audit
// log's denial rate, each saying how many it left out: otherwise a
// caller no rule admits grows the daemon's log by a line per call it
// makes, however fast (issue 23). Failures of the daemon or the host are
// always logged.
type callLogger struct {
	endpoint                string
	callLevel, payloadLevel klog.Level
	// callOn, healthOn and payloadsOn say whether klog's verbosity
	// reaches callLevel, the health checks' level and payloadLevel,
	// asked once (newCallLogger): with a logger set in klog (the
	// batched writer, from -v=2) every klog.V allocates, and the
	// daemon's verbosity is fixed at start.
	callOn, healthOn, payloadsOn bool
	lines                        *callLog
	faults                       *audit.DenialLimiter
}

func newCallLogger(endpoint string, callLevel, payloadLevel klog.Level, lines *callLog, faults *audit.DenialLimiter) *callLogger {
	return &callLogger{endpoint: endpoint, callLevel: callLevel, payloadLevel: payloadLevel,
		callOn: klog.V(callLevel).Enabled(), healthOn: klog.V(max(callLevel, healthLogLevel)).Enabled(),
		payloadsOn: klog.V(payloadLevel).Enabled(), lines: lines, faults: faults}
}

// unary runs the call through mapErrors and handler and logs it.
func (l *callLogger) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	level, on := l.callLevel, l.callOn
	if isHealth(info.FullMethod) {
		level, on = max(level, healthLogLevel), l.healthOn
	}
	// The request itself is logged by the gate, below the adapter, as
	// the model with its secrets redacted (newGuard).
	start := time.Now()
	resp, err := mapErrors(ctx, req, info, handler)
	d := time.Since(start)
	code := status.Code(err)
	switch {
	case err == nil && !on:
		// Nothing to write: skip building the arguments.
	case err == nil && l.payloadsOn:
		klog.V(level).InfoS("call", "endpoint", l.endpoint, "method", info.FullMethod, "caller", grpccreds.Describe(ctx), "code", code, "duration", d,
			"response", renderPayload(resp))
	case err == nil:
		l.lines.write(callLine{level: level, endpoint: l.endpoint, method: info.FullMethod, caller: grpccreds.Describe(ctx), code: code, duration: d})
	case callerFault(code):
		// The caller's mistake or the node's state, not a daemon
		// fault: visible at the default level, not as an error.
		c, _ := grpccreds.FromContext(ctx)
		if ok, skipped := l.faults.Admit(c); ok {
			klog.InfoS("call failed", "endpoint", l.endpoint, "method", info.FullMethod, "caller", c.String(), "code", code, "duration", d,
				"err", status.Convert(err).Message(), "suppressed", skipped)
		}
	default:
		klog.ErrorS(err, "call failed", "endpoint", l.endpoint, "method", info.FullMethod, "caller", grpccreds.Describe(ctx), "code", code, "duration", d)
	}
	return resp, err
}

// callerFault tells the codes that report a bad or impossible request
// rather than a failure of the daemon or the host.
func callerFault(c codes.Code) bool {
	switch c {
	case codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.PermissionDenied,
		codes.FailedPrecondition, codes.OutOfRange, codes.Unimplemented, codes.Canceled,
		codes.Unauthenticated, codes.Aborted:
		return true
	}
	return false
}

// payloadJSON renders responses with their proto field names, the names
// the wire contract documents. No response carries a secret: they are
// in requests only, whose model the gate logs redacted.
var payloadJSON = protojson.MarshalOptions{UseProtoNames: true}

// renderPayload returns the JSON of a response.
func renderPayload(v any) string {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Sprintf("<%T>", v)
	}
	b, err := payloadJSON.Marshal(m)
	if err != nil {
		return fmt.Sprintf("<%T: %v>", v, err)
	}
	return string(b)
}

// renderModel returns the JSON of a group model request, with every field
// its type declares secret redacted (audit.RedactModel).
func renderModel(v any) string {
	b, err := json.Marshal(audit.RedactModel(v))
	if err != nil {
		return fmt.Sprintf("<%T: %v>", v, err)
	}
	return string(b)
}

// mapErrors is the safety net under the adapters: they map their errors
// with errgrpc.ToGRPC already, but an error that slips through unmapped
// must not reach the client as codes.Unknown, which drivers can only
// handle by matching text. A status error passes unchanged unless its code
// is Unknown; that becomes Internal with the same message and details.
//
// A request the codec could not decode never reaches the handler: it is
// answered here, innermost, with InvalidArgument (see requestCodec).
func mapErrors(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := decodeErrorFrom(ctx); err != nil {
		return nil, err
	}
	resp, err := handler(ctx, req)
	if err == nil {
		return resp, nil
	}
	if st, ok := status.FromError(err); ok {
		if st.Code() != codes.Unknown {
			return nil, err
		}
		p := st.Proto()
		p.Code = int32(codes.Internal)
		return nil, status.ErrorProto(p)
	}
	return nil, errgrpc.ToGRPC(err)
}
