//go:build unix

package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"k8s.io/klog/v2"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
	"github.com/csi-node-proxy/csi-node-proxy/internal/winsvc"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/syncbuf"
)

// recordedEvents is a fake Windows event log.
type recordedEvents struct {
	mu     sync.Mutex
	lines  []string
	closed bool
}

func (e *recordedEvents) add(kind, msg string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lines = append(e.lines, kind+": "+msg)
	return nil
}

func (e *recordedEvents) Info(m string) error    { return e.add("info", m) }
func (e *recordedEvents) Warning(m string) error { return e.add("warning", m) }
func (e *recordedEvents) Error(m string) error   { return e.add("error", m) }
func (e *recordedEvents) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	return nil
}

func (e *recordedEvents) all() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.lines...)
}

// TestServiceRunMode_PlatformNeutral_DrainsInFlightCalls runs the real
// daemon (the simulated host, on Unix sockets) the way -windows-service
// does, under the platform-neutral service handler, with this test as the
// service control manager: a call in flight when Stop arrives completes,
// the endpoints disappear at once, the handler reports StopPending with a
// wait hint covering --shutdown-timeout until the call is done, and the
// service ends with exit code 0. The SCM itself is exercised under Wine by
// TestWindowsService_UnderSCM_DrainsInFlightCalls.
func TestServiceRunMode_PlatformNeutral_DrainsInFlightCalls(t *testing.T) {
	resetKlog(t)
	dir := sockdir.New(t, "cnp") // socket paths must stay short
	logFile := filepath.Join(dir, "logs", "service.log")
	cfg, err := parseFlags([]string{"-windows-service", "--host=simulated", "--socket-dir=" + filepath.Join(dir, "run"),
		"--apis=disk-v1", "--shutdown-timeout=20s", "-v=2", "-log_file=" + logFile})
	if err != nil {
		t.Fatal(err)
	}
	// klog writes to the file -log_file names only if this process has
	// not opened klog's files before (another test may have): take its
	// output here instead. serviceLogging's choice of the file is checked
	// by TestServiceLogging, the file's content under Wine.
	logs := &syncbuf.Buffer{}
	klog.SetOutput(logs)
	events := &recordedEvents{}
	h := &winsvc.Handler{
		Run:  serviceRunner(cfg, func(string) (winsvc.EventLog, error) { return events, nil }, func(string) string { return dir }),
		Tick: 10 * time.Millisecond,
	}
	r := make(chan winsvc.ChangeRequest)
	s := make(chan winsvc.Status, 1000)
	type exit struct {
		ss   bool
		code uint32
	}
	done := make(chan exit, 1)
	go func() {
		ss, code := h.Execute([]string{"csiproxy"}, r, s)
		done <- exit{ss, code}
	}()
	// next returns the next status the handler reports.
	next := func() winsvc.Status {
		t.Helper()
		select {
		case st := <-s:
			return st
		case e := <-done:
			t.Fatalf("the service ended (%v, %d); events: %q", e.ss, e.code, events.all())
		case <-time.After(20 * time.Second):
			t.Fatal("no status from the service handler")
		}
		return winsvc.Status{}
	}
	waitState := func(want winsvc.State) winsvc.Status {
		t.Helper()
		for {
			if st := next(); st.State == want {
				return st
			}
		}
	}
	if st := next(); st.State != winsvc.StartPending {
		t.Fatalf("first status %+v, want StartPending", st)
	}
	if st := waitState(winsvc.Running); st.Accepts != winsvc.AcceptStop|winsvc.AcceptShutdown {
		t.Errorf("Running accepts %#x", st.Accepts)
	}

	var api adapter.API
	for _, a := range cfg.APIs {
		api = a
	}
	address := transport.Endpoint{Name: api.Name(), Options: cfg.Transport}.Address()
	cc, err := grpc.NewClient(transport.Target(address), transport.DialOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A call in flight: its stream is open on the server, its request not
	// sent yet, so the server must wait for it.
	stream, err := cc.NewStream(ctx, &grpc.StreamDesc{}, diskv1.Disk_ListDiskLocations_FullMethodName)
	if err != nil {
		t.Fatal(err)
	}
	// A second call on the same connection, answered after the server has
	// read the first one's headers: the first is now in flight.
	if r, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v", r, err)
	}

	r <- winsvc.ChangeRequest{Cmd: winsvc.Stop}
	waitState(winsvc.StopPending)
	// The daemon's drain reports the wait hint: --shutdown-timeout + 5 s.
	for st := next(); st.WaitHint != 25000; st = next() {
		if st.State != winsvc.StopPending {
			t.Fatalf("status %+v while draining", st)
		}
	}
	// Endpoints go at once; the call in flight keeps the service
	// stopping.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Lstat(address); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still exists while draining", address)
		}
		time.Sleep(10 * time.Millisecond)
	}
	r <- winsvc.ChangeRequest{Cmd: winsvc.Interrogate}
	if st := next(); st.State != winsvc.StopPending {
		t.Errorf("Interrogate while draining: %+v", st)
	}
	time.Sleep(100 * time.Millisecond)
	select {
	case e := <-done:
		t.Fatalf("the service ended (%v, %d) with a call in flight", e.ss, e.code)
	default:
	}

	// The call completes, with an answer from the simulated host.
	finishHeldCall(t, stream)
	select {
	case e := <-done:
		if e.ss || e.code != 0 {
			t.Errorf("exit (%v, %d), want (false, 0)", e.ss, e.code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the service did not stop after the call completed")
	}

	ev := events.all()
	if len(ev) != 2 || !strings.HasPrefix(ev[0], "info: csi-node-proxy ") || !strings.Contains(ev[0], "starting as service csiproxy; log: "+logFile) ||
		ev[1] != "info: csi-node-proxy (service csiproxy) stopped" || !events.closed {
		t.Errorf("events %q (closed %v)", ev, events.closed)
	}
	if _, err := os.Stat(logFile); err != nil {
		t.Errorf("log file: %v", err)
	}
	klog.Flush()
	for _, want := range []string{`"Running as a Windows service" service="csiproxy"`, `"Shutting down" timeout="20s"`, `"Stopped"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
}

// TestServiceRunMode_PlatformNeutral_StartFailure: a daemon that cannot
// start (here: its endpoint is taken) ends the service with the
// service-specific failure code, which the recovery actions restart, and
// an error event naming the reason and the log.
func TestServiceRunMode_PlatformNeutral_StartFailure(t *testing.T) {
	resetKlog(t)
	dir := sockdir.New(t, "cnp")
	args := []string{"-windows-service", "--host=simulated", "--socket-dir=" + filepath.Join(dir, "run"), "--apis=disk-v1", "-log_file=" + filepath.Join(dir, "x.log")}
	cfg, err := parseFlags(args)
	if err != nil {
		t.Fatal(err)
	}
	// Another daemon serves the endpoint already.
	l, err := transport.Listen(transport.Endpoint{Name: cfg.APIs[0].Name(), Options: cfg.Transport})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	events := &recordedEvents{}
	h := &winsvc.Handler{Run: serviceRunner(cfg, func(string) (winsvc.EventLog, error) { return events, nil }, os.Getenv)}
	r := make(chan winsvc.ChangeRequest)
	s := make(chan winsvc.Status, 100)
	ss, code := h.Execute([]string{"csi-node-proxy"}, r, s)
	if !ss || code != winsvc.ExitFailure {
		t.Errorf("exit (%v, %d), want (true, %d)", ss, code, winsvc.ExitFailure)
	}
	ev := events.all()
	if len(ev) != 2 || !strings.HasPrefix(ev[1], "error: csi-node-proxy (service csi-node-proxy) failed: ") || !strings.Contains(ev[1], "in use") {
		t.Errorf("events %q", ev)
	}
}
