package audit

import (
	"fmt"
	"sync"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

// Default rate of the rate-limited records per caller: a burst of 100,
// then one every 10 s. A caller no rule admits can be refused as fast as
// it calls, and each refusal was a record: a flood of denials filled the
// audit filesystem, after which every change failed closed. The same holds
// for the reads --audit-reads records and for the "would-deny" records of
// reads under an audit-only policy (where every call of a caller with no
// rights is one). Past the rate a caller's records of that kind are
// counted instead (Suppressed, csi_node_proxy_audit_suppressed_denials_total),
// its next record of the kind says how many were left out ("suppressed"),
// and when none comes, a "summary" record does once its window has ended.
// So one flooding caller writes at most 8,640 records of each kind a day,
// each bounded (MaxText and its siblings), while records of changes are
// never limited.
const (
	DefaultDenialBurst    = 100
	DefaultDenialInterval = 10 * time.Second
)

// maxDenialCallers bounds how many callers the limiter remembers; past
// it, callers that are back at their full burst with nothing suppressed
// are forgotten (they would start afresh anyway).
const maxDenialCallers = 4096

// Kinds of rate-limited records, as a summary record's "suppressed_kind"
// spells them. Each kind has a bucket of its own per caller: a caller's
// reads never use up the records of its denials, so a caller with some
// rights cannot hide its denied probes behind a flood of reads.
const (
	// SuppressedDeny: denials (Decision Deny), of any method.
	SuppressedDeny = "deny"
	// SuppressedWouldDeny: reads an audit-only policy let through
	// although its rules deny them (Decision WouldDeny). A would-deny
	// call that changes the node is a change that happened and is never
	// limited.
	SuppressedWouldDeny = "would-deny"
	// SuppressedRead: allowed reads (Options.Reads).
	SuppressedRead = "read"
	// SuppressedLowSpace: denials and reads of every caller left out
	// while the audit file's file system had less free space than the
	// reserve kept for the records of changes (Options.Reserve). Their
	// summary names no caller: it is written when space is back, before
	// the next denial or read, or at Close.
	SuppressedLowSpace = "low-space"
)

// denialLimiter is a token bucket per caller and kind of record, with one
// timer (not one per caller) that writes the summary records of the
// windows that ended without a further record.
type denialLimiter struct {
	burst    float64
	interval time.Duration

	mu      sync.Mutex
	callers map[string]*denialBucket
	pending int         // buckets with suppressed > 0
	timer   *time.Timer // flushes ended windows; nil until the first one
	armed   bool        // timer is set to fire
	closed  bool        // no more timers: the Logger was closed
	onDue   func()      // what the timer runs (Logger.flushEnded); nil: no timer
}

type denialBucket struct {
	tokens     float64
	last       time.Time
	suppressed uint64
	// caller and kind name the records left out, for the summary: the
	// caller of the last one suppressed.
	caller identity.Caller
	kind   string
	// due is when the window of suppressed records ends: an interval
	// after the caller could write a record again. A caller
	// still calling writes that record, with the count, before then; a
	// summary says the count of a caller that went quiet.
	due time.Time
}

// summary is a window of suppressed records that ended without a record
// to carry its count.
type summary struct {
	caller identity.Caller
	kind   string
	n      uint64
}

// refill brings b's tokens to now.
func (d *denialLimiter) refill(b *denialBucket, now time.Time) {
	b.tokens = min(d.burst, b.tokens+float64(now.Sub(b.last))/float64(d.interval))
	b.last = now
}

// admit tells whether a record of kind about caller c (key names the
// caller) at now is written, and if so how many of c's records of that
// kind were suppressed since its last written one.
func (d *denialLimiter) admit(kind, key string, c identity.Caller, now time.Time) (bool, uint64) {
	key = kind + "|" + key
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
	d.refill(b, now)
	if b.tokens < 1 {
		b.due = now.Add(time.Duration((1-b.tokens)*float64(d.interval)) + d.interval)
		if b.suppressed == 0 {
			d.pending++
			d.armLocked(now, b.due.Sub(now))
		}
		b.suppressed++
		b.caller, b.kind = c, kind
		return false, 0
	}
	b.tokens--
	n := b.suppressed
	if n > 0 {
		d.pending--
	}
	b.suppressed = 0
	return true, n
}

// armLocked sets the timer to fire after wait, unless it is set already
// (it then fires no later than an interval from now, and re-arms itself
// for what is left) or the limiter has no timer.
func (d *denialLimiter) armLocked(now time.Time, wait time.Duration) {
	if d.armed || d.closed || d.onDue == nil {
		return
	}
	d.armed = true
	if d.timer == nil {
		d.timer = time.AfterFunc(wait, d.onDue)
		return
	}
	d.timer.Reset(wait)
}

// ended takes the windows that ended by now (the bucket has had a record
// to spare for an interval and nothing came to use it): each costs
// the caller that record, so summaries count against the same rate and
// cannot be a flood of their own. The timer is set again for the windows still open, at
// least a sixteenth of an interval later, so however many callers are
// suppressed the map is swept at most 16 times an interval.
func (d *denialLimiter) ended(now time.Time) []summary {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.armed = false
	var out []summary
	next := time.Duration(-1)
	for _, b := range d.callers {
		if b.suppressed == 0 {
			continue
		}
		if now.Before(b.due) {
			if wait := b.due.Sub(now); next < 0 || wait < next {
				next = wait
			}
			continue
		}
		d.refill(b, now)
		b.tokens = max(0, b.tokens-1)
		out = append(out, summary{caller: b.caller, kind: b.kind, n: b.suppressed})
		b.suppressed = 0
		d.pending--
	}
	if next >= 0 {
		d.armLocked(now, max(next, d.interval/16))
	}
	return out
}

// close stops the timer and takes every window still open, ended or
// not: at Close every count is said.
func (d *denialLimiter) close() []summary {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.timer != nil {
		d.timer.Stop()
	}
	d.armed = false
	var out []summary
	for _, b := range d.callers {
		if b.suppressed > 0 {
			out = append(out, summary{caller: b.caller, kind: b.kind, n: b.suppressed})
			b.suppressed = 0
		}
	}
	d.pending = 0
	return out
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

// denialKey names a caller for the denial rate: its account (identity's
// AccountKey), else its process.
func denialKey(c identity.Caller) string {
	if k := c.AccountKey(); k != "" {
		return k
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
	return l.d.admit(SuppressedDeny, denialKey(c), identity.Caller{}, time.Now())
}
