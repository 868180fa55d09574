package inprocess

import (
	"fmt"
	"runtime/debug"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/callgate"
)

// The refusals that are library mode's own, worded as the daemon words
// them.
var (
	// errClosed is what a call after Close gets, as a call after the
	// client's Close does: a failed precondition, since retrying never
	// succeeds.
	errClosed = errdefs.Errorf(errdefs.ErrFailedPrecondition, "csi-node-proxy inprocess: the node is closed")
)

// panicError is what a call whose group Service panicked returns. It
// wraps no errdefs sentinel (even when the panic value is an error that
// does), so errgrpc.Code gives Internal, as the daemon answers.
type panicError struct {
	method string // group.Method
	value  any    // what the Service panicked with
}

func (e *panicError) Error() string {
	return fmt.Sprintf("csi-node-proxy inprocess: internal error: %s panicked: %v (a bug; the stack is in the log)", e.method, e.value)
}

// bindGate makes the call gate's guarded groups (callgate.Gate.Guard, the
// same the daemon's adapters call) library mode's: the caller is the
// process itself; a closed Node refuses first (errClosed); the call
// counts as in flight throughout, so Close waits for its record; and a
// panic in a group Service is logged once with its stack and returned as
// a panicError (Internal by errgrpc.Code; the gate has audited it as
// Internal), so it does not reach the caller as a panic. Everything else
// (policy, audit, metrics, refusals worded as the daemon's status
// messages, wrapping errdefs.ErrPermissionDenied or
// errdefs.ErrUnavailable) is the gate's.
func (s *security) bindGate() {
	s.gate.Origin = &callgate.Origin{Endpoint: Endpoint, Version: Version, Caller: s.caller}
	s.gate.Enter = func() (func(), error) {
		if !s.enter() {
			return nil, errClosed
		}
		return s.leave, nil
	}
	s.gate.Recover = func(c *callgate.Call, p any) error {
		s.gate.Log.Error(nil, "panic in call", "endpoint", Endpoint, "method", c.FullMethod,
			"caller", s.caller.String(), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		return &panicError{method: c.FullMethod, value: p}
	}
}
