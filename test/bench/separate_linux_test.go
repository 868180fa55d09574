//go:build linux

package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

// The separate-process benchmarks measure the daemon as a driver sees it:
// the real csi-node-proxy binary in its own process, and the baseline (a
// bare grpc-go server of the same service) in another process, both on
// unix sockets, called from this process. The in-process
// BenchmarkPathExistsRatio shares one Go runtime (scheduler, GC, CPU)
// between client and servers, which hides what a second process costs.

// bareServerEnv makes this test binary serve the baseline on the socket
// it names instead of running tests (see TestMain).
const bareServerEnv = "CSI_NODE_PROXY_BENCH_BARE_SOCKET"

// serveBareAndExit serves the baseline until SIGTERM. It is this test
// binary's whole job when run as the baseline process.
func serveBareAndExit(sock string) {
	lis, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare server:", err)
		os.Exit(2)
	}
	s := grpc.NewServer()
	filesystemv1.RegisterFilesystemServer(s, bareFilesystem{})
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		s.Stop()
	}()
	if err := s.Serve(lis); err != nil {
		fmt.Fprintln(os.Stderr, "bare server:", err)
		os.Exit(2)
	}
	os.Exit(0)
}

// serverProcess is a server started as a child process.
type serverProcess struct {
	sock string
	dir  string // its scratch directory (socket, log, policy, audit log)
}

// startProcess runs bin with args and env through the shared harness
// (daemonbin.Start: a process that exits before its socket accepts fails
// the benchmark at once, with its output) and stops it when tb ends. Both
// sides start and stop the same way, and both must exit 0 on SIGTERM
// without a data race reported: the baseline's serveBareAndExit does, and
// a daemon that does not is a failure the benchmark must not hide.
func startProcess(tb testing.TB, bin string, args, env []string, dir, sock string) *serverProcess {
	tb.Helper()
	daemonbin.Start(tb, bin, daemonbin.Options{
		Args: args, Env: env, Ready: daemonbin.SocketsAccept(sock), ReadyTimeout: 30 * time.Second,
		// Straight to a file: a node's log goes to journald or the
		// runtime, not through the process calling the daemon.
		LogFile: filepath.Join(dir, "server.log"), LogFileOnly: true, StopTimeout: 10 * time.Second,
	})
	return &serverProcess{sock: sock, dir: dir}
}

// startBareProcess runs the baseline in a child process.
func startBareProcess(tb testing.TB) *serverProcess {
	dir := shortDir(tb)
	sock := filepath.Join(dir, "bare.sock")
	return startProcess(tb, os.Args[0], nil, []string{bareServerEnv + "=" + sock}, dir, sock)
}

// daemonMode says what the daemon runs with besides the simulated host.
type daemonMode struct {
	name string
	// args are the daemon's flags beyond the simulated host, the
	// filesystem API and the socket and working directories; %s in them
	// is the benchmark's scratch directory (policy, audit log).
	args []string
	// policy, when set, is written to %s/policy.yaml (with this
	// process's uid for %d) before the daemon starts.
	policy string
}

var (
	plainDaemon = daemonMode{name: "daemon"}
	// shippedDaemon runs as deploy/linux/csi-node-proxy.yaml and the
	// systemd unit do: a policy whose driver rule has path roots and
	// object confinement, re-read every 10 s, an audit log of changes
	// (not of reads), -v=2. The manifests' caller selectors name a
	// ServiceAccount and pod through the CRI; here the rule selects by
	// uid, since the benchmark has no container runtime.
	shippedDaemon = daemonMode{name: "shipped", policy: shippedPolicy, args: []string{
		"--policy=%s/policy.yaml", "--policy-reload-interval=10s", "--audit-log=%s/audit.log", "-v=2"}}
	// auditReadsDaemon adds --audit-reads: an audit record of every call,
	// reads included, which the shipped configuration does not turn on.
	// Its figures are what that option costs.
	auditReadsDaemon = daemonMode{name: "daemon+policy+audit-reads", policy: shippedPolicy, args: []string{
		"--policy=%s/policy.yaml", "--audit-log=%s/audit.log", "--audit-reads"}}
)

// shippedPolicy admits this process's uid to the filesystem group
// beneath the kubelet directory, with the disk drivers' object
// confinement: the shape of a driver's rule in deploy/linux/policy.yaml.
const shippedPolicy = `rules:
- name: bench
  callers:
  - uids: [%d]
  allow:
  - groups: [disk, volume, filesystem]
    methods: ["*"]
  pathRoots: ['C:\var\lib\kubelet']
  objects:
    onlyMountedBeneathPathRoots: true
`

// startDaemonProcess runs the real daemon binary on the simulated host,
// serving filesystem v1 only, with mode's policy and flags.
func startDaemonProcess(tb testing.TB, mode daemonMode) *serverProcess {
	bin := linuxnode.DaemonBinary(tb)
	dir := shortDir(tb)
	sockDir := filepath.Join(dir, "s")
	args := []string{"--host=simulated", "--apis=filesystem-v1", "--socket-dir=" + sockDir,
		`--working-dir=` + kubelet}
	if mode.policy != "" {
		pol := filepath.Join(dir, "policy.yaml")
		if err := os.WriteFile(pol, []byte(fmt.Sprintf(mode.policy, os.Getuid())), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	for _, a := range mode.args {
		args = append(args, strings.ReplaceAll(a, "%s", dir))
	}
	return startProcess(tb, bin, args, nil, dir, filepath.Join(sockDir, "csi-proxy-filesystem-v1.sock"))
}

// clients dials n separate connections (n drivers) to p and makes one
// call on each, so connecting is not measured.
func (p *serverProcess) clients(tb testing.TB, n int) []filesystemv1.FilesystemClient {
	tb.Helper()
	out := make([]filesystemv1.FilesystemClient, n)
	for i := range out {
		out[i] = dial(tb, p.sock)
		call(tb, out[i])
	}
	return out
}

// percentile returns the q-quantile (0..1) of sorted durations.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q * float64(len(sorted)-1))
	return sorted[i]
}

// BenchmarkSeparateProcessLatency alternates single calls to the baseline
// process and to the daemon process, one connection each, and reports
// the ratio of their median (p50) and p99 latencies. Goal: p50 ratio at
// most 1.10, for the plain daemon and the shipped configuration.
func BenchmarkSeparateProcessLatency(b *testing.B) {
	for _, mode := range []daemonMode{plainDaemon, shippedDaemon, auditReadsDaemon} {
		b.Run(mode.name, func(b *testing.B) {
			bare := startBareProcess(b).clients(b, 1)[0]
			daemon := startDaemonProcess(b, mode).clients(b, 1)[0]
			// Warm both servers' code paths before measuring.
			for range 200 {
				call(b, bare)
				call(b, daemon)
			}
			tBare := make([]time.Duration, 0, b.N)
			tDaemon := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				// Alternate which side goes first so neither always
				// runs right after the other's wake-up.
				first, second, fs, ss := bare, daemon, &tBare, &tDaemon
				if i%2 == 1 {
					first, second, fs, ss = daemon, bare, &tDaemon, &tBare
				}
				t0 := time.Now()
				call(b, first)
				t1 := time.Now()
				call(b, second)
				t2 := time.Now()
				*fs = append(*fs, t1.Sub(t0))
				*ss = append(*ss, t2.Sub(t1))
			}
			b.StopTimer()
			slices.Sort(tBare)
			slices.Sort(tDaemon)
			p50b, p50d := percentile(tBare, 0.5), percentile(tDaemon, 0.5)
			p99b, p99d := percentile(tBare, 0.99), percentile(tDaemon, 0.99)
			b.ReportMetric(float64(p50b.Nanoseconds()), "bare-p50-ns")
			b.ReportMetric(float64(p50d.Nanoseconds()), "daemon-p50-ns")
			b.ReportMetric(float64(p99d)/float64(p99b), "p99-ratio")
			b.ReportMetric(float64(p50d)/float64(p50b), "ratio")
		})
	}
}

// throughputClients is how many drivers call at once in
// BenchmarkSeparateProcessThroughput, and how many calls one driver has
// in flight at once in BenchmarkSeparateProcessOneConnection.
const throughputClients = 16

// BenchmarkSeparateProcessThroughput has 16 connections (16 drivers) call
// each server as fast as they can, in alternating rounds of equal call
// counts (b.N calls per side in all), and reports the daemon's calls per
// second over the baseline's. Goal: at least 0.90, for the plain daemon
// and the shipped configuration.
func BenchmarkSeparateProcessThroughput(b *testing.B) {
	for _, mode := range []daemonMode{plainDaemon, shippedDaemon, auditReadsDaemon} {
		b.Run(mode.name, func(b *testing.B) { throughput(b, mode, throughputClients) })
	}
}

// BenchmarkSeparateProcessOneConnection is BenchmarkSeparateProcessThroughput
// with the 16 concurrent calls on one connection: one busy driver (kubelet
// staging and publishing many volumes through one node plugin, which holds
// one connection per socket). Goal: at least 0.90, for the plain daemon and
// the shipped configuration.
func BenchmarkSeparateProcessOneConnection(b *testing.B) {
	for _, mode := range []daemonMode{plainDaemon, shippedDaemon} {
		b.Run(mode.name, func(b *testing.B) { throughput(b, mode, 1) })
	}
}

// throughput runs throughputClients callers at once against each server
// over conns connections (the callers share them round-robin), in
// alternating rounds, and reports the daemon's calls per second over the
// baseline's.
func throughput(b *testing.B, mode daemonMode, conns int) {
	bare := spread(startBareProcess(b).clients(b, conns))
	daemon := spread(startDaemonProcess(b, mode).clients(b, conns))
	const round = throughputClients * 64
	rounds := max(1, b.N/round)
	var dBare, dDaemon time.Duration
	b.ResetTimer()
	for r := range rounds {
		sides := [][]filesystemv1.FilesystemClient{bare, daemon}
		spent := []*time.Duration{&dBare, &dDaemon}
		if r%2 == 1 {
			sides[0], sides[1] = sides[1], sides[0]
			spent[0], spent[1] = spent[1], spent[0]
		}
		for i, side := range sides {
			*spent[i] += hammer(b, side, round)
		}
	}
	b.StopTimer()
	calls := float64(rounds * round)
	bareRate := calls / dBare.Seconds()
	daemonRate := calls / dDaemon.Seconds()
	b.ReportMetric(bareRate, "bare-calls/s")
	b.ReportMetric(daemonRate, "daemon-calls/s")
	b.ReportMetric(daemonRate/bareRate, "ratio")
}

// spread returns throughputClients callers over conns: each of them
// calls on conns[i%len(conns)].
func spread(conns []filesystemv1.FilesystemClient) []filesystemv1.FilesystemClient {
	out := make([]filesystemv1.FilesystemClient, throughputClients)
	for i := range out {
		out[i] = conns[i%len(conns)]
	}
	return out
}

// hammer makes n calls spread over the clients, each client calling in a
// loop, and returns the wall time they took.
func hammer(tb testing.TB, clients []filesystemv1.FilesystemClient, n int) time.Duration {
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if _, err := c.PathExists(context.Background(), request); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	d := time.Since(start)
	if err, ok := failed.Load().(error); ok {
		tb.Fatal(err)
	}
	return d
}

// TestSeparateProcessesAnswer keeps the separate-process benchmarks
// honest: both processes must really answer PathExists (the daemon in
// every mode, its audit log recording reads under --audit-reads), and the
// shipped configuration's policy must be in force (a path outside its
// roots refused), or the ratios compare nothing.
func TestSeparateProcessesAnswer(t *testing.T) {
	sides := map[string]*serverProcess{
		"bare":                startBareProcess(t),
		plainDaemon.name:      startDaemonProcess(t, plainDaemon),
		shippedDaemon.name:    startDaemonProcess(t, shippedDaemon),
		auditReadsDaemon.name: startDaemonProcess(t, auditReadsDaemon),
	}
	for name, p := range sides {
		c := dial(t, p.sock)
		r, err := c.PathExists(context.Background(), &filesystemv1.PathExistsRequest{Path: kubelet})
		if err != nil || !r.Exists {
			t.Errorf("%s: PathExists(%s) = %v, %v", name, kubelet, r, err)
		}
	}
	outside := &filesystemv1.PathExistsRequest{Path: `C:\Windows\System32`}
	if _, err := dial(t, sides[shippedDaemon.name].sock).PathExists(context.Background(), outside); status.Code(err) != codes.PermissionDenied {
		t.Errorf("shipped: PathExists(%s) outside the rule's path roots = %v, want PermissionDenied", outside.Path, err)
	}
	audit := filepath.Join(sides[auditReadsDaemon.name].dir, "audit.log")
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatalf("the audit-reads daemon's audit log: %v", err)
	}
	if !slices.ContainsFunc(strings.Split(string(data), "\n"), func(l string) bool {
		return strings.Contains(l, `"PathExists"`) && strings.Contains(l, `"bench"`)
	}) {
		t.Errorf("the audit-reads daemon's audit log has no PathExists record allowed by rule bench:\n%s", data)
	}
}
