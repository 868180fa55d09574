//go:build linux

package hostileload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/syncbuf"
)

// How long the driver runs in slices, the flooder running and stopped
// in turn (and half as long before the flood, for a figure).
const (
	driverRun    = 8 * time.Second
	driverSlices = 32
)

// maxFloodP99 bounds the driver's p99 under the flood, far below the
// shortest timeout a CSI driver's node call runs under (kubelet's 2 min
// operations; drivers' own 15-30 s retries) and about 100x the p99 with
// the flooder stopped on a quiet machine: a flood that makes calls this
// slow is a failure whatever the ratio.
const maxFloodP99 = 250 * time.Millisecond

// auditFSSize is the audit tmpfs: small, so that a flood that is not
// bounded fills it within the run (the audit log keeps 16 MiB for
// changes; a flood of 32,000-byte denials unbounded wrote 24 MB each).
const auditFSSize = 48 << 20

// policy admits root (the driver) to everything under the kubelet
// directory, and no one else: the flooder's every call is denied.
const policy = `rules:
- name: driver
  callers: [{uids: [0]}]
  allow: [{methods: ["*"]}]
  pathRoots: ['C:\var\lib\kubelet']
`

// TestHostileLoad: see the package doc.
func TestHostileLoad(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a memory cgroup, a tmpfs and a second user")
	}
	bin := daemonbin.Binary(t) // the shipped build: figures of a race build would mean nothing
	sockets := publicDir(t, "hl")
	auditDir := mountTmpfs(t)
	auditPath := filepath.Join(auditDir, "audit.log")
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	cg, why := newMemCgroup(t)
	opts := daemonbin.Options{
		Args: []string{"--host=simulated", "--socket-dir=" + sockets, "--socket-mode=0666", "--policy=" + pol,
			"--audit-log=" + auditPath, "--cri-endpoint=", "--metrics-bind-address=127.0.0.1:0"},
		Ready:        daemonbin.SocketsAccept(filepath.Join(sockets, "csi-proxy-filesystem-v1.sock"), filepath.Join(sockets, "csi-proxy-disk-v1.sock"), filepath.Join(sockets, "csi-proxy-volume-v1.sock")),
		Output:       &syncbuf.Buffer{},
		StderrOnly:   true,
		ReadyTimeout: 30 * time.Second,
		StopTimeout:  30 * time.Second,
	}
	if cg != nil {
		// The shell joins the cgroup and execs the daemon, so every
		// byte the daemon ever uses is charged to it.
		opts.Command = func(bin string, args []string) *exec.Cmd {
			return exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, cg.dir, bin}, args...)...)
		}
		t.Logf("daemon in memory cgroup %s, limit %d MiB", cg, memoryLimit>>20)
	} else {
		t.Logf("no memory cgroup could be made (%s): the daemon's own RSS peak is held to the %d MiB limit instead", why, memoryLimit>>20)
	}
	p := daemonbin.Start(t, bin, opts)
	metricsAddr := regexp.MustCompile(`"Serving metrics" address="([^"]+)"`).FindStringSubmatch(p.Output.String())
	if metricsAddr == nil {
		t.Fatalf("the daemon did not name its metrics address:\n%s", p.Output.String())
	}

	d := newDriver(t, sockets)
	if err := d.round(); err != nil { // partitions and formats the disk
		t.Fatalf("the driver's first round: %v", err)
	}
	pid := p.Cmd.Process.Pid
	cpu0, _ := cpuTime(pid)
	alone := d.run(driverRun / 2)
	aloneRounds := d.rounds
	cpu1, _ := cpuTime(pid)

	// The flood, then the driver in slices with the flooder running and
	// stopped (SIGSTOP) in turn: the other work of this shared machine
	// falls on both alike, where a run before the flood and one during
	// it would compare two different moments of the machine.
	fl := startFlooder(t, sockets, floodSetup+driverRun+time.Second) // floodFor below
	time.Sleep(floodSetup)
	cpu2, _ := cpuTime(pid)
	nc := startNewcomers(sockets)
	loaded, unloaded := d.runSlices(driverSlices, driverRun/driverSlices, func(on bool) {
		fl.run(on)
		nc.flooding.Store(on)
	})
	nc.end()
	cpu3, _ := cpuTime(pid)
	fl.run(true)
	rep := fl.wait(t)

	// The daemon lives and still serves.
	if exited, err := p.Exited(); exited {
		t.Fatalf("the daemon died under the flood: %v\n%s", err, tail(p.Output.String(), 4000))
	}
	if err := d.round(); err != nil {
		t.Errorf("the driver's round after the flood: %v", err)
	}
	// Every driver call succeeded.
	if len(d.failed) > 0 {
		t.Errorf("%d of the driver's %d calls failed, first: %s", len(d.failed), len(d.lat), d.failed[0])
	}
	a50, a99 := percentile(alone, 0.5), percentile(alone, 0.99)
	u50, u99 := percentile(unloaded, 0.5), percentile(unloaded, 0.99)
	l50, l99 := percentile(loaded, 0.5), percentile(loaded, 0.99)
	t.Logf("driver: before the flood %d calls (%d rounds) p50 %v p99 %v; in %d slices of %v, flooder stopped: %d calls p50 %v p99 %v, flooding: %d calls p50 %v p99 %v (p99 %.2fx)",
		len(alone), aloneRounds, a50, a99, driverSlices, driverRun/driverSlices, len(unloaded), u50, u99, len(loaded), l50, l99, float64(l99)/float64(u99))
	// New connections: opened as the flood went on, each one succeeds;
	// how long they take is reported.
	t.Logf("new connections (one call each, every %v): flooder stopped: %d, p50 %v p99 %v max %v; flooding: %d, p50 %v p99 %v max %v",
		newcomerEvery, len(nc.off), percentile(nc.off, 0.5), percentile(nc.off, 0.99), percentile(nc.off, 1),
		len(nc.on), percentile(nc.on, 0.5), percentile(nc.on, 0.99), percentile(nc.on, 1))
	if len(nc.failed) > 0 {
		t.Errorf("%d of the new connections' calls failed, first: %s", len(nc.failed), nc.failed[0])
	}
	t.Logf("daemon CPU: %v in %v before the flood, %v in the %v of slices", cpu1-cpu0, driverRun/2, cpu3-cpu2, driverRun)
	// The goal (issue #23) is a p99 within 3x of the flooder-stopped
	// one. On a quiet machine it was met in 15 runs of 15 since each
	// storm acceptor has a P of its own (2.02-2.96x, docs/security.md),
	// too close to the bound to assert without failing CI now and then:
	// reported here. What is asserted is what
	// a driver cannot do without: its calls under the flood stay far
	// below any CSI timeout.
	if l99 > 3*u99 {
		t.Logf("GOAL NOT MET: the driver's p99 under the flood, %v, is over 3x its p99 with the flooder stopped, %v; its calls over 50 ms: %v", l99, u99, d.slow[:min(len(d.slow), 20)])
	}
	if l99 > maxFloodP99 {
		t.Errorf("the driver's p99 under the flood is %v, over %v; its calls over 50 ms: %v", l99, maxFloodP99, d.slow[:min(len(d.slow), 20)])
	}
	t.Logf("flooder (uid %d, %s): %d unary calls answered %v; %d huge (32,000-byte path) denied; %d connections opened by the storm, %d of them closed by the daemon; %d partial streams started",
		floodUID, fl.cpu, sum(rep.Codes), rep.Codes, rep.HugeDenied, rep.Dials, rep.DialsRefused, rep.PartialStreams)
	if rep.Denied == 0 || rep.HugeDenied == 0 || rep.Dials < 1000 || rep.PartialStreams == 0 {
		t.Errorf("the flood was not what it should be: %+v", rep)
	}
	// Paced: the burst, then the pace for as long as the flooder ran,
	// and at most one answer a second for each of its loops whose turn
	// was over a second away (the 1 s bound); unpaced it got about
	// 20,000.
	floodFor := floodSetup + driverRun + time.Second
	paced := int64(server.DefaultRefusalBurstPerCaller) + int64((server.DefaultRefusalsPerCallerPerSecond+deniedWorkers+hugeWorkers)*floodFor.Seconds())
	if rep.Denied > paced {
		t.Errorf("the flooder's denied calls were answered %d times in %v, over the %d its pace of refusals allows", rep.Denied, floodFor, paced)
	}

	// Memory.
	rss, err := rssPeak(pid)
	if err != nil {
		t.Fatal(err)
	}
	if cg != nil {
		peak, err := cg.peak()
		if err != nil {
			t.Fatal(err)
		}
		ooms, _ := cg.ooms()
		t.Logf("memory: cgroup peak %.1f MiB (page cache and the audit tmpfs's pages included) of the %d MiB limit; daemon RSS peak %.1f MiB; OOM kills %d",
			mib(peak), memoryLimit>>20, mib(rss), ooms)
		if ooms > 0 {
			t.Errorf("%d OOM kills in the daemon's cgroup", ooms)
		}
	} else {
		t.Logf("memory: daemon RSS peak %.1f MiB of the %d MiB limit (no cgroup)", mib(rss), memoryLimit>>20)
	}
	if rss >= memoryLimit {
		t.Errorf("the daemon's RSS peak %.1f MiB reached the %d MiB limit", mib(rss), memoryLimit>>20)
	}

	// The audit log took every change's records.
	checkAudit(t, auditPath, d, rep, "http://"+metricsAddr[1]+"/metrics", p)
}

// auditRecord is what checkAudit reads of an audit record.
type auditRecord struct {
	ID     string `json:"id"`
	Phase  string `json:"phase"`
	Method string `json:"method"`
	Kind   string `json:"kind"`
	Code   string `json:"code"`
	Caller struct {
		UID *uint32 `json:"uid"`
	} `json:"caller"`
	Suppressed uint64 `json:"suppressed"`
}

// checkAudit holds the audit log to the driver's changes and reports
// what the flood's denials cost it; then it stops the daemon, whose audit
// log says at Close every suppressed count no later record said, and
// holds the flooder's records to the metric's count.
func checkAudit(t *testing.T, path string, d *driver, rep floodReport, metricsURL string, p *daemonbin.Process) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	intents := map[string]string{} // id → method
	outcomes := map[string]int{}   // method → driver outcomes OK with an intent
	var deniedRecords, deniedBytes, suppressedSaid, fileBytes int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		fileBytes += int64(len(line)) + 1
		var r auditRecord
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("audit line %q: %v", tail(string(line), 200), err)
		}
		uid := int64(-1)
		if r.Caller.UID != nil {
			uid = int64(*r.Caller.UID)
		}
		switch {
		case uid == floodUID:
			deniedRecords++
			deniedBytes += int64(len(line)) + 1
			suppressedSaid += int64(r.Suppressed)
		case uid == 0 && r.Phase == "intent":
			intents[r.ID] = r.Method
		case uid == 0 && r.Phase == "done" && r.Code == "OK":
			if m, ok := intents[r.ID]; ok && m == r.Method {
				outcomes[r.Method]++
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for m, n := range d.changed {
		if outcomes[m] != n {
			t.Errorf("%s: the driver made %d changes, the audit log has intent and OK outcome for %d", m, n, outcomes[m])
		}
	}
	metrics := scrape(t, metricsURL)
	suppressed := metrics["csi_node_proxy_audit_suppressed_denials_total"]
	failures := metrics["csi_node_proxy_audit_write_failures_total"]
	t.Logf("audit: %d bytes on the %d MiB tmpfs; the driver's %d changes all recorded (intent and outcome); %d denial records for the flooder's %d denied calls (%d huge): %d bytes, %.0f bytes per denied call; %.0f denials suppressed (csi_node_proxy_audit_suppressed_denials_total), %d said on later records; %.0f write failures",
		fileBytes, auditFSSize>>20, sumInts(d.changed), deniedRecords, rep.Denied, rep.HugeDenied, deniedBytes, float64(deniedBytes)/float64(max(rep.Denied, 1)), suppressed, suppressedSaid, failures)
	if failures > 0 {
		t.Errorf("%.0f audit write failures", failures)
	}
	if suppressed == 0 {
		t.Error("no denial was suppressed: the denial storm did not reach the rate limit")
	}
	// The flooder's refusals past its pace were answered late, so its
	// loops waited instead of calling again at once.
	delayed := metrics["csi_node_proxy_delayed_refusals_total"]
	t.Logf("refusals: %.0f of the flooder's %d answered calls held back for its pace (csi_node_proxy_delayed_refusals_total)", delayed, sum(rep.Codes))
	if delayed == 0 {
		t.Error("no refusal was delayed: the denial storm did not reach the pace of refusals")
	}

	// The flood is over: stopping the daemon closes its audit log, which
	// writes a summary record for each count no later record said.
	p.Stop(t, 30*time.Second)
	saidAtEnd, summaries, lowSpace := flooderSuppressedSaid(t, path)
	t.Logf("audit after the daemon stopped: %d denials said suppressed on the flooder's records, %d of them by %d summary records; %d left out while the tmpfs was down to its reserve for changes (low-space summaries)",
		saidAtEnd, saidAtEnd-suppressedSaid, summaries, lowSpace)
	if float64(saidAtEnd+lowSpace) != suppressed {
		t.Errorf("the flooder's records say %d denials suppressed and the low-space summaries %d, csi_node_proxy_audit_suppressed_denials_total %.0f", saidAtEnd, lowSpace, suppressed)
	}
}

// flooderSuppressedSaid sums the suppressed counts of the flooder's audit
// records, and counts its summary records. lowSpace is what the
// low-space summaries say: once the driver's changes have brought the
// tmpfs's free space down to the reserve the audit log keeps for changes,
// denials are left out whoever the caller, and their summary names none
// (in this run only the flooder is ever denied, and reads are not
// audited, so they are all the flooder's). How far the driver's changes
// fill the tmpfs depends on how fast the machine is: one CI run's driver
// made 32,348 changes and 237 denials went to a low-space summary.
func flooderSuppressedSaid(t *testing.T, path string) (said int64, summaries int, lowSpace int64) {
	t.Helper()
	recs := auditlog.Read(t, path)
	byKind, summaries := auditlog.Suppressed(recs, func(r auditlog.Record) bool {
		return r.Caller.UID != nil && int64(*r.Caller.UID) == floodUID
	})
	for _, n := range byKind {
		said += int64(n)
	}
	low, _ := auditlog.Suppressed(recs, func(r auditlog.Record) bool {
		return r.Phase == auditlog.PhaseSummary && r.SuppressedKind == audit.SuppressedLowSpace
	})
	for _, n := range low {
		lowSpace += int64(n)
	}
	return said, summaries, lowSpace
}

// scrape reads the counters of a Prometheus text page, summed over labels.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url) //nolint:noctx // a test's local scrape
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name, rest = line[:i], line[strings.LastIndexByte(line, ' ')+1:]
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64); err == nil {
			out[name] += v
		}
	}
	return out
}

// flooder is the flooding process.
type flooder struct {
	cmd *exec.Cmd
	// cpu says how the flooder's CPU is limited (limitCPU).
	cpu string
	out bytes.Buffer
	err bytes.Buffer
}

// startFlooder runs this test binary as floodUID, flooding the sockets
// in dir for d. The binary is copied where that user may run it.
func startFlooder(t *testing.T, dir string, d time.Duration) *flooder {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(publicDir(t, "hlbin"), "flooder")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	f := &flooder{cmd: exec.Command(exe)}
	f.cmd.Env = append(os.Environ(), floodEnv+"="+dir, floodDurationEnv+"="+d.String())
	f.cmd.Stdout, f.cmd.Stderr = &f.out, &f.err
	f.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: floodUID, Gid: floodUID}}
	if err := f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.cpu = limitCPU(t, f.cmd.Process.Pid)
	t.Cleanup(func() {
		if f.cmd.ProcessState == nil {
			_ = f.cmd.Process.Kill()
			_ = f.cmd.Wait()
		}
	})
	return f
}

// run continues (on) or stops (SIGSTOP) the flooder.
func (f *flooder) run(on bool) {
	sig := syscall.SIGSTOP
	if on {
		sig = syscall.SIGCONT
	}
	_ = f.cmd.Process.Signal(sig)
}

// wait waits for the flooder's end and returns its report.
func (f *flooder) wait(t *testing.T) floodReport {
	t.Helper()
	if err := f.cmd.Wait(); err != nil {
		t.Fatalf("the flooder: %v\n%s", err, tail(f.err.String(), 4000))
	}
	var rep floodReport
	if err := json.Unmarshal(f.out.Bytes(), &rep); err != nil {
		t.Fatalf("the flooder's report %q: %v", f.out.String(), err)
	}
	return rep
}

// publicDir makes a directory every user may enter, removed at the end.
func publicDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// mountTmpfs mounts a tmpfs of auditFSSize bytes for the audit log,
// unmounted when the test ends.
func mountTmpfs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", auditFSSize)); err != nil {
		t.Fatalf("mount the audit tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount the audit tmpfs: %v", err)
		}
	})
	return dir
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func sumInts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
