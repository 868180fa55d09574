package server

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	protoenc "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// A request that does not parse (a string field that is not UTF-8, a
// truncated field, a bad tag) is the caller's mistake, so it must be
// answered InvalidArgument. grpc-go decodes a unary request before any
// interceptor runs and turns a codec error into codes.Internal whatever
// the error says (rpc_util.go recv: "grpc: failed to unmarshal the
// received message"), so the codec cannot answer it itself. Instead
// requestCodec, the server's codec for every content subtype, decodes with
// grpc's proto codec and, when that fails, resets the message to empty,
// records the failure against it and reports success; the interceptors
// then answer the call InvalidArgument before any handler sees the empty
// message. For unary calls unaryChain.intercept, the one interceptor every
// endpoint runs, takes the mark out of decodeErrors into the call's context
// first (so no mark outlives its call, even one the policy then denies),
// and mapErrors, the innermost step (the call log calls it), answers with
// it: the call is still authorised,
// audited and logged like any other. Streaming calls (the health service's
// Watch) are checked in checkStreamDecode.

// decodeErrors maps a request message (its pointer) that failed to decode
// to the error. An entry lives from the codec's Unmarshal to the
// interceptor of the same call, which removes it.
var decodeErrors sync.Map

// requestCodec is grpc's proto codec that lets a malformed request through
// as an empty message marked in decodeErrors.
type requestCodec struct{ proto encoding.CodecV2 }

func newRequestCodec() requestCodec {
	return requestCodec{proto: encoding.GetCodecV2(protoenc.Name)}
}

// Marshal encodes a response as grpc's proto codec does.
func (c requestCodec) Marshal(v any) (mem.BufferSlice, error) { return c.proto.Marshal(v) }

// Unmarshal decodes a request; a malformed one becomes an empty message
// and an entry in decodeErrors, and is not an error here (see above).
func (c requestCodec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.proto.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return err // not a message this server decodes: grpc answers Internal
	}
	proto.Reset(m)
	decodeErrors.Store(v, err)
	return nil
}

// Name is the content subtype the codec serves: proto, as grpc's.
func (c requestCodec) Name() string { return protoenc.Name }

// takeDecodeError returns (and forgets) the InvalidArgument status for a
// request the codec could not decode, or nil.
func takeDecodeError(req any) error {
	if req == nil {
		return nil
	}
	err, ok := decodeErrors.LoadAndDelete(req)
	if !ok {
		return nil
	}
	return status.Errorf(codes.InvalidArgument, "the request is not a valid protobuf message: %v", err)
}

// decodeErrorKey is the context key of a unary call's decode error.
type decodeErrorKey struct{}

// liftDecodeError moves the decode error of req, if any, from decodeErrors
// into the call's context.
func liftDecodeError(ctx context.Context, req any) context.Context {
	if err := takeDecodeError(req); err != nil {
		return context.WithValue(ctx, decodeErrorKey{}, err)
	}
	return ctx
}

// decodeErrorFrom returns the call's decode error, or nil.
func decodeErrorFrom(ctx context.Context) error {
	err, _ := ctx.Value(decodeErrorKey{}).(error)
	return err
}

// checkStreamDecode answers InvalidArgument for a streamed request the
// codec could not decode.
func checkStreamDecode(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, decodeCheckedStream{ss})
}

// decodeCheckedStream is a ServerStream whose RecvMsg fails with
// InvalidArgument for a message the codec could not decode.
type decodeCheckedStream struct{ grpc.ServerStream }

// RecvMsg receives a message and checks that it decoded.
func (s decodeCheckedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return takeDecodeError(m)
}
