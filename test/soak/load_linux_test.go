//go:build linux

package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
)

// dataDisk is a data disk of the simulated host's default configuration.
const dataDisk = 1

// tally counts what clients did, by method and code.
type tally struct {
	mu sync.Mutex
	n  map[string]int // "Method code"
}

func (c *tally) add(method string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[method+" "+status.Code(err).String()]++
}

// merge adds o's counts to c.
func (c *tally) merge(o *tally) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o.mu.Lock()
	defer o.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	for k, v := range o.n {
		c.n[k] += v
	}
}

func (c *tally) get(method, code string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[method+" "+code]
}

// mixedClient runs calls until stop closes: about 70% reads (PathExists,
// ListDiskIDs, GetDiskStats) and 30% idempotent writes (Mkdir of the
// client's own directory, SetDiskState online, Rescan). Every error fails
// the test; every call is tallied and timed.
func mixedClient(t *testing.T, id int, fs filesystemv1.FilesystemClient, dk diskv1.DiskClient, stop <-chan struct{}, c *tally, lat *latencies) {
	rng := rand.New(rand.NewPCG(uint64(id), 1))
	dir := fmt.Sprintf(`%s\soak\c%d`, kubelet, id)
	var own []time.Duration
	defer func() { lat.add(own) }()
	for {
		select {
		case <-stop:
			return
		default:
		}
		ctx, cancel := callCtx(t)
		var method string
		var err error
		start := time.Now()
		switch p := rng.IntN(100); {
		case p < 30:
			method = "PathExists"
			_, err = fs.PathExists(ctx, &filesystemv1.PathExistsRequest{Path: dir})
		case p < 50:
			method = "ListDiskIDs"
			_, err = dk.ListDiskIDs(ctx, &diskv1.ListDiskIDsRequest{})
		case p < 70:
			method = "GetDiskStats"
			_, err = dk.GetDiskStats(ctx, &diskv1.GetDiskStatsRequest{DiskNumber: dataDisk})
		case p < 85:
			method = "Mkdir"
			_, err = fs.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: dir})
		case p < 95:
			method = "SetDiskState"
			_, err = dk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: dataDisk, IsOnline: true})
		default:
			method = "Rescan"
			_, err = dk.Rescan(ctx, &diskv1.RescanRequest{})
		}
		own = append(own, time.Since(start))
		cancel()
		c.add(method, err)
		if err != nil {
			t.Errorf("client %d: %s: %v", id, method, err)
			return
		}
	}
}

// loadRound runs clients mixed clients, each on its own connections, for
// d, and returns the tally and the wall time.
func loadRound(t *testing.T, dm *daemon, clients int, d time.Duration, lat *latencies) (*tally, time.Duration) {
	t.Helper()
	c := &tally{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	conns := make([]*grpc.ClientConn, 0, 2*clients)
	for i := range clients {
		fc, dc := dm.dial(t, "filesystem-v1"), dm.dial(t, "disk-v1")
		conns = append(conns, fc, dc)
		wg.Go(func() {
			mixedClient(t, i, filesystemv1.NewFilesystemClient(fc), diskv1.NewDiskClient(dc), stop, c, lat)
		})
	}
	start := time.Now()
	time.Sleep(d)
	close(stop)
	wg.Wait()
	wall := time.Since(start)
	for _, cc := range conns {
		cc.Close()
	}
	return c, wall
}

// warmUp runs every kind of call once from two clients, so that what the
// daemon sets up once (per endpoint, per method, the metrics handler) is
// in place, and returns its resources once they are steady: the baseline
// that load must come back to.
func warmUp(t *testing.T, dm *daemon) (resources, *tally) {
	t.Helper()
	c, _ := loadRound(t, dm, 2, 300*time.Millisecond, &latencies{})
	prev := dm.sample(t)
	for range 100 {
		time.Sleep(50 * time.Millisecond)
		now := dm.sample(t)
		if now == prev {
			return now, c
		}
		prev = now
	}
	return prev, c
}

// TestLoad: concurrent clients with mixed reads and idempotent writes, two
// rounds. No call fails; the audit log has exactly one intent and one
// outcome per change and one record per read, matching what the clients
// saw; after each round the daemon's goroutines and fds are back to
// their baseline, and its threads do not grow from round to round.
func TestLoad(t *testing.T) {
	clients, d := envInt(t, "SOAK_CLIENTS", 16), loadDuration(t)
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	dm := startDaemon(t, auditPath)
	base, warm := warmUp(t, dm)
	t.Logf("baseline: %v", base)
	var total tally
	total.merge(warm)
	var afterRounds []resources
	for round := 1; round <= 2; round++ {
		lat := &latencies{}
		c, wall := loadRound(t, dm, clients, d, lat)
		lat.report(t, fmt.Sprintf("round %d, %d clients", round, clients), wall)
		total.merge(c)
		after := dm.settle(t, base)
		t.Logf("after round %d: %v", round, after)
		afterRounds = append(afterRounds, after)
	}
	if afterRounds[1].threads > afterRounds[0].threads+2 {
		t.Errorf("the daemon's threads grew from %d to %d between two equal rounds", afterRounds[0].threads, afterRounds[1].threads)
	}
	dm.stop(t)
	a := readAudit(t, auditPath)
	// Every change has its records; reads are rate-limited per caller
	// (a burst, then one per interval: docs/security.md), and what the
	// limit left out is counted on later records and summary records, so
	// the reads written plus those said suppressed are every read made.
	for _, m := range []string{"Mkdir", "SetDiskState", "Rescan"} {
		if got, want := a.count(m, "OK"), total.get(m, "OK"); got != want {
			t.Errorf("%s: %d OK outcome records, the clients saw %d", m, got, want)
		}
	}
	readsWritten, readsMade := 0, 0
	for _, m := range []string{"PathExists", "ListDiskIDs", "GetDiskStats"} {
		readsWritten += a.count(m, "OK")
		readsMade += total.get(m, "OK")
	}
	if got := uint64(readsWritten) + a.suppressed["read"]; got != uint64(readsMade) {
		t.Errorf("reads: %d outcome records and %d said suppressed, the clients made %d", readsWritten, a.suppressed["read"], readsMade)
	}
	writes := total.get("Mkdir", "OK") + total.get("SetDiskState", "OK") + total.get("Rescan", "OK")
	if len(a.intents) != writes {
		t.Errorf("%d intent records, %d changes made", len(a.intents), writes)
	}
	t.Logf("audit: %d lines, %d intents, %d outcomes", a.lines, len(a.intents), len(a.done))
}

// TestChurn opens and closes connections, one call each: the daemon's fds
// and goroutines come back to the baseline.
func TestChurn(t *testing.T) {
	n := envInt(t, "SOAK_CHURN", 300)
	dm := startDaemon(t, filepath.Join(t.TempDir(), "audit.log"))
	base, _ := warmUp(t, dm)
	lat := &latencies{}
	start := time.Now()
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 4 {
		wg.Go(func() {
			var own []time.Duration
			defer func() { lat.add(own) }()
			for next.Add(1) <= int64(n) {
				t0 := time.Now()
				cc := dm.dial(t, "filesystem-v1")
				ctx, cancel := callCtx(t)
				_, err := filesystemv1.NewFilesystemClient(cc).PathExists(ctx, &filesystemv1.PathExistsRequest{Path: kubelet})
				cancel()
				cc.Close()
				own = append(own, time.Since(t0))
				if err != nil {
					t.Errorf("churn call: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	lat.report(t, fmt.Sprintf("%d connections (dial, call, close)", n), time.Since(start))
	t.Logf("baseline %v; after %v", base, dm.settle(t, base))
}

// TestCancelledAndAbandoned: calls whose deadline passes in flight, calls
// cancelled by the client, and calls abandoned by closing the connection
// under them. Each ends OK or with the client's own code; the daemon
// writes the outcome of every change it began (no intent is left alone)
// and returns to its baseline.
func TestCancelledAndAbandoned(t *testing.T) {
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	dm := startDaemon(t, auditPath)
	base, _ := warmUp(t, dm)
	const rounds = 200
	var wg sync.WaitGroup
	var ok, cut atomic.Int64
	for w := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 2))
			for i := range rounds {
				cc := dm.dial(t, "filesystem-v1")
				fs := filesystemv1.NewFilesystemClient(cc)
				path := fmt.Sprintf(`%s\cancel\w%d-%d`, kubelet, w, i)
				var ctx context.Context
				var cancel context.CancelFunc
				// Up to 20 ms: some calls end first, some are cut off
				// before they reach the daemon, some while it runs them.
				after := time.Duration(rng.IntN(20000)) * time.Microsecond
				switch i % 3 {
				case 0: // the deadline passes
					ctx, cancel = context.WithTimeout(t.Context(), after)
				case 1: // cancelled by the client meanwhile
					ctx, cancel = context.WithCancel(t.Context())
					time.AfterFunc(after, cancel)
				default: // abandoned: the connection closes under the call
					ctx, cancel = callCtx(t)
					time.AfterFunc(after, func() { cc.Close() })
				}
				_, err := fs.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: path})
				cancel()
				cc.Close()
				switch status.Code(err) {
				case codes.OK:
					ok.Add(1)
				case codes.DeadlineExceeded, codes.Canceled:
					cut.Add(1)
				default:
					t.Errorf("Mkdir %s: %v, want OK, DeadlineExceeded or Canceled", path, err)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d calls answered OK, %d cut off by the client", ok.Load(), cut.Load())
	after := dm.settle(t, base)
	t.Logf("baseline %v; after %v", base, after)
	dm.stop(t)
	a := readAudit(t, auditPath) // every intent has its outcome
	if made := a.count("Mkdir", "OK"); made < int(ok.Load()) {
		t.Errorf("%d Mkdir recorded done, but the clients saw %d succeed", made, ok.Load())
	}
}

// TestSIGTERMUnderLoad: clients create distinct directories while the
// daemon gets SIGTERM. Every call is answered OK or Unavailable; every OK
// has its intent and outcome in the audit log, no Unavailable call's
// change was made, and no change is half-done (an intent without its
// outcome). The daemon exits 0.
func TestSIGTERMUnderLoad(t *testing.T) {
	clients := envInt(t, "SOAK_CLIENTS", 16)
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	dm := startDaemon(t, auditPath)
	var mu sync.Mutex
	answered := map[string]codes.Code{}
	var wg sync.WaitGroup
	for i := range clients {
		cc := dm.dial(t, "filesystem-v1")
		fs := filesystemv1.NewFilesystemClient(cc)
		wg.Go(func() {
			for n := 0; ; n++ {
				path := fmt.Sprintf(`%s\term\c%d-%d`, kubelet, i, n)
				ctx, cancel := callCtx(t)
				_, err := fs.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: path})
				cancel()
				code := status.Code(err)
				mu.Lock()
				answered[path] = code
				mu.Unlock()
				if code != codes.OK {
					return // the daemon is going: Unavailable from here on
				}
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	took := dm.sigterm(t)
	wg.Wait()
	a := readAudit(t, auditPath)
	made := a.madePaths()
	counts := map[codes.Code]int{}
	for path, code := range answered {
		counts[code]++
		switch code {
		case codes.OK:
			if !made[path] {
				t.Errorf("Mkdir %s answered OK but not audited as done", path)
			}
		case codes.Unavailable:
			if made[path] {
				t.Errorf("Mkdir %s answered Unavailable but made (half-done)", path)
			}
		default:
			t.Errorf("Mkdir %s answered %v, want OK or Unavailable", path, code)
		}
	}
	t.Logf("SIGTERM under load (%d clients): exited in %v; answers %v", clients, took.Round(time.Millisecond), counts)
}
