// Package errgrpc maps csi-node-proxy's kinds of failure (the sentinels
// of package errdefs) to gRPC status codes and back, in exactly one place.
// It is errdefs' gRPC half, apart so that code below the wire (group
// services, host backends, library mode) links no gRPC:
//
//	return fmt.Errorf("disk %d: %w", n, errdefs.ErrNotFound) // any layer
//	return nil, errgrpc.ToGRPC(err)                           // the daemon's adapters
//	err = errgrpc.FromGRPC(err)                               // the client
//
// so errors.Is works on both sides of the pipe. An error that wraps no
// sentinel is a host failure and becomes codes.Internal, never
// codes.Unknown.
package errgrpc

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// Code returns the gRPC code for err: the code of the first sentinel it
// wraps, Canceled or DeadlineExceeded for context errors, the code of a
// status error passed through, and Internal for anything else.
//
// The sentinel-to-code table is errdefs.CodeOf's (whose numbers are
// gRPC's), so the daemon's answers, its audit records and library mode's
// outcomes cannot disagree.
func Code(err error) codes.Code {
	c := errdefs.CodeOf(err)
	if c != errdefs.Internal {
		return codes.Code(c)
	}
	if s, ok := status.FromError(err); ok && s.Code() != codes.Unknown {
		return s.Code()
	}
	return codes.Internal
}

// ToGRPC converts err into a gRPC status error whose message is err's text.
// It returns nil for nil. This is the only place where errors become codes.
func ToGRPC(err error) error {
	if err == nil {
		return nil
	}
	if s, ok := status.FromError(err); ok {
		if s.Code() != codes.Unknown {
			return err
		}
		// A status that says nothing useful: keep its message, not the
		// "rpc error: code = Unknown desc = ..." rendering of it.
		return status.Error(codes.Internal, s.Message())
	}
	return status.Error(Code(err), err.Error())
}

// FromGRPC converts a gRPC status error back into an error that wraps the
// matching sentinel, so callers can use errors.Is whether they call the
// proxy remotely or in-process. codes.DeadlineExceeded and codes.Canceled
// wrap context.DeadlineExceeded and context.Canceled, as the same call in
// library mode would. The result keeps the status (GRPCStatus), so Code and
// ToGRPC map it back to the code received. Errors that are not statuses,
// and statuses of other codes, pass through.
func FromGRPC(err error) error {
	s, ok := status.FromError(err)
	if !ok || err == nil {
		return err
	}
	if kind := errdefs.Code(s.Code()).Kind(); kind != nil {
		return &remoteError{msg: s.Message(), kind: kind, st: s}
	}
	switch s.Code() {
	case codes.DeadlineExceeded:
		return &remoteError{msg: s.Message(), kind: context.DeadlineExceeded, st: s}
	case codes.Canceled:
		return &remoteError{msg: s.Message(), kind: context.Canceled, st: s}
	}
	return err
}

// remoteError is a status received from the daemon, wrapping its sentinel
// (or the context error its code stands for).
type remoteError struct {
	msg  string
	kind error
	st   *status.Status
}

func (e *remoteError) Error() string { return e.msg }

// Unwrap lets errors.Is find the sentinel.
func (e *remoteError) Unwrap() error { return e.kind }

// GRPCStatus keeps the original status, so passing the error on keeps its
// code.
func (e *remoteError) GRPCStatus() *status.Status { return e.st }
