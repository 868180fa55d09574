package errdefs

import (
	"context"
	"errors"
	"strconv"
)

// Code is how a call ended, numbered and named as gRPC's codes package
// (and google.rpc.Code) number and name them, without linking gRPC: the
// call gate, the audit log and library mode need the outcome of a call,
// and library mode has no wire, so it must not pay for one. Audit records
// and metric labels therefore read the same whether a call came over the
// wire or in-process.
//
// The daemon converts a gRPC status code to a Code by number
// (errdefs.Code(status.Code(err))); the numbers are part of gRPC's wire
// contract and never change. CodeOf maps an error that wraps a sentinel
// to its Code, and errgrpc.Code is built on it, so the daemon's status
// codes and these cannot disagree.
type Code uint32

// The codes, numbered as gRPC numbers them. They share their names with
// the sentinels' kinds but not their type: a Code is not an error, so
// errors.Is(err, NotFound) does not compile where ErrNotFound was meant.
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

// codeNames are gRPC's names of the codes, as codes.Code.String spells
// them.
var codeNames = [...]string{
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
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Code(" + strconv.FormatUint(uint64(c), 10) + ")"
}

// kindCodes pairs each sentinel with its code, in the order the sentinels
// are declared (the first match wins when an error wraps several).
var kindCodes = []struct {
	err  error
	code Code
}{
	{ErrInvalidArgument, InvalidArgument},
	{ErrPermissionDenied, PermissionDenied},
	{ErrNotFound, NotFound},
	{ErrAlreadyExists, AlreadyExists},
	{ErrFailedPrecondition, FailedPrecondition},
	{ErrOutOfRange, OutOfRange},
	{ErrUnimplemented, Unimplemented},
	{ErrUnavailable, Unavailable},
}

// Kind returns the sentinel whose code c is, or nil when no sentinel has
// it (OK, Canceled, DeadlineExceeded, Internal, ...): the way back from a
// code to an error kind, for errgrpc.FromGRPC.
func (c Code) Kind() error {
	for _, k := range kindCodes {
		if k.code == c {
			return k.err
		}
	}
	return nil
}

// CodeOf returns the code of err: OK for nil, the code of the first
// sentinel it wraps, Canceled or DeadlineExceeded for context errors, and
// Internal for anything else (a host failure, never Unknown). An error
// that carries a gRPC status is not looked into: code that has one uses
// the status' code.
func CodeOf(err error) Code {
	if err == nil {
		return OK
	}
	for _, k := range kindCodes {
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
