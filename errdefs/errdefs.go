// Package errdefs defines the kinds of failure every layer of csi-node-proxy
// reports, and maps them to gRPC status codes in exactly one place.
//
// Code below the wire (group services, host backends, library mode) returns
// ordinary Go errors that wrap one of the sentinel errors here with %w, for
// example:
//
//	return fmt.Errorf("disk %d: %w", n, errdefs.ErrNotFound)
//
// The gRPC adapters turn such an error into a status with ToGRPC, and the
// client turns a status back into the same sentinel with FromGRPC, so
// errors.Is works on both sides of the pipe. An error that wraps no sentinel
// is a host failure and becomes codes.Internal, never codes.Unknown.
package errdefs

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The sentinel errors. Wrap them; never compare error strings.
var (
	// ErrInvalidArgument: the request is malformed (bad path, bad ID, a
	// missing field). Retrying the same request cannot succeed.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrNotFound: a disk, volume, path, mapping, portal or service named by
	// the request does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists: the object the request would create exists and is
	// not the one asked for.
	ErrAlreadyExists = errors.New("already exists")
	// ErrFailedPrecondition: the host is not in a state that allows the call
	// (disk offline, path already used by another volume, volume already
	// formatted).
	ErrFailedPrecondition = errors.New("failed precondition")
	// ErrPermissionDenied: the caller may not make this call or touch this
	// object (outside the working dirs, a service not on the allow-list,
	// wrong SMB or CHAP credentials).
	ErrPermissionDenied = errors.New("permission denied")
	// ErrUnimplemented: the operation is not available on this host backend
	// or in this API version.
	ErrUnimplemented = errors.New("not implemented")
	// ErrOutOfRange: a size or number is beyond what the host allows.
	ErrOutOfRange = errors.New("out of range")
	// ErrUnavailable: the host cannot serve the call right now (for example
	// a device busy); the caller may retry.
	ErrUnavailable = errors.New("unavailable")
)

// kinds pairs each sentinel with its gRPC code. Order matters only when an
// error wraps several sentinels: the first match wins.
var kinds = []struct {
	err  error
	code codes.Code
}{
	{ErrInvalidArgument, codes.InvalidArgument},
	{ErrPermissionDenied, codes.PermissionDenied},
	{ErrNotFound, codes.NotFound},
	{ErrAlreadyExists, codes.AlreadyExists},
	{ErrFailedPrecondition, codes.FailedPrecondition},
	{ErrOutOfRange, codes.OutOfRange},
	{ErrUnimplemented, codes.Unimplemented},
	{ErrUnavailable, codes.Unavailable},
}

// Code returns the gRPC code for err: the code of the first sentinel it
// wraps, Canceled or DeadlineExceeded for context errors, the code of a
// status error passed through, and Internal for anything else.
func Code(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.code
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
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
	for _, k := range kinds {
		if k.code == s.Code() {
			return &remoteError{msg: s.Message(), kind: k.err, st: s}
		}
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

// Errorf formats an error that wraps kind: Errorf(ErrNotFound, "disk %d", 3)
// reads "disk 3: not found".
func Errorf(kind error, format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), kind)
}
