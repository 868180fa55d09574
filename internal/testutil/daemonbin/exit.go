package daemonbin

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/syncbuf"
)

// exitWait is how long RunToExit waits for a daemon that should refuse to
// start: a refusal comes before any endpoint exists, in well under a
// second; one that serves instead would otherwise hang the test.
const exitWait = time.Minute

// RunToExit runs bin with args to its exit, for the tests of a command
// line the daemon must refuse, and returns its exit code and what it
// wrote on stderr. A daemon still running after a minute is killed and
// the test fails: it started when it should have refused. A binary that
// cannot be run at all fails the test too.
func RunToExit(tb testing.TB, bin string, args ...string) (code int, stderr string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), exitWait)
	defer cancel()
	var out syncbuf.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		tb.Fatalf("%s %q still ran after %v and was killed: it should have refused to start\nstderr:\n%s", bin, args, exitWait, out.String())
	case err == nil:
		return 0, out.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String()
	default:
		tb.Fatalf("run %s %q: %v", bin, args, err)
	}
	return -1, out.String() // not reached: Fatalf ends the test
}
