package audit_test

import (
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/syncbuf"
)

// records parses what b holds: the Logger's timer may write to it while
// the test reads it.
func records(t *testing.T, b *syncbuf.Buffer) []auditlog.Record {
	t.Helper()
	return auditlog.Parse(t, []byte(b.String()))
}

var (
	hostileCaller = identity.Caller{HasUnixIDs: true, UID: 1000, ContainerID: "hostile"}
	driverCaller  = identity.Caller{HasUnixIDs: true, UID: 0, ContainerID: "driver"}
)

func logged(t *testing.T, l *audit.Logger, c identity.Caller, method, decision string) {
	t.Helper()
	if err := l.Log(audit.Record{Method: method, Caller: c, Decision: decision}); err != nil {
		t.Fatal(err)
	}
}

// TestReadAndWouldDenyFloodRateLimited: a caller's reads (--audit-reads)
// and the would-deny records of its reads (an audit-only policy) are
// rate-limited like its denials, each kind with a burst of its own: a
// flood of 1,000 of each writes 5 of each and counts the rest. The
// would-deny and allowed changes of the same caller (intent and outcome)
// are all written, and so are another caller's reads.
func TestReadAndWouldDenyFloodRateLimited(t *testing.T) {
	var buf syncbuf.Buffer
	l := audit.New(&buf, audit.Options{Reads: true, DenialBurst: 5, DenialInterval: time.Hour})
	for range 1000 {
		logged(t, l, hostileCaller, "PathExists", audit.Allow)
		logged(t, l, hostileCaller, "PathExists", audit.WouldDeny)
		logged(t, l, hostileCaller, "Mkdir", audit.Deny)
	}
	for _, decision := range []string{audit.WouldDeny, audit.Allow} {
		for range 50 {
			r := audit.Record{Method: "Mkdir", Caller: hostileCaller, Decision: decision}
			if err := l.Intent(&r); err != nil {
				t.Fatal(err)
			}
			if err := l.Log(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range 3 {
		logged(t, l, driverCaller, "PathExists", audit.Allow)
	}
	count := map[string]int{}
	recs := records(t, &buf)
	for _, r := range recs {
		count[r.Caller.ContainerID+" "+r.Phase+" "+r.Kind+" "+r.Decision]++
	}
	want := map[string]int{
		"hostile done read allow": 5, "hostile done read would-deny": 5, "hostile done mutate deny": 5,
		"hostile intent mutate would-deny": 50, "hostile done mutate would-deny": 50,
		"hostile intent mutate allow": 50, "hostile done mutate allow": 50,
		"driver done read allow": 3,
	}
	if len(count) != len(want) {
		t.Errorf("records per caller, phase, kind and decision: %v, want %v", count, want)
	}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%d records %q, want %d (all: %v)", count[k], k, n, count)
		}
	}
	if got := l.Suppressed(); got != 3*995 {
		t.Errorf("Suppressed() = %d, want %d", got, 3*995)
	}
	if problems := auditlog.CheckIntents(recs, auditlog.IntentOptions{}); len(problems) > 0 {
		t.Errorf("the changes' records: %q", problems)
	}
}

// TestSuppressedSummary: a window of suppressed records that ends without
// a further record of the caller's is said by a summary record, with the
// exact count, once the caller could write again (the Logger's timer),
// and at Close for the windows still open; one summary per caller and
// kind per window, and over a whole flood the counts the records carry
// add up to Suppressed().
func TestSuppressedSummary(t *testing.T) {
	var buf syncbuf.Buffer
	l := audit.New(&buf, audit.Options{Reads: true, DenialBurst: 2, DenialInterval: 200 * time.Millisecond})
	for range 12 {
		logged(t, l, hostileCaller, "Mkdir", audit.Deny)
	}
	logged(t, l, driverCaller, "Mkdir", audit.Deny)
	summaries := func() []auditlog.Record {
		var out []auditlog.Record
		for _, r := range records(t, &buf) {
			if r.Phase == auditlog.PhaseSummary {
				out = append(out, r)
			}
		}
		return out
	}
	if s := summaries(); len(s) != 0 {
		t.Fatalf("a summary before the window ended: %+v", s)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(summaries()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(250 * time.Millisecond) // nothing more is due: the window is said once
	s := summaries()
	if len(s) != 1 || s[0].Suppressed != 10 || s[0].SuppressedKind != audit.SuppressedDeny || s[0].Decision != audit.Suppressed ||
		s[0].Caller.ContainerID != "hostile" || s[0].ID == "" || s[0].Kind != "" || s[0].Code != "" {
		t.Fatalf("summaries after the window: %+v, want one of the hostile caller's 10 denials", s)
	}

	// At Close: the windows still open are said, whatever their age.
	var closing syncbuf.Buffer
	l = audit.New(&closing, audit.Options{Reads: true, DenialBurst: 2, DenialInterval: time.Hour})
	for range 9 {
		logged(t, l, hostileCaller, "PathExists", audit.WouldDeny)
		logged(t, l, hostileCaller, "PathExists", audit.Allow)
	}
	logged(t, l, driverCaller, "PathExists", audit.Allow)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, r := range records(t, &closing) {
		if r.Phase == auditlog.PhaseSummary {
			got[r.Caller.ContainerID+" "+r.SuppressedKind] += r.Suppressed
		}
	}
	if len(got) != 2 || got["hostile would-deny"] != 7 || got["hostile read"] != 7 {
		t.Errorf("summaries at Close: %v, want the hostile caller's 7 would-deny and 7 read records", got)
	}

	// A steady flood: what the records say adds up to what was left out,
	// and records plus summaries stay within the rate.
	var flood syncbuf.Buffer
	const interval = 50 * time.Millisecond
	l = audit.New(&flood, audit.Options{DenialBurst: 1, DenialInterval: interval})
	start := time.Now()
	for time.Since(start) < 500*time.Millisecond {
		logged(t, l, hostileCaller, "Mkdir", audit.Deny)
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var said uint64
	recs := records(t, &flood)
	for _, r := range recs {
		said += r.Suppressed
	}
	if said != l.Suppressed() || said == 0 {
		t.Errorf("records say %d left out, Suppressed() = %d", said, l.Suppressed())
	}
	if limit := 2 + int(elapsed/interval); len(recs) > limit {
		t.Errorf("%d records in %v at one per %v", len(recs), elapsed, interval)
	}
	if problems := auditlog.CheckIntents(recs, auditlog.IntentOptions{}); len(problems) > 0 {
		t.Errorf("%q", problems)
	}
}
