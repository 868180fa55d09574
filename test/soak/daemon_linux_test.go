//go:build linux

package soak

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/syncbuf"
	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

// kubelet is the simulated host's kubelet directory, the daemon's default
// working directory there.
const kubelet = `C:\var\lib\kubelet`

// envInt reads a positive integer knob, or returns def.
func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// loadDuration is how long a load round runs (SOAK_DURATION).
func loadDuration(t *testing.T) time.Duration {
	v := os.Getenv("SOAK_DURATION")
	if v == "" {
		return 4 * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("SOAK_DURATION=%q: want a positive duration", v)
	}
	return d
}

// daemon is one csi-node-proxy process on the simulated host.
type daemon struct {
	p         *daemonbin.Process
	sockets   string
	auditPath string
	metrics   string          // host:port of /metrics
	out       *syncbuf.Buffer // the daemon's output
}

// startDaemon starts the daemon binary with --host=simulated, its sockets
// in a fresh directory, the audit log at auditPath (with --audit-reads),
// metrics on a free port, and extra flags. It returns once every socket
// the tests use accepts connections; a cleanup stops it with SIGTERM
// unless the test did, and fails the test unless it exits 0.
func startDaemon(t *testing.T, auditPath string, extra ...string) *daemon {
	t.Helper()
	bin := linuxnode.DaemonBinary(t)
	dir := sockdir.New(t, "soak")
	d := &daemon{sockets: dir, auditPath: auditPath}
	args := append([]string{"--host=simulated", "--socket-dir=" + dir, "--audit-log=" + auditPath, "--audit-reads",
		"--metrics-bind-address=127.0.0.1:0"}, extra...)
	d.p = daemonbin.Start(t, bin, daemonbin.Options{
		Args:         args,
		Ready:        daemonbin.SocketsAccept(d.socket("filesystem-v1"), d.socket("disk-v1")),
		ReadyTimeout: 30 * time.Second,
		StopTimeout:  30 * time.Second,
	})
	d.out = d.p.Output
	// Registered after Start's, so it runs first: the soak's own stop
	// also checks that no socket is left behind.
	t.Cleanup(func() {
		if exited, _ := d.p.Exited(); !exited {
			d.stop(t)
		}
	})
	m := regexp.MustCompile(`"Serving metrics" address="([^"]+)"`).FindStringSubmatch(d.out.String())
	if m == nil {
		t.Fatalf("the daemon did not name its metrics address:\n%s", d.out.String())
	}
	d.metrics = m[1]
	return d
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// socket is the path of an endpoint's socket ("filesystem-v1").
func (d *daemon) socket(ep string) string { return filepath.Join(d.sockets, "csi-proxy-"+ep+".sock") }

// dial opens a client connection to an endpoint, closed with the test.
func (d *daemon) dial(t *testing.T, ep string) *grpc.ClientConn {
	t.Helper()
	c, err := grpc.NewClient("unix://"+d.socket(ep), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// sigterm sends SIGTERM and waits for the exit; it returns how long the
// daemon took and fails the test unless it exited 0 within 30 s.
func (d *daemon) sigterm(t *testing.T) time.Duration {
	t.Helper()
	return d.p.Stop(t, 30*time.Second)
}

// stop is sigterm for cleanups, plus a check that no socket is left.
func (d *daemon) stop(t *testing.T) {
	d.sigterm(t)
	entries, _ := os.ReadDir(d.sockets)
	for _, e := range entries {
		if e.Type()&fs.ModeSocket != 0 {
			t.Errorf("socket %s left after the daemon stopped", e.Name())
		}
	}
}

// resources is what the daemon holds at one moment.
type resources struct {
	goroutines, fds, threads int
}

func (r resources) String() string {
	return fmt.Sprintf("%d goroutines, %d fds, %d threads", r.goroutines, r.fds, r.threads)
}

// sample reads the daemon's goroutines (its go_goroutines metric, over a
// connection that is closed before the fds are counted), open fds
// (/proc/PID/fd) and threads (/proc/PID/status).
func (d *daemon) sample(t *testing.T) resources {
	t.Helper()
	var r resources
	g, err := d.metric("go_goroutines")
	if err != nil {
		t.Fatal(err)
	}
	r.goroutines = int(g)
	pid := d.p.Cmd.Process.Pid
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	r.fds = len(fds)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			r.threads, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return r
}

// metricsClient scrapes without keep-alive, so no connection of the
// scrape stays open in the daemon.
var metricsClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// metric returns the sum of a metric's series whose line starts with
// name: a metric's name, or its name and the first of its labels (in the
// exposition's alphabetical order) to pick series.
func (d *daemon) metric(name string) (float64, error) {
	resp, err := metricsClient.Get("http://" + d.metrics + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	sum, found := 0.0, false
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, name) || strings.HasPrefix(l, "#") {
			continue
		}
		if rest := l[len(name):]; !strings.Contains(name, "{") && rest != "" && rest[0] != ' ' && rest[0] != '{' {
			continue // another metric with this prefix
		}
		f, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("metric line %q: %w", l, err)
		}
		sum, found = sum+f, true
	}
	if !found {
		return 0, fmt.Errorf("no metric %s", name)
	}
	return sum, nil
}

// settle waits until the daemon is back to base (goroutines and fds no
// more than base's; goroutines may be 2 over, for the scrape's own
// handler) and returns what it holds then; it fails the test if that
// does not happen within 10 s.
func (d *daemon) settle(t *testing.T, base resources) resources {
	t.Helper()
	var now resources
	deadline := time.Now().Add(10 * time.Second)
	for {
		now = d.sample(t)
		if now.fds <= base.fds && now.goroutines <= base.goroutines+2 {
			return now
		}
		if time.Now().After(deadline) {
			t.Errorf("the daemon did not return to its baseline: now %v, baseline %v", now, base)
			return now
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// auditLog is an audit file read back: the calls by ID.
type auditLog struct {
	intents map[string]auditlog.Record // by ID
	done    map[string]auditlog.Record // by ID
	// suppressed counts the records the audit log's per-caller rate
	// limit left out, by kind ("deny", "would-deny", "read"), as the
	// later records and the summary records say.
	suppressed map[string]uint64
	lines      int
}

// readAudit reads the audit file, failing unless every line is one
// complete JSON record, each ID has at most one intent and one outcome,
// every intent has its outcome (none half-done), and every change that
// was made (an outcome that is no refusal) has its intent
// (auditlog.CheckIntents).
func readAudit(t *testing.T, path string) auditLog { return readAuditLost(t, path, false) }

// readAuditLost is readAudit for a log that failed while changes ran:
// with lostOutcomes, an intent may lack its outcome (the change was made,
// or not, and its outcome could not be written; the daemon's log has it).
func readAuditLost(t *testing.T, path string, lostOutcomes bool) auditLog {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(auditlog.Torn(b)) > 0 {
		t.Errorf("the audit file ends in a torn record: %q", tail(string(b), 200))
	}
	recs := auditlog.Parse(t, b)
	// A refusal because the intent could not be written is no change
	// made, so it has no intent.
	for _, p := range auditlog.CheckIntents(recs, auditlog.IntentOptions{Refused: auditlog.AuditUnavailable, LostOutcomes: lostOutcomes}) {
		t.Error(p)
	}
	a := auditLog{intents: map[string]auditlog.Record{}, done: map[string]auditlog.Record{}, lines: len(recs)}
	a.suppressed, _ = auditlog.Suppressed(recs, nil)
	for _, r := range recs {
		if r.Phase == auditlog.PhaseSummary {
			continue
		}
		m := a.done
		if r.Phase == auditlog.PhaseIntent {
			m = a.intents
		}
		m[r.ID] = r
	}
	return a
}

// count returns how many outcome records of method ended with code.
func (a auditLog) count(method, code string) int {
	n := 0
	for _, r := range a.done {
		if r.Method == method && r.Code == code {
			n++
		}
	}
	return n
}

// madePaths returns the "path" of every Mkdir the audit log says was made.
func (a auditLog) madePaths() map[string]bool {
	out := map[string]bool{}
	for _, r := range a.done {
		if r.Method == "Mkdir" && r.Code == "OK" {
			p, _ := r.Request["path"].(string)
			out[p] = true
		}
	}
	return out
}

// begunPaths returns the "path" of every Mkdir that has an intent record
// and no outcome: begun, and how it ended is not recorded.
func (a auditLog) begunPaths() map[string]bool {
	out := map[string]bool{}
	for id, r := range a.intents {
		if _, ok := a.done[id]; !ok && r.Method == "Mkdir" {
			p, _ := r.Request["path"].(string)
			out[p] = true
		}
	}
	return out
}

// latencies collects call durations from many goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d []time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d...)
	l.mu.Unlock()
}

// report logs p50, p99, max and calls/s over wall.
func (l *latencies) report(t *testing.T, what string, wall time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		t.Logf("%s: no calls", what)
		return
	}
	sort.Slice(l.d, func(i, j int) bool { return l.d[i] < l.d[j] })
	pct := func(p float64) time.Duration { return l.d[int(p*float64(len(l.d)-1))] }
	t.Logf("%s: %d calls in %v = %.0f calls/s; p50 %v, p99 %v, max %v", what, len(l.d), wall.Round(time.Millisecond),
		float64(len(l.d))/wall.Seconds(), pct(0.5).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), l.d[len(l.d)-1].Round(time.Microsecond))
}

// callCtx is a context for one call, bounded so a hung daemon fails the
// test instead of hanging it.
func callCtx(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), 30*time.Second)
}
