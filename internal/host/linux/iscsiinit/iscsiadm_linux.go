//go:build linux

package iscsiinit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// output is what a finished program printed and its exit code.
type output struct {
	Stdout, Stderr []byte
	ExitCode       int
}

// runner runs a program with arguments, never through a shell. It returns
// an error only when the program could not run to completion (not found,
// killed, timed out); a non-zero exit code is in output.
type runner interface {
	Run(ctx context.Context, name string, args ...string) (output, error)
}

// execRunner is the runner of the running system.
type execRunner struct{}

// Run runs name with args and a minimal environment: PATH, and LC_ALL=C so
// the messages are those the error mapping and the recorded samples know.
// Nothing secret is ever in args or the environment.
func (execRunner) Run(ctx context.Context, name string, args ...string) (output, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	out := output{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out, nil
	case ctx.Err() != nil:
		return out, fmt.Errorf("%s did not finish: %w", name, ctx.Err())
	case errors.As(err, &ee) && ee.Exited():
		out.ExitCode = ee.ExitCode()
		return out, nil
	}
	return out, fmt.Errorf("run %s: %w", name, err)
}

// iscsiadm exit codes (open-iscsi include/iscsi_err.h; iscsiadm(8) "EXIT
// STATUS"). Only those the backend treats specially are named.
const (
	errSessNotFound     = 2
	errTrans            = 4  // connect problem
	errIDBM             = 6  // node/discovery database error
	errTransTimeout     = 8  // connection timer expired
	errPDUTimeout       = 11 // PDU timed out
	errTransNotFound    = 12 // transport module (iscsi_tcp) not loaded
	errAccess           = 13 // OS permissions
	errSessExists       = 15 // session is logged in
	errISCSIDComm       = 18 // a read/write to iscsid failed
	errFatalLogin       = 19 // non-retryable login failure
	errISCSIDNotConn    = 20 // could not connect to iscsid
	errNoObjsFound      = 21 // no records/targets/sessions/portals found
	errLoginAuthFailed  = 24 // login failed: authorization failure
	errBusy             = 28
	errAgain            = 29
	errSessNotConnected = 32
)

// iscsiadmError is a failed iscsiadm command: which command, its exit code
// and its stderr (which never holds a secret: none is ever passed to it).
type iscsiadmError struct {
	op     string
	code   int
	stderr string
	kind   error // errdefs kind, or nil
	hint   string
}

func (e *iscsiadmError) Error() string {
	msg := fmt.Sprintf("%s: iscsiadm exit code %d", e.op, e.code)
	if e.hint != "" {
		msg += " (" + e.hint + ")"
	}
	if e.stderr != "" {
		msg += ": " + e.stderr
	}
	if e.kind != nil {
		msg += ": " + e.kind.Error()
	}
	return msg
}

func (e *iscsiadmError) Unwrap() error { return e.kind }

// newIscsiadmError maps an iscsiadm exit code to an errdefs kind.
func newIscsiadmError(op string, out output) *iscsiadmError {
	e := &iscsiadmError{op: op, code: out.ExitCode, stderr: cleanStderr(out.Stderr)}
	switch out.ExitCode {
	case errLoginAuthFailed:
		e.kind, e.hint = errdefs.ErrPermissionDenied, "CHAP authentication failed"
	case errNoObjsFound, errSessNotFound:
		e.kind, e.hint = errdefs.ErrNotFound, "no such record or session"
	case errTransNotFound:
		e.kind, e.hint = errdefs.ErrFailedPrecondition, "the kernel has no iSCSI TCP transport (iscsi_tcp)"
	case errISCSIDNotConn, errISCSIDComm:
		e.kind, e.hint = errdefs.ErrUnavailable, "iscsid is not running or not answering"
	case errTrans, errTransTimeout, errPDUTimeout, errBusy, errAgain, errSessNotConnected:
		e.kind, e.hint = errdefs.ErrUnavailable, "the target did not answer"
	case errFatalLogin:
		e.kind, e.hint = errdefs.ErrFailedPrecondition, "the target refused the login for good (unknown target, or this initiator is not allowed)"
	case errAccess:
		e.kind, e.hint = errdefs.ErrFailedPrecondition, "iscsiadm lacks OS permissions"
	case errSessExists:
		e.kind, e.hint = errdefs.ErrAlreadyExists, "session exists"
	}
	return e
}

// cleanStderr keeps iscsiadm's own messages and drops the noise its
// systemd socket activation attempt prints on hosts without systemd, so
// errors say what failed.
func cleanStderr(b []byte) string {
	var keep []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "",
			strings.HasPrefix(line, "System has not been booted with systemd"),
			strings.HasPrefix(line, "Failed to connect to bus"):
			continue
		}
		keep = append(keep, line)
	}
	s := strings.Join(keep, "; ")
	if len(s) > 2048 {
		s = s[:2048] + "..."
	}
	return s
}
