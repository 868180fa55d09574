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

// recoverPanics turns a panicking handler into a codes.Internal answer.
// Without it one bad request would take every endpoint of the daemon down
// with it. The stack is logged here, once; the client learns only that the
// error is internal, since the panic value may quote the request.
//
// Being the first interceptor of every endpoint, it also moves the mark of
// a request the codec could not decode into the call's context, for
// mapErrors to answer (see requestCodec).
func recoverPanics(endpoint string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		ctx = liftDecodeError(ctx, req)
		defer func() {
			if r := recover(); r != nil {
				klog.ErrorS(nil, "panic in call", "endpoint", endpoint, "method", info.FullMethod,
					"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				resp, err = nil, status.Error(codes.Internal, "internal error")
			}
		}()
		return handler(ctx, req)
	}
}

// logCalls logs every call once, when it completes: at callLevel when it
// succeeds, at level 0 when it fails. At payloadLevel the request is also
// logged when the call begins (so a call that hangs shows up) and the
// response when it ends, both redacted. Handlers below never log their
// errors: this is the one place. Every line names the caller.
//
// The lines of calls that failed through the caller's fault (a denial,
// a bad request) are rate-limited per caller by faults, at the audit
// log's denial rate, each saying how many it left out: otherwise a
// caller no rule admits grows the daemon's log by a line per call it
// makes, however fast (issue 23). Failures of the daemon or the host are
// always logged.
func logCalls(endpoint string, callLevel, payloadLevel klog.Level, lines *callLog, faults *audit.DenialLimiter) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		level := callLevel
		if isHealth(info.FullMethod) {
			level = max(level, healthLogLevel)
		}
		// The caller's description is built only when a line is written:
		// at the default verbosity a successful call writes none.
		callerOf := func() string { return grpccreds.Describe(ctx) }
		// The request itself is logged by the gate, below the adapter,
		// as the model with its secrets redacted (newGuard).
		payloads := klog.V(payloadLevel).Enabled()
		start := time.Now()
		// mapErrors runs as a plain call rather than a further
		// interceptor: one chain level less per call, and it is always
		// the innermost step, right above the adapter.
		resp, err := mapErrors(ctx, req, info, handler)
		d := time.Since(start)
		code := status.Code(err)
		switch {
		case err == nil && !klog.V(level).Enabled():
			// Nothing to write: skip building the arguments.
		case err == nil:
			if payloads {
				klog.V(level).InfoS("call", "endpoint", endpoint, "method", info.FullMethod, "caller", callerOf(), "code", code, "duration", d,
					"response", renderPayload(resp))
			} else {
				lines.write(callLine{level: level, endpoint: endpoint, method: info.FullMethod, caller: callerOf(), code: code, duration: d})
			}
		case callerFault(code):
			// The caller's mistake or the node's state, not a daemon
			// fault: visible at the default level, not as an error.
			c, _ := grpccreds.FromContext(ctx)
			if ok, skipped := faults.Admit(c); ok {
				klog.InfoS("call failed", "endpoint", endpoint, "method", info.FullMethod, "caller", c.String(), "code", code, "duration", d,
					"err", status.Convert(err).Message(), "suppressed", skipped)
			}
		default:
			klog.ErrorS(err, "call failed", "endpoint", endpoint, "method", info.FullMethod, "caller", callerOf(), "code", code, "duration", d)
		}
		return resp, err
	}
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
