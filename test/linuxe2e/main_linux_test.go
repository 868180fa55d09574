//go:build linux

package linuxe2e

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

func TestMain(m *testing.M) {
	if job := os.Getenv(callerEnv); job != "" {
		os.Exit(runCaller(job)) // a second caller (see asDriverB), not the tests
	}
	code := m.Run()
	linuxnode.RemoveDaemonBinary()
	if summary, bad := calls.report(); summary != "" {
		fmt.Fprint(os.Stderr, summary)
		if bad != "" && code == 0 {
			fmt.Fprint(os.Stderr, bad)
			code = 1
		}
	}
	os.Exit(code)
}

// calls records the status code of every call the tests make, by method.
// After the tests, a call that ended in Unknown or Internal fails the run:
// wrong inputs must get the documented codes, and the flows must not hit
// host failures.
var calls = &recorder{codes: map[string]map[codes.Code]int{}}

type recorder struct {
	mu    sync.Mutex
	codes map[string]map[codes.Code]int
	bad   []string
}

func (r *recorder) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	code := status.Code(err)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.codes[method] == nil {
		r.codes[method] = map[codes.Code]int{}
	}
	r.codes[method][code]++
	if code == codes.Unknown || code == codes.Internal {
		r.bad = append(r.bad, fmt.Sprintf("%s: %v", method, err))
	}
	return err
}

// report summarises the calls: per method, how many ended with which code.
func (r *recorder) report() (summary, bad string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.codes) == 0 {
		return "", ""
	}
	var methods []string
	total := 0
	for m, byCode := range r.codes {
		methods = append(methods, m)
		for _, n := range byCode {
			total += n
		}
	}
	sort.Strings(methods)
	var b strings.Builder
	fmt.Fprintf(&b, "linuxe2e: %d calls to %d methods over the daemon's sockets:\n", total, len(methods))
	for _, m := range methods {
		var parts []string
		for c, n := range r.codes[m] {
			parts = append(parts, fmt.Sprintf("%v %d", c, n))
		}
		sort.Strings(parts)
		fmt.Fprintf(&b, "  %-45s %s\n", m, strings.Join(parts, ", "))
	}
	if len(r.bad) > 0 {
		bad = "linuxe2e: calls ended in Unknown or Internal:\n  " + strings.Join(r.bad, "\n  ") + "\n"
	}
	return b.String(), bad
}
