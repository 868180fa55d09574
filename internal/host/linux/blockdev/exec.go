package blockdev

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// Exec runs the host tools the backend cannot replace with a system call:
// mkfs.ext4, mkfs.xfs, e2fsck, resize2fs and xfs_growfs. Arguments are
// passed as a vector, never through a shell, so a volume ID or path can
// never become a command.
type Exec interface {
	// Run runs argv[0] (looked up in PATH) with the arguments argv[1:],
	// waits for it, and returns its standard output. A tool that exits
	// non-zero yields an *ExitError carrying its exit status and standard
	// error. The run is bounded by ctx and by the implementation's timeout;
	// running out of time kills the tool and returns an error wrapping
	// context.DeadlineExceeded.
	Run(ctx context.Context, argv []string) ([]byte, error)
}

// ExitError reports a tool that failed: it exited non-zero or could not run.
type ExitError struct {
	// Argv is the command that ran.
	Argv []string
	// Code is the exit status, or -1 if the tool did not exit normally
	// (killed at the timeout, or it could not be started).
	Code int
	// Stderr is the tool's standard error, trimmed and capped at 4 KiB: the
	// part of the message a driver author can act on.
	Stderr string
	// Err is the underlying error from os/exec or the context.
	Err error
}

// Error reads "mkfs.xfs /dev/loop0p1: exit status 1: <stderr>".
func (e *ExitError) Error() string {
	var b strings.Builder
	b.WriteString(strings.Join(e.Argv, " "))
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		fmt.Fprintf(&b, "exit status %d", e.Code)
	}
	if e.Stderr != "" {
		b.WriteString(": ")
		b.WriteString(e.Stderr)
	}
	return b.String()
}

// Unwrap exposes the underlying error (context.DeadlineExceeded after a
// timeout, exec.ErrNotFound for a missing tool).
func (e *ExitError) Unwrap() error { return e.Err }

// maxStderr caps the standard error kept in an ExitError.
const maxStderr = 4 << 10

// NewExec returns the Exec that runs tools on this host, each for at most
// timeout (no limit but ctx's if timeout <= 0). Tools run with LC_ALL=C so
// their messages are the English ones documented upstream, and on Linux
// they die with the process that started them (exec_linux.go).
func NewExec(timeout time.Duration) Exec { return &osExec{timeout: timeout} }

type osExec struct{ timeout time.Duration }

// Run implements Exec.
func (o *osExec) Run(ctx context.Context, argv []string) ([]byte, error) {
	if len(argv) == 0 {
		return nil, errors.New("exec: empty command")
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	cmd := o.command(ctx, argv)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	unlock := lockToolThread()
	err := cmd.Run()
	unlock()
	if err == nil {
		return stdout.Bytes(), nil
	}
	ee := &ExitError{Argv: argv, Code: -1, Stderr: trimStderr(stderr.String()), Err: err}
	var xe *exec.ExitError
	switch {
	case ctx.Err() != nil:
		ee.Err = fmt.Errorf("killed: %w", ctx.Err())
	case errors.As(err, &xe) && xe.Exited():
		ee.Code, ee.Err = xe.ExitCode(), nil
	}
	return stdout.Bytes(), ee
}

// command prepares the run of argv under ctx.
func (o *osExec) command(ctx context.Context, argv []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	// A tool that leaves a child holding its pipes must not hang Run past
	// the deadline.
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = toolProcAttr()
	return cmd
}

func trimStderr(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxStderr {
		s = s[:maxStderr] + "…"
	}
	return s
}

// FakeExec is an Exec for tests: it records every command and answers with
// Respond (or success with no output when Respond is nil). It is exported
// so the layers above the backend can test their wiring without tools.
type FakeExec struct {
	// Respond, if set, returns the output and error of each command.
	Respond func(argv []string) ([]byte, error)

	mu    sync.Mutex
	calls [][]string
}

// Run records argv and answers with Respond.
func (f *FakeExec) Run(ctx context.Context, argv []string) ([]byte, error) {
	f.mu.Lock()
	f.calls = append(f.calls, append([]string(nil), argv...))
	f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f.Respond == nil {
		return nil, nil
	}
	return f.Respond(argv)
}

// Calls returns the commands run so far, in order.
func (f *FakeExec) Calls() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([][]string, len(f.calls))
	for i, c := range f.calls {
		out[i] = append([]string(nil), c...)
	}
	return out
}

// toolPackages names the Debian package of each tool, for the error a
// missing tool produces.
var toolPackages = map[string]string{
	"mkfs.ext4":  "e2fsprogs",
	"e2fsck":     "e2fsprogs",
	"resize2fs":  "e2fsprogs",
	"mkfs.xfs":   "xfsprogs",
	"xfs_growfs": "xfsprogs",
	"blkid":      "util-linux",
}

// toolError maps a failed tool run: a missing tool is a host that is not
// set up (errdefs.ErrFailedPrecondition naming the Debian package); the
// rest passes through with the tool's stderr in the message.
func toolError(err error) error {
	var ee *ExitError
	if errors.Is(err, exec.ErrNotFound) && errors.As(err, &ee) && len(ee.Argv) > 0 {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%s is not installed on the host (Debian package %s)", ee.Argv[0], toolPackages[ee.Argv[0]])
	}
	return err
}
