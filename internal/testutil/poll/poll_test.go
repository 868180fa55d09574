package poll

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestUntil: a condition that comes true is seen; one that never does is
// given up on near the deadline, not long after.
func TestUntil(t *testing.T) {
	var n atomic.Int32
	if !Until(time.Second, time.Millisecond, func() bool { return n.Add(1) >= 3 }) {
		t.Error("a condition true on the third check was not seen")
	}
	start := time.Now()
	if Until(30*time.Millisecond, 5*time.Millisecond, func() bool { return false }) {
		t.Error("a condition never true was reported true")
	}
	if d := time.Since(start); d < 30*time.Millisecond || d > 2*time.Second {
		t.Errorf("gave up after %v; want a little over 30ms", d)
	}
}
