// Package statuscode names how a call ended, with the numbers and names
// gRPC's codes package (and google.rpc.Code) gives them, without linking
// gRPC: the call gate, the audit log and library mode need the outcome of
// a call, and library mode has no wire, so it must not pay for one.
//
// The daemon converts a gRPC status code to a Code by number
// (statuscode.Code(status.Code(err))); the numbers are part of gRPC's
// wire contract and never change. Of maps a Go error that wraps an
// errdefs sentinel to its Code; errgrpc.Code is built on it, so the
// daemon's status codes and these cannot disagree.
package statuscode

import (
	"context"
	"errors"
	"strconv"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// Code is the outcome of a call. Its values and String are gRPC's
// (google.golang.org/grpc/codes), so audit records and metric labels read
// the same whether a call came over the wire or in-process.
type Code uint32

// The codes, numbered as gRPC numbers them.
const (
	OK                 Code = 0
	Canceled           Code = 1
	Unknown            Code = 2
	InvalidArgument    Code = 3
	DeadlineExceeded   Code = 4
	NotFound           Code = 5
	AlreadyExists      Code = 6
	PermissionDenied   Code = 7
	ResourceExhausted  Code = 8
	FailedPrecondition Code = 9
	Aborted            Code = 10
	OutOfRange         Code = 11
	Unimplemented      Code = 12
	Internal           Code = 13
	Unavailable        Code = 14
	DataLoss           Code = 15
	Unauthenticated    Code = 16
)

// names are gRPC's names of the codes, as codes.Code.String spells them.
var names = [...]string{
	OK: "OK", Canceled: "Canceled", Unknown: "Unknown", InvalidArgument: "InvalidArgument",
	DeadlineExceeded: "DeadlineExceeded", NotFound: "NotFound", AlreadyExists: "AlreadyExists",
	PermissionDenied: "PermissionDenied", ResourceExhausted: "ResourceExhausted",
	FailedPrecondition: "FailedPrecondition", Aborted: "Aborted", OutOfRange: "OutOfRange",
	Unimplemented: "Unimplemented", Internal: "Internal", Unavailable: "Unavailable",
	DataLoss: "DataLoss", Unauthenticated: "Unauthenticated",
}

// String returns gRPC's name of c ("PermissionDenied"), or "Code(n)" for a
// number gRPC does not define, as gRPC does.
func (c Code) String() string {
	if int(c) < len(names) {
		return names[c]
	}
	return "Code(" + strconv.FormatUint(uint64(c), 10) + ")"
}

// kinds pairs each errdefs sentinel with its code, in errdefs' order (the
// first match wins when an error wraps several).
var kinds = []struct {
	err  error
	code Code
}{
	{errdefs.ErrInvalidArgument, InvalidArgument},
	{errdefs.ErrPermissionDenied, PermissionDenied},
	{errdefs.ErrNotFound, NotFound},
	{errdefs.ErrAlreadyExists, AlreadyExists},
	{errdefs.ErrFailedPrecondition, FailedPrecondition},
	{errdefs.ErrOutOfRange, OutOfRange},
	{errdefs.ErrUnimplemented, Unimplemented},
	{errdefs.ErrUnavailable, Unavailable},
}

// Kind returns the errdefs sentinel whose code c is, or nil when no
// sentinel has it (OK, Canceled, DeadlineExceeded, Internal, ...): the
// way back from a code to an error kind, for errgrpc.FromGRPC.
func Kind(c Code) error {
	for _, k := range kinds {
		if k.code == c {
			return k.err
		}
	}
	return nil
}

// Of returns the code of err: OK for nil, the code of the first errdefs
// sentinel it wraps, Canceled or DeadlineExceeded for context errors, and
// Internal for anything else (a host failure, never Unknown). An error
// that carries a gRPC status is not looked into: code that has one uses
// the status' code.
func Of(err error) Code {
	if err == nil {
		return OK
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.code
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return DeadlineExceeded
	}
	return Internal
}
