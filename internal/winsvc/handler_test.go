package winsvc_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/winsvc"
)

// scm plays the service control manager for a Handler: it sends controls
// and records every status the handler reports.
type scm struct {
	t        *testing.T
	r        chan winsvc.ChangeRequest
	s        chan winsvc.Status
	mu       sync.Mutex
	statuses []winsvc.Status
	changed  chan struct{}
	done     chan struct{}
	ss       bool
	code     uint32
}

// runHandler starts h.Execute as svc.Run would.
func runHandler(t *testing.T, h *winsvc.Handler) *scm {
	t.Helper()
	m := &scm{t: t, r: make(chan winsvc.ChangeRequest), s: make(chan winsvc.Status), changed: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		for st := range m.s {
			m.mu.Lock()
			m.statuses = append(m.statuses, st)
			m.mu.Unlock()
			select {
			case m.changed <- struct{}{}:
			default:
			}
		}
	}()
	go func() {
		m.ss, m.code = h.Execute([]string{"csiproxy"}, m.r, m.s)
		close(m.s)
		close(m.done)
	}()
	t.Cleanup(func() {
		select {
		case <-m.done:
		case <-time.After(10 * time.Second):
			t.Error("handler still running at the end of the test")
		}
	})
	return m
}

func (m *scm) all() []winsvc.Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]winsvc.Status(nil), m.statuses...)
}

func (m *scm) last() winsvc.Status {
	all := m.all()
	if len(all) == 0 {
		return winsvc.Status{}
	}
	return all[len(all)-1]
}

// waitFor waits until the handler has reported a status for which ok is
// true, and returns it.
func (m *scm) waitFor(what string, ok func(winsvc.Status) bool) winsvc.Status {
	m.t.Helper()
	deadline := time.After(10 * time.Second)
	seen := 0
	for {
		all := m.all()
		for _, st := range all[seen:] {
			if ok(st) {
				return st
			}
		}
		seen = len(all)
		select {
		case <-m.changed:
		case <-deadline:
			m.t.Fatalf("no status %s; statuses: %+v", what, m.all())
		}
	}
}

func (m *scm) send(c winsvc.Cmd) {
	m.t.Helper()
	select {
	case m.r <- winsvc.ChangeRequest{Cmd: c, CurrentStatus: m.last()}:
	case <-time.After(10 * time.Second):
		m.t.Fatalf("the handler does not take %s", c)
	}
}

// interrogate sends Interrogate and returns the status the handler
// answers with.
func (m *scm) interrogate() winsvc.Status {
	m.t.Helper()
	n := len(m.all())
	m.send(winsvc.Interrogate)
	deadline := time.After(10 * time.Second)
	for {
		if all := m.all(); len(all) > n {
			return all[n]
		}
		select {
		case <-m.changed:
		case <-deadline:
			m.t.Fatal("no answer to Interrogate")
		}
	}
}

func (m *scm) exit() (bool, uint32) {
	m.t.Helper()
	select {
	case <-m.done:
		return m.ss, m.code
	case <-time.After(10 * time.Second):
		m.t.Fatal("the handler did not return")
		return false, 0
	}
}

func (m *scm) running() bool {
	select {
	case <-m.done:
		return false
	default:
		return true
	}
}

func state(s winsvc.State) func(winsvc.Status) bool {
	return func(st winsvc.Status) bool { return st.State == s }
}

// fakeServer stands in for the daemon's gRPC server: calls run until the
// test releases them, and Stop drains them as internal/server does.
type fakeServer struct {
	wg       sync.WaitGroup
	mu       sync.Mutex
	finished int
}

// call starts a call that ends when release is closed.
func (f *fakeServer) call(release <-chan struct{}) {
	f.wg.Go(func() {
		<-release
		f.mu.Lock()
		f.finished++
		f.mu.Unlock()
	})
}

// stop waits until every call has finished or ctx ends.
func (f *fakeServer) stop(ctx context.Context) error {
	drained := make(chan struct{})
	go func() { f.wg.Wait(); close(drained) }()
	select {
	case <-drained:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("calls cut off: %w", ctx.Err())
	}
}

// runner is the daemon's serve loop around a fakeServer, as
// cmd/csi-node-proxy's serve is around internal/server.
// It records its outcome in out.
func (f *fakeServer) runner(drain time.Duration, started chan<- struct{}, out *outcome) winsvc.Runner {
	return func(ctx context.Context, args []string, n winsvc.Notifier) error {
		if len(args) == 0 || args[0] != "csiproxy" {
			return fmt.Errorf("args %q do not start with the service name", args)
		}
		n.Started()
		close(started)
		<-ctx.Done()
		n.Stopping(drain)
		sctx, cancel := context.WithTimeout(context.Background(), drain)
		defer cancel()
		out.err = f.stop(sctx)
		out.stopRequested = ctx.Err() != nil
		return out.err
	}
}

// outcome is how a runner ended.
type outcome struct {
	err           error
	stopRequested bool
}

// TestServiceHandler_PlatformNeutral_DrainsInFlightCalls: Stop makes the
// daemon drain; the handler reports StopPending with a rising checkpoint
// and a wait hint covering the drain, answers Interrogate meanwhile, and
// returns (exit code 0) only after the call in flight has finished.
func TestServiceHandler_PlatformNeutral_DrainsInFlightCalls(t *testing.T) {
	var srv fakeServer
	started := make(chan struct{})
	var exitErr outcome
	h := &winsvc.Handler{Run: srv.runner(25*time.Second, started, &exitErr), Tick: 5 * time.Millisecond}
	m := runHandler(t, h)

	first := m.waitFor("StartPending", state(winsvc.StartPending))
	if first.WaitHint != uint32(winsvc.DefaultStartWaitHint/time.Millisecond) || first.Accepts != 0 {
		t.Errorf("first status %+v", first)
	}
	run := m.waitFor("Running", state(winsvc.Running))
	if run.Accepts != winsvc.AcceptStop|winsvc.AcceptShutdown {
		t.Errorf("Running accepts %#x, want Stop and Shutdown", run.Accepts)
	}
	<-started
	if got := m.interrogate(); got.State != winsvc.Running {
		t.Errorf("Interrogate while running: %+v", got)
	}

	release := make(chan struct{})
	srv.call(release)
	m.send(winsvc.Stop)
	m.waitFor("StopPending", state(winsvc.StopPending))
	hinted := m.waitFor("StopPending with the drain's wait hint", func(st winsvc.Status) bool {
		return st.State == winsvc.StopPending && st.WaitHint == 30000
	})
	later := m.waitFor("a later checkpoint", func(st winsvc.Status) bool {
		return st.State == winsvc.StopPending && st.CheckPoint > hinted.CheckPoint+2
	})
	if got := m.interrogate(); got.State != winsvc.StopPending || got.CheckPoint < later.CheckPoint {
		t.Errorf("Interrogate while draining: %+v", got)
	}
	m.send(winsvc.Stop) // a second Stop changes nothing
	time.Sleep(50 * time.Millisecond)
	if !m.running() {
		t.Fatal("the handler returned while a call was in flight")
	}

	close(release)
	ss, code := m.exit()
	if ss || code != 0 {
		t.Errorf("exit (%v, %d), want (false, 0)", ss, code)
	}
	if srv.finished != 1 {
		t.Errorf("%d calls finished, want 1", srv.finished)
	}
	if exitErr.err != nil || !exitErr.stopRequested {
		t.Errorf("the runner returned %v (stop requested: %v)", exitErr.err, exitErr.stopRequested)
	}
	// The checkpoint only rises while stopping.
	var prev uint32
	for _, st := range m.all() {
		if st.State != winsvc.StopPending {
			continue
		}
		if st.CheckPoint < prev {
			t.Errorf("checkpoint went back: %+v", m.all())
		}
		prev = st.CheckPoint
	}
}

// TestServiceHandler_PlatformNeutral_Shutdown: Shutdown stops as Stop does.
func TestServiceHandler_PlatformNeutral_Shutdown(t *testing.T) {
	var srv fakeServer
	started := make(chan struct{})
	var out outcome
	m := runHandler(t, &winsvc.Handler{Run: srv.runner(time.Second, started, &out)})
	m.waitFor("Running", state(winsvc.Running))
	m.send(winsvc.Shutdown)
	m.waitFor("StopPending", state(winsvc.StopPending))
	if ss, code := m.exit(); ss || code != 0 {
		t.Errorf("exit (%v, %d)", ss, code)
	}
}

// TestServiceHandler_PlatformNeutral_DrainTimeoutIsNotAFailure: calls cut
// off at the drain deadline after a requested stop still exit 0, so the
// SCM does not restart a service it was asked to stop.
func TestServiceHandler_PlatformNeutral_DrainTimeoutIsNotAFailure(t *testing.T) {
	var srv fakeServer
	started := make(chan struct{})
	var out outcome
	m := runHandler(t, &winsvc.Handler{Run: srv.runner(20*time.Millisecond, started, &out)})
	m.waitFor("Running", state(winsvc.Running))
	release := make(chan struct{})
	defer close(release)
	srv.call(release)
	m.send(winsvc.Stop)
	if ss, code := m.exit(); ss || code != 0 {
		t.Errorf("exit (%v, %d), want (false, 0)", ss, code)
	}
	if out.err == nil || !out.stopRequested {
		t.Errorf("the runner returned %v (stop requested: %v), want the cut-off error", out.err, out.stopRequested)
	}
}

// TestServiceHandler_PlatformNeutral_FailureExitCode: a daemon that fails
// on its own (here: before it starts serving) exits with the
// service-specific code ExitFailure, which the recovery actions restart.
func TestServiceHandler_PlatformNeutral_FailureExitCode(t *testing.T) {
	boom := errors.New("endpoint csi-proxy-disk-v1 is already in use")
	m := runHandler(t, &winsvc.Handler{
		Run: func(context.Context, []string, winsvc.Notifier) error { return boom },
	})
	ss, code := m.exit()
	if !ss || code != winsvc.ExitFailure {
		t.Errorf("exit (%v, %d), want (true, %d)", ss, code, winsvc.ExitFailure)
	}
	for _, st := range m.all() {
		if st.State == winsvc.Running {
			t.Errorf("reported Running: %+v", m.all())
		}
	}
}

// TestServiceHandler_PlatformNeutral_FailsWhileServing: the server breaks
// while running, not at the SCM's request: a failure.
func TestServiceHandler_PlatformNeutral_FailsWhileServing(t *testing.T) {
	broken := make(chan struct{})
	m := runHandler(t, &winsvc.Handler{Run: func(_ context.Context, _ []string, n winsvc.Notifier) error {
		n.Started()
		<-broken
		return errors.New("serve: listener closed")
	}})
	m.waitFor("Running", state(winsvc.Running))
	close(broken)
	if ss, code := m.exit(); !ss || code != winsvc.ExitFailure {
		t.Errorf("exit (%v, %d)", ss, code)
	}
}

// TestServiceHandler_PlatformNeutral_StartingSlowly: while the daemon
// starts, the checkpoint rises, Interrogate is answered, and other
// controls are ignored; a Stop during the start cancels it.
func TestServiceHandler_PlatformNeutral_StartingSlowly(t *testing.T) {
	m := runHandler(t, &winsvc.Handler{Tick: 5 * time.Millisecond, Run: func(ctx context.Context, _ []string, _ winsvc.Notifier) error {
		<-ctx.Done() // never gets to serve
		return ctx.Err()
	}})
	m.waitFor("a later StartPending checkpoint", func(st winsvc.Status) bool { return st.State == winsvc.StartPending && st.CheckPoint >= 3 })
	if got := m.interrogate(); got.State != winsvc.StartPending {
		t.Errorf("Interrogate while starting: %+v", got)
	}
	m.send(winsvc.Pause)
	m.send(winsvc.Cmd(200)) // a user-defined control
	m.send(winsvc.Stop)
	if ss, code := m.exit(); ss || code != 0 {
		t.Errorf("exit (%v, %d): a start cancelled by Stop is no failure", ss, code)
	}
}

// TestServiceHandler_PlatformNeutral_StopsOnItsOwn: a daemon that drains
// on its own (a console signal) reports StopPending and exits 0.
func TestServiceHandler_PlatformNeutral_StopsOnItsOwn(t *testing.T) {
	signal := make(chan struct{})
	m := runHandler(t, &winsvc.Handler{Run: func(_ context.Context, _ []string, n winsvc.Notifier) error {
		n.Started()
		<-signal
		n.Stopping(time.Second)
		return nil
	}})
	m.waitFor("Running", state(winsvc.Running))
	close(signal)
	st := m.waitFor("StopPending", state(winsvc.StopPending))
	if st.WaitHint != 6000 || st.Accepts != 0 {
		t.Errorf("StopPending %+v", st)
	}
	if ss, code := m.exit(); ss || code != 0 {
		t.Errorf("exit (%v, %d)", ss, code)
	}
}
