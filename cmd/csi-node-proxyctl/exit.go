package main

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// Exit codes. They are part of the CLI's interface: scripts branch on them,
// so a code never changes meaning. Every --help lists the ones its command
// can return.
const (
	exitOK = 0
	// exitFailure is any failure not listed below: the host refused
	// (Internal), a precondition does not hold, the object exists already.
	exitFailure = 1
	// exitUsage is a bad command line: unknown command or flag, a missing
	// or malformed argument, a secret file that cannot be read, and with
	// --local a node configuration that cannot be built.
	exitUsage = 2
	// exitNotFound is errdefs.ErrNotFound: no such disk, volume, path,
	// mapping, portal or service; also "fs exists" of a missing path.
	exitNotFound = 3
	// exitPermission is errdefs.ErrPermissionDenied: the policy refused
	// the call, a path outside the working directories, a service not on
	// the allow-list, or SMB or CHAP credentials the host refused.
	exitPermission = 4
	// exitUnavailable: the daemon cannot be reached (not running, no
	// endpoint for the group, no version both sides speak), --timeout
	// expired, or the daemon answered Unavailable; retrying later may
	// succeed. "health" exits with it when a group is not served.
	exitUnavailable = 5
	// exitInvalid is errdefs.ErrInvalidArgument from the group's
	// validation: the CLI parsed the request, the proxy refused it as
	// malformed (a relative or malformed path, volume ID or IQN). A path
	// outside the working directories is exitPermission.
	exitInvalid = 6
	// exitDeclined: a mutating command was not confirmed: the answer was
	// not "y", or stdin is not a terminal and --yes was not given.
	// Nothing was changed.
	exitDeclined = 7
)

// exitMeaning is the one-line meaning of each code, for --help and
// docs/cli.md.
var exitMeaning = map[int]string{
	exitOK:          "success",
	exitFailure:     "failure not listed below (the host refused, a precondition does not hold)",
	exitUsage:       "usage error: unknown command or flag, missing or malformed argument; with --local, a node the flags do not describe",
	exitNotFound:    "not found: no such disk, volume, path, mapping, portal or service",
	exitPermission:  "permission denied: the proxy's policy refused the caller, a path outside the working directories, a service not on the allow-list, or wrong credentials",
	exitUnavailable: "unavailable: the daemon cannot be reached, serves no version of the group the CLI speaks, or --timeout expired",
	exitInvalid:     "invalid argument: the request is malformed (the CLI checks what it can before asking; the proxy checks the rest)",
	exitDeclined:    "confirmation declined, or needed and stdin is not a terminal (pass --yes); nothing changed",
}

// usageError is a bad command line; it exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef formats a usageError.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// errDeclined is a mutating command that was not confirmed; it exits 7.
var errDeclined = errors.New("not confirmed; nothing was changed")

// unavailableError is a failure to reach the node: dialing the daemon, or
// building the in-process node. It exits 5. hint, when set, says where
// the CLI looked and which flag changes that.
type unavailableError struct {
	err  error
	hint string
}

func (e *unavailableError) Error() string {
	if e.hint == "" {
		return e.err.Error()
	}
	return e.err.Error() + " (" + e.hint + ")"
}
func (e *unavailableError) Unwrap() error { return e.err }

// statusError is a command's answer that is not a failure of the call but
// must still exit non-zero, with the output already printed: "fs exists"
// of a missing path, "health" of a group not served.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

// exitCode maps an error to the exit code scripts see. Usage, decline and
// reachability are the CLI's own kinds; the rest are the errdefs sentinels
// the proxy's errors wrap (through the gRPC status on the daemon's side,
// directly in-process).
func exitCode(err error) int {
	var (
		usage *usageError
		st    *statusError
		unav  *unavailableError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &usage):
		return exitUsage
	case errors.As(err, &st):
		return st.code
	case errors.Is(err, errDeclined):
		return exitDeclined
	case errors.As(err, &unav):
		return exitUnavailable
	case errors.Is(err, errdefs.ErrNotFound):
		return exitNotFound
	case errors.Is(err, errdefs.ErrPermissionDenied):
		return exitPermission
	case errors.Is(err, errdefs.ErrInvalidArgument):
		return exitInvalid
	case errors.Is(err, errdefs.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return exitUnavailable
	}
	// A status the client passed through without a sentinel (deadline,
	// a connection that broke mid-call).
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return exitUnavailable
	}
	return exitFailure
}
