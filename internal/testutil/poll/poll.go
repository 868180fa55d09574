// Package poll waits in tests for a condition that another goroutine or
// process makes true (a daemon has logged a line, a file has been
// reopened, a socket has appeared), by checking it at an interval until a
// deadline: the one loop every test used to write for itself.
package poll

import (
	"testing"
	"time"
)

// Until checks cond every interval until it holds, and tells whether it
// did before d passed. cond is checked once more at the deadline, so a
// slow machine is not failed by the last sleep.
func Until(d, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
	return true
}

// Must is Until that ends the test (tb.Fatalf) when cond does not hold
// within d, naming what it waited for ("the audit log is reopened").
func Must(tb testing.TB, what string, d, interval time.Duration, cond func() bool) {
	tb.Helper()
	if !Until(d, interval, cond) {
		tb.Fatalf("timed out after %v waiting until %s", d, what)
	}
}
