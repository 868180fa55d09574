// Package errdefs defines the kinds of failure every layer of csi-node-proxy
// reports; package errgrpc maps them to gRPC status codes in exactly one
// place. errdefs itself links no gRPC, so library mode and the layers
// below the wire do not either.
//
// Code below the wire (group services, host backends, library mode) returns
// ordinary Go errors that wrap one of the sentinel errors here with %w, for
// example:
//
//	return fmt.Errorf("disk %d: %w", n, errdefs.ErrNotFound)
//
// The gRPC adapters turn such an error into a status with errgrpc.ToGRPC,
// and the client turns a status back into the same sentinel with
// errgrpc.FromGRPC, so errors.Is works on both sides of the pipe. An error
// that wraps no sentinel is a host failure and becomes codes.Internal,
// never codes.Unknown.
//
// Code names how a call ended, with gRPC's numbers but without gRPC, and
// CodeOf is the one table from sentinels to codes: errgrpc, the call gate
// and the audit log all read it, so the daemon's statuses, library mode's
// outcomes and the audit records cannot disagree.
package errdefs

import (
	"errors"
	"fmt"
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

// Errorf formats an error that wraps kind: Errorf(ErrNotFound, "disk %d", 3)
// reads "disk 3: not found".
func Errorf(kind error, format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), kind)
}
