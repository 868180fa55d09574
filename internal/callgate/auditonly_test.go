package callgate

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
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
