package callgate

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
)

// TestAuditOnlyPolicyRecordsWouldDeny: under an audit-only policy a call
// its rules deny runs, and the audit log records it as "would-deny" with
// the rules' reason (reads too, which are otherwise audited only when
// denied); a call its rules allow stays "allow"; nothing is counted as
// denied. The same policy in enforce mode refuses the call.
func TestAuditOnlyPolicyRecordsWouldDeny(t *testing.T) {
	const rules = "rules:\n- name: start\n  callers: [{any: true}]\n  allow: [{methods: [system.StartService]}]\n"
	p, err := policy.Parse([]byte("mode: audit-only\n"+rules), policy.Options{Style: hostpath.Windows, Methods: Methods})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	h := &hook{}
	g := &Gate{Policy: policy.Static(p), Audit: audit.New(&log, audit.Options{}), Metrics: h}
	for _, m := range []string{"StopService", "GetService", "StartService"} {
		ran := false
		if _, err := g.Do(context.Background(), call(m), func(context.Context) (any, error) { ran = true; return nil, nil }); err != nil || !ran {
			t.Errorf("%s under the audit-only policy: %v (ran %v)", m, err, ran)
		}
	}
	want := []string{
		"intent StopService would-deny ", "done StopService would-deny OK",
		"done GetService would-deny OK",
		"intent StartService allow ", "done StartService allow OK",
	}
	if got := records(t, &log); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, r := range auditlog.Parse(t, log.Bytes()) {
		if r.Decision == audit.WouldDeny && r.Reason != policy.NoRuleReason {
			t.Errorf("%s %s: reason %q, want the rules' %q", r.Phase, r.Method, r.Reason, policy.NoRuleReason)
		}
	}
	for _, e := range h.events {
		if strings.HasPrefix(e, "denied ") {
			t.Errorf("counted as denied: %s", e)
		}
	}

	enforcing, err := policy.Parse([]byte("mode: enforce\n"+rules), policy.Options{Style: hostpath.Windows, Methods: Methods})
	if err != nil {
		t.Fatal(err)
	}
	g.Policy = policy.Static(enforcing)
	if _, err := g.Do(context.Background(), call("StopService"), func(context.Context) (any, error) {
		t.Error("enforce ran a denied call")
		return nil, nil
	}); err == nil {
		t.Error("enforce allowed StopService")
	}
}

// TestAuditOnlyFloodRateLimited: under an audit-only policy every call of
// a caller no rule admits is a would-deny record; a flood of its reads
// writes the burst and then counts the rest (said at Close), while each
// of its would-deny changes keeps its intent and outcome (they ran), and
// another caller's would-deny reads and an admitted driver's changes are
// all written.
func TestAuditOnlyFloodRateLimited(t *testing.T) {
	p, err := policy.Parse([]byte("mode: audit-only\nrules:\n- name: driver\n  callers: [{uids: [0]}]\n  allow: [{methods: [system.StartService]}]\n"),
		policy.Options{Style: hostpath.Windows, Methods: Methods})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	l := audit.New(&log, audit.Options{DenialBurst: 5, DenialInterval: time.Hour})
	g := &Gate{Policy: policy.Static(p), Audit: l}
	as := func(uid uint32, m string) {
		t.Helper()
		c := call(m)
		c.Caller = &identity.Caller{HasUnixIDs: true, UID: uid}
		if _, err := g.Do(context.Background(), c, func(context.Context) (any, error) { return nil, nil }); err != nil {
			t.Fatalf("uid %d %s: %v", uid, m, err)
		}
	}
	for range 500 {
		as(1000, "GetService")
	}
	for range 20 {
		as(1000, "StopService")
	}
	for range 3 {
		as(2000, "GetService")
		as(0, "StartService")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	recs := auditlog.Parse(t, log.Bytes())
	count := map[string]int{}
	var summarised uint64
	for _, r := range recs {
		count[fmt.Sprintf("%d %s %s %s", *r.Caller.UID, r.Phase, r.Method, r.Decision)]++
		if r.Phase == auditlog.PhaseSummary && *r.Caller.UID == 1000 && r.SuppressedKind == audit.SuppressedWouldDeny {
			summarised += r.Suppressed
		}
	}
	want := map[string]int{
		"1000 done GetService would-deny":    5,
		"1000 summary  suppressed":           1,
		"1000 intent StopService would-deny": 20,
		"1000 done StopService would-deny":   20,
		"2000 done GetService would-deny":    3,
		"0 intent StartService allow":        3,
		"0 done StartService allow":          3,
	}
	if fmt.Sprint(count) != fmt.Sprint(want) {
		t.Errorf("records per uid, phase, method and decision:\n%v\nwant\n%v", count, want)
	}
	if summarised != 495 || l.Suppressed() != 495 {
		t.Errorf("summary says %d left out, Suppressed() = %d, want 495", summarised, l.Suppressed())
	}
	if problems := auditlog.CheckIntents(recs, auditlog.IntentOptions{}); len(problems) > 0 {
		t.Errorf("%q", problems)
	}
}
