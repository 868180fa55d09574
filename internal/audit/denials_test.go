package audit_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
)

// TestDenialFloodRateLimited: a caller denied 10,000 times in a row gets
// its burst of records and no more; the rest are counted, and its next
// record after the interval says how many were left out. Another
// caller's denials and every change are still recorded.
func TestDenialFloodRateLimited(t *testing.T) {
	var buf bytes.Buffer
	l := audit.New(&buf, audit.Options{DenialBurst: 5, DenialInterval: time.Hour})
	hostile := identity.Caller{HasUnixIDs: true, UID: 1000, ContainerID: "hostile"}
	driver := identity.Caller{HasUnixIDs: true, UID: 0, ContainerID: "driver"}
	req := &filesystem.MkdirRequest{Path: "/" + strings.Repeat("x", 4000)}
	deny := func(c identity.Caller) audit.Record {
		return audit.Record{Method: "Mkdir", Caller: c, Decision: audit.Deny, Reason: "no rule allows it", Model: req}
	}
	for range 10_000 {
		if err := l.Log(deny(hostile)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Log(deny(driver)); err != nil {
		t.Fatal(err)
	}
	if err := l.Log(audit.Record{Method: "Mkdir", Caller: hostile, Decision: audit.Allow}); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 8*6<<10 {
		t.Errorf("10,000 denials wrote %d bytes", buf.Len())
	}
	count := map[string]int{}
	for _, r := range auditlog.Parse(t, buf.Bytes()) {
		count[r.Caller.ContainerID+" "+r.Decision]++
	}
	if count["hostile deny"] != 5 || count["driver deny"] != 1 || count["hostile allow"] != 1 {
		t.Errorf("records per caller and decision: %v; want the hostile caller's burst of 5 denials, the driver's denial and the change", count)
	}
	if got := l.Suppressed(); got != 9_995 {
		t.Errorf("Suppressed() = %d, want 9995", got)
	}

	// With a short interval: the next record once the caller is back
	// under its rate carries the count.
	buf.Reset()
	l = audit.New(&buf, audit.Options{DenialBurst: 1, DenialInterval: 300 * time.Millisecond})
	for range 10 {
		if err := l.Log(deny(hostile)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(350 * time.Millisecond)
	buf.Reset()
	if err := l.Log(deny(hostile)); err != nil {
		t.Fatal(err)
	}
	if l.Suppressed() != 9 || !strings.Contains(buf.String(), `"suppressed":9`) {
		t.Errorf("the denial after the interval does not say how many were left out: %.400s", buf.String())
	}
}
