package inprocess

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
)

// fakeMetrics records what the gate tells it.
type fakeMetrics struct {
	mu     sync.Mutex
	events []string
}

func (f *fakeMetrics) add(s string) { f.mu.Lock(); f.events = append(f.events, s); f.mu.Unlock() }

func (f *fakeMetrics) CallStarted(g, v, m string) { f.add("start " + g + "." + m + " " + v) }
func (f *fakeMetrics) CallDone(g, v, m, code, rule string, _ time.Duration) {
	f.add("done " + g + "." + m + " " + code + " " + rule)
}
func (f *fakeMetrics) CallDenied(g, v, m, reason string) {
	f.add("denied " + g + "." + m + " " + reason)
}

// TestLoggerAndMetrics: a denial goes to Options.Logger, and the Metrics
// hook sees every call from start to end, the denial with its reason.
func TestLoggerAndMetrics(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	log := funcr.New(func(prefix, args string) { mu.Lock(); lines = append(lines, args); mu.Unlock() }, funcr.Options{})
	m := &fakeMetrics{}
	n := simNode(t, Options{PolicyData: []byte(onlyBIOS), Logger: log, Metrics: m})
	if _, err := n.System().GetBIOSSerialNumber(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := n.System().StartService(t.Context(), &system.StartServiceRequest{Name: "x"}); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Fatalf("StartService: %v, want a denial", err)
	}
	want := []string{
		"start system.GetBIOSSerialNumber inprocess", "done system.GetBIOSSerialNumber OK bios",
		"start system.StartService inprocess", "denied system.StartService no_rule", "done system.StartService PermissionDenied ",
	}
	if strings.Join(m.events, "\n") != strings.Join(want, "\n") {
		t.Errorf("metrics events:\n%s\nwant:\n%s", strings.Join(m.events, "\n"), strings.Join(want, "\n"))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 1 || !strings.Contains(lines[0], `"msg"="call denied"`) || !strings.Contains(lines[0], `"method"="system.StartService"`) {
		t.Errorf("log lines %q; want the denial", lines)
	}
}
