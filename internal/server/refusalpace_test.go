package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	systemv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/system/v1alpha1"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/syncbuf"
)

// denyAll is a policy under which no caller may call anything.
func denyAll(t *testing.T) *policy.Store {
	t.Helper()
	p, err := policy.Parse([]byte("rules:\n- {name: nobody, callers: [{uids: [4242424]}], allow: [{methods: ['*']}]}\n"), policy.Options{Style: hostpath.POSIX})
	if err != nil {
		t.Fatal(err)
	}
	return policy.Static(p)
}

// TestRefusalsPaced: under a policy, a caller's refused calls are
// answered at once up to the burst, then at the pace, with the same
// code; delayed_refusals_total counts the ones held back. Before the
// pace (issue 23) a caller with no rights got about 20,000 refusals in
// the hostile-load suite's 9 s of flood, the node's CPU spent on
// answering it.
func TestRefusalsPaced(t *testing.T) {
	cfg := testConfig(t)
	cfg.Policy = denyAll(t)
	cfg.Limits.RefusalBurstPerCaller = 3
	cfg.Limits.RefusalsPerCallerPerSecond = 2 // one turn each 500 ms
	s := start(t, cfg, systemAPI(newFakeSystem()))
	c := systemv1alpha1.NewSystemClient(dial(t, s.Endpoints()[0].Address))
	call := func() {
		t.Helper()
		if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "ok"}); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("a call no rule allows: %v, want PermissionDenied", err)
		}
	}
	begin := time.Now()
	for range 3 {
		call()
	}
	if n := s.calls.Delayed(); n != 0 {
		t.Fatalf("%d of the burst's 3 refusals were delayed", n)
	}
	for range 3 {
		call()
	}
	// The sixth refusal's turn is three turns after the burst's: 1.5 s
	// after the first call at the earliest, however fast or slow the
	// burst went.
	if d := time.Since(begin); d < 1400*time.Millisecond {
		t.Errorf("six refusals (a burst of 3, then 2 a second) took %v, want at least 1.5s", d)
	}
	if n := s.calls.Delayed(); n == 0 {
		t.Error("no refusal past the burst was delayed")
	}
}

// TestRefusalsNotPacedWithoutPolicy: without a policy every caller may do
// everything, so its invalid requests are answered at once however many.
func TestRefusalsNotPacedWithoutPolicy(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits.RefusalBurstPerCaller = 1
	cfg.Limits.RefusalsPerCallerPerSecond = 1
	s := start(t, cfg, systemAPI(newFakeSystem()))
	c := systemv1alpha1.NewSystemClient(dial(t, s.Endpoints()[0].Address))
	for range 5 {
		if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "invalid"}); status.Code(err) != codes.InvalidArgument {
			t.Fatalf("a refused service name: %v, want InvalidArgument", err)
		}
	}
	if n := s.calls.Delayed(); n != 0 {
		t.Errorf("%d refusals delayed without a policy", n)
	}
}

// TestRefusalPacePerCaller: one caller past its pace waits (at most
// maxRefusalDelay, less when its call's context ends); another caller's
// refusals, and answers that are no refusal, are not held at all.
func TestRefusalPacePerCaller(t *testing.T) {
	t.Parallel()
	cl := &callLimiter{max: 64, refusals: newPacer(1, 1)} // one at once, then one a second
	refusal := status.Error(codes.PermissionDenied, "no rule allows it")
	held := func(ctx context.Context, key string, err error) time.Duration {
		begin := time.Now()
		cl.pace(ctx, key, err)
		return time.Since(begin)
	}
	ctx := context.Background()
	if d := held(ctx, "uid:1000", refusal); d > 500*time.Millisecond {
		t.Errorf("the first refusal of a caller was held %v", d)
	}
	if d := held(ctx, "uid:1000", refusal); d < 900*time.Millisecond {
		t.Errorf("a refusal past the pace was held %v, want about a second", d)
	}
	if d := held(ctx, "uid:2000", refusal); d > 500*time.Millisecond {
		t.Errorf("another caller's refusal was held %v", d)
	}
	if d := held(ctx, "uid:1000", status.Error(codes.NotFound, "no such disk")); d > 500*time.Millisecond {
		t.Errorf("an answer that is no refusal was held %v", d)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if d := held(short, "uid:1000", refusal); d > 800*time.Millisecond {
		t.Errorf("a refusal whose call ended after 50ms was held %v", d)
	}
	// A turn further off than maxRefusalDelay (five taken at once):
	// held the bound, no more, and no turn taken.
	for range 5 {
		cl.refusals.reserve("uid:3000", time.Now(), time.Hour)
	}
	before := cl.refusals.pending("uid:3000", time.Now())
	if before < 3*time.Second {
		t.Fatalf("five turns at once left the next %v away, want about 4s", before)
	}
	if d := held(ctx, "uid:3000", refusal); d < 900*time.Millisecond || d > maxRefusalDelay+500*time.Millisecond {
		t.Errorf("a refusal whose turn is %v away was held %v, want the %v bound", before, d, maxRefusalDelay)
	}
	if after := cl.refusals.pending("uid:3000", time.Now()); after > before {
		t.Errorf("holding a refusal at the bound took a turn: the next went from %v to %v away", before, after)
	}
	if n := cl.Delayed(); n < 2 {
		t.Errorf("Delayed() = %d, want the held refusals counted", n)
	}
}

// TestWaitingRefusalsTakeNoPlaces: refusals waiting for their caller's
// turn have given back their places among the caller's calls in
// progress, so the caller's other calls (a driver's, when a hostile
// process shares its key) still run.
func TestWaitingRefusalsTakeNoPlaces(t *testing.T) {
	p, err := policy.Parse([]byte("rules:\n- {name: all, callers: [{any: true}], allow: [{methods: ['*']}]}\n"), policy.Options{Style: hostpath.POSIX})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.Policy = policy.Static(p)
	cfg.Limits.MaxCallsPerCaller = 2
	cfg.Limits.RefusalBurstPerCaller = 1
	// Turns 100 ms apart: the three refusals below wait 100 to 300 ms,
	// and the caller stays under a second behind (awaitStart holds the
	// calls of one that is not).
	cfg.Limits.RefusalsPerCallerPerSecond = 10
	s := start(t, cfg, systemAPI(newFakeSystem()))
	c := systemv1alpha1.NewSystemClient(dial(t, s.Endpoints()[0].Address))
	refuse := func() error {
		_, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "invalid"})
		return err
	}
	if err := refuse(); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a refused call: %v, want InvalidArgument", err)
	}
	done := make(chan error, 3)
	for range 3 {
		go func() { done <- refuse() }()
	}
	// The three are past the burst: they wait for their turns.
	deadline := time.Now().Add(5 * time.Second)
	for s.calls.Delayed() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "ok"}); err != nil {
		t.Errorf("a call while the caller's refusals wait for their turn: %v", err)
	}
	for range 3 {
		// Three at once against a bound of two: one may find both places
		// taken by the other two, still running, and be refused for that
		// (paced all the same).
		if err := <-done; status.Code(err) != codes.InvalidArgument && status.Code(err) != codes.ResourceExhausted {
			t.Errorf("a paced refusal: %v, want InvalidArgument (or ResourceExhausted)", err)
		}
	}
}

// TestAbandonedCallsPaced: a caller that does not wait for its answers
// (a deadline of 20 ms, under every paced wait) still gets only its pace
// of calls decided: once it is a whole second behind, its calls are held
// before they run and end with their deadline. Pacing only the answers,
// every one of them was decoded, decided and audited, and the wait ended
// with the call (8 loops got 3,000 a second).
func TestAbandonedCallsPaced(t *testing.T) {
	var records syncbuf.Buffer
	cfg := testConfig(t)
	cfg.Policy = denyAll(t)
	cfg.Audit = audit.New(&records, audit.Options{DenialBurst: -1}) // a record for every denial: the calls decided
	cfg.Limits.RefusalBurstPerCaller = 2
	cfg.Limits.RefusalsPerCallerPerSecond = 2
	s := start(t, cfg, systemAPI(newFakeSystem()))
	c := systemv1alpha1.NewSystemClient(dial(t, s.Endpoints()[0].Address))
	calls := 0
	for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); calls++ {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, err := c.GetService(ctx, &systemv1alpha1.GetServiceRequest{Name: "ok"})
		cancel()
		if code := status.Code(err); code != codes.PermissionDenied && code != codes.DeadlineExceeded {
			t.Fatalf("call %d: %v, want PermissionDenied or DeadlineExceeded", calls, err)
		}
	}
	decided := strings.Count(records.String(), `"decision":"deny"`)
	// The burst of 2, the turns within a second of it (2), and 2 a second
	// for the 1.5 s: 7, give or take a turn.
	t.Logf("%d calls of 20 ms, %d decided", calls, decided)
	if calls < 20 {
		t.Fatalf("only %d calls in 1.5 s", calls)
	}
	if decided > 10 {
		t.Errorf("%d of %d abandoned calls were decided, want the pace's 7 or so", decided, calls)
	}
}
