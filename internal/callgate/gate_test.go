package callgate

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
)

// hook records what the gate tells its Metrics.
type hook struct{ events []string }

func (h *hook) CallStarted(g, _, m string) { h.events = append(h.events, "start "+g+"."+m) }
func (h *hook) CallDone(g, _, m, code, rule string, _ time.Duration) {
	h.events = append(h.events, "done "+g+"."+m+" "+code+" "+rule)
}
func (h *hook) CallDenied(g, _, m, reason string) {
	h.events = append(h.events, "denied "+g+"."+m+" "+reason)
}

// records returns the audit lines' phase, method and code.
func records(t *testing.T, b *bytes.Buffer) []string {
	t.Helper()
	var out []string
	for _, r := range auditlog.Parse(t, b.Bytes()) {
		out = append(out, r.Phase+" "+r.Method+" "+r.Decision+" "+r.Code)
	}
	return out
}

func call(name string) *Call {
	return &Call{Endpoint: "test", Method: Method{Group: "system", Version: "v1", Name: name}, FullMethod: "system." + name}
}

// TestDo: an allowed change is audited before and after, a denied call
// is refused with the policy's message and audited, a caller that is
// gone is refused Unauthenticated, and a panic is recorded as Internal
// before it goes on; the hook sees each.
func TestDo(t *testing.T) {
	p, err := policy.Parse([]byte("rules:\n- name: start\n  callers: [{any: true}]\n  allow: [{methods: [system.StartService]}]\n"),
		policy.Options{Style: hostpath.Windows, Methods: Methods})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	h := &hook{}
	g := &Gate{Policy: policy.Static(p), Audit: audit.New(&log, audit.Options{}), Metrics: h}
	ran := false
	if _, err := g.Do(context.Background(), call("StartService"), func(ctx context.Context) (any, error) {
		ran = true
		if _, ok := identity.FromContext(ctx); !ok {
			t.Error("no caller in the call's context")
		}
		return nil, errdefs.ErrNotFound
	}); !errors.Is(err, errdefs.ErrNotFound) || !ran {
		t.Errorf("allowed call: %v (ran %v)", err, ran)
	}
	_, err = g.Do(context.Background(), call("StopService"), func(context.Context) (any, error) {
		t.Error("a denied call ran")
		return nil, nil
	})
	var rf *Refusal
	if !errors.As(err, &rf) || rf.Code != errdefs.PermissionDenied || !errors.Is(err, errdefs.ErrPermissionDenied) ||
		!strings.Contains(err.Error(), "may not call system.StopService: no rule allows it") {
		t.Errorf("denied call: %v", err)
	}
	gone := errors.New("pid 7: gone")
	g.Alive = func(context.Context) error { return gone }
	if _, err := g.Do(context.Background(), call("StartService"), nil); !errors.As(err, &rf) || rf.Code != errdefs.Unauthenticated || !errors.Is(err, gone) {
		t.Errorf("gone caller: %v", err)
	}
	g.Alive = nil
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not go on to the transport")
			}
		}()
		_, _ = g.Do(context.Background(), call("StartService"), func(context.Context) (any, error) { panic("bug") })
	}()
	want := []string{
		"intent StartService allow ", "done StartService allow NotFound",
		"done StopService deny PermissionDenied",
		"done StartService deny Unauthenticated",
		"intent StartService allow ", "done StartService allow Internal",
	}
	if got := records(t, &log); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantEvents := []string{
		"start system.StartService", "done system.StartService NotFound start",
		"start system.StopService", "denied system.StopService no_rule", "done system.StopService PermissionDenied ",
		"start system.StartService", "denied system.StartService caller_exited", "done system.StartService Unauthenticated ",
		"start system.StartService", "done system.StartService Internal start",
	}
	if strings.Join(h.events, "\n") != strings.Join(wantEvents, "\n") {
		t.Errorf("metrics:\n%s\nwant:\n%s", strings.Join(h.events, "\n"), strings.Join(wantEvents, "\n"))
	}
}
