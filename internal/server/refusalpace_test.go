package server

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	systemv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/system/v1alpha1"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
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
// pace (issue 23) a caller with no rights got 20,000 refusals a second
// from eight loops, the node's CPU spent on answering it.
func TestRefusalsPaced(t *testing.T) {
	cfg := testConfig(t)
	cfg.Policy = denyAll(t)
	cfg.Limits.RefusalBurstPerCaller = 3
	cfg.Limits.RefusalsPerCallerPerSecond = 4 // one turn each 250 ms
	s := start(t, cfg, systemAPI(newFakeSystem()))
	c := systemv1alpha1.NewSystemClient(dial(t, s.Endpoints()[0].Address))
	call := func() {
		t.Helper()
		if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "ok"}); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("a call no rule allows: %v, want PermissionDenied", err)
		}
	}
	for range 3 {
		call()
	}
	if n := s.calls.Delayed(); n != 0 {
		t.Fatalf("%d of the burst's 3 refusals were delayed", n)
	}
	begin := time.Now()
	for range 3 {
		call()
	}
	// Three turns 250 ms apart after the burst: at least 500 ms (the
	// first may come early, as much as the burst took).
	if d := time.Since(begin); d < 500*time.Millisecond {
		t.Errorf("three refusals past the burst took %v, want at least 500ms at 4 a second", d)
	}
	if n := s.calls.Delayed(); n < 2 {
		t.Errorf("%d refusals delayed, want at least 2 of the 3 past the burst", n)
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
	// A turn further off than maxRefusalDelay: held the bound, no more.
	for range 3 {
		if d := held(ctx, "uid:3000", refusal); d > maxRefusalDelay+500*time.Millisecond {
			t.Errorf("a refusal was held %v, over the %v bound", d, maxRefusalDelay)
		}
	}
	if n := cl.Delayed(); n < 3 {
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
	cfg.Limits.RefusalsPerCallerPerSecond = 1
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
	// The three are past the burst: they wait about a second each.
	deadline := time.Now().Add(5 * time.Second)
	for s.calls.Delayed() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "ok"}); err != nil {
		t.Errorf("a call while the caller's refusals wait for their turn: %v", err)
	}
	for range 3 {
		if err := <-done; status.Code(err) != codes.InvalidArgument {
			t.Errorf("a paced refusal: %v, want InvalidArgument", err)
		}
	}
}
