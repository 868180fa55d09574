package audit

import (
	"fmt"
	"sync"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

// Default rate of denial records per caller: a burst of 100, then one
// every 10 s. A caller no rule admits can be refused as fast as it calls,
// and each refusal was a record: a flood of denials filled the audit
// filesystem, after which every change failed closed. Past the rate a
// caller's denials are counted instead (Suppressed,
// csi_node_proxy_audit_suppressed_denials_total), and its next recorded
// denial says how many were left out ("suppressed"). So one flooding
// caller writes at most 8,640 records a day, each bounded (MaxText and
// its siblings), while records of changes are never limited.
const (
	DefaultDenialBurst    = 100
	DefaultDenialInterval = 10 * time.Second
)

// maxDenialCallers bounds how many callers the limiter remembers; past
// it, callers that are back at their full burst with nothing suppressed
// are forgotten (they would start afresh anyway).
const maxDenialCallers = 4096

// denialLimiter is a token bucket per caller.
type denialLimiter struct {
	burst    float64
	interval time.Duration

	mu      sync.Mutex
	callers map[string]*denialBucket
}

type denialBucket struct {
	tokens     float64
	last       time.Time
	suppressed uint64
}

// admit tells whether a denial of key at now is recorded, and if so how
// many of key's denials were suppressed since its last recorded one.
func (d *denialLimiter) admit(key string, now time.Time) (bool, uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b := d.callers[key]
	if b == nil {
		if len(d.callers) >= maxDenialCallers {
			d.forgetIdle(now)
		}
		b = &denialBucket{tokens: d.burst, last: now}
		d.callers[key] = b
	}
	b.tokens = min(d.burst, b.tokens+float64(now.Sub(b.last))/float64(d.interval))
	b.last = now
	if b.tokens < 1 {
		b.suppressed++
		return false, 0
	}
	b.tokens--
	n := b.suppressed
	b.suppressed = 0
	return true, n
}

// forgetIdle drops callers whose bucket has refilled and who have nothing
// suppressed to report.
func (d *denialLimiter) forgetIdle(now time.Time) {
	for k, b := range d.callers {
		if b.suppressed == 0 && b.tokens+float64(now.Sub(b.last))/float64(d.interval) >= d.burst {
			delete(d.callers, k)
		}
	}
}

// denialKey names a caller for the denial rate: its container, else its
// Unix user, else its Windows account, else its process.
func denialKey(c identity.Caller) string {
	switch {
	case c.ContainerID != "":
		return "container:" + c.ContainerID
	case c.HasUnixIDs:
		return fmt.Sprintf("uid:%d", c.UID)
	case c.WindowsSID != "":
		return "sid:" + c.WindowsSID
	}
	return fmt.Sprintf("pid:%d", c.PID)
}

// DenialLimiter rate-limits what is written about each caller's denials
// (a burst, then one per interval), as the Logger does for its records;
// the call gate uses one for its log lines. The zero value is not
// usable: create it with NewDenialLimiter. It is safe for concurrent use.
type DenialLimiter struct{ d *denialLimiter }

// NewDenialLimiter returns a limiter of burst denials per caller, then one
// per interval.
func NewDenialLimiter(burst int, interval time.Duration) *DenialLimiter {
	return &DenialLimiter{d: newDenialLimiter(Options{DenialBurst: burst, DenialInterval: interval})}
}

// Admit tells whether a denial of c now may be written, and if so how
// many of c's denials were not since the last one that was.
func (l *DenialLimiter) Admit(c identity.Caller) (bool, uint64) {
	return l.d.admit(denialKey(c), time.Now())
}
