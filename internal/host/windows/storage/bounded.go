package storage

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// wmiLimits bound WMI calls made without a deadline (drivers call the
// proxy with context.Background(), and kubelet retries): long enough for
// any call a healthy provider makes, so that only a hung provider meets
// them.
type wmiLimits struct {
	// format bounds MSFT_Volume.Format, which legitimately takes minutes
	// on large volumes (azuredisk-csi-driver#2690).
	format time.Duration
	// method bounds every other method (Initialize, CreatePartition,
	// Resize, Online, UpdateHostStorageCache, …).
	method time.Duration
	// query bounds a WQL query.
	query time.Duration
}

var defaultWMILimits = wmiLimits{
	format: 30 * time.Minute,
	method: 5 * time.Minute,
	query:  2 * time.Minute,
}

// boundedSystem puts a deadline on every WMI operation of the system
// seam. A WMI call cannot be cancelled once started (the provider runs it
// to completion whatever the caller does), so a hung provider used to hold
// the group Service's per-disk or per-volume lock forever and every
// kubelet retry queued behind it (issue 11 item 11).
//
// Each operation runs on its own goroutine; the caller waits until it
// ends, its context ends (its error is returned: DeadlineExceeded or
// Canceled), or, when the context has no deadline, the limit for the
// operation passes (errdefs.ErrUnavailable). The caller then returns,
// which releases its locks, and the operation is abandoned, not stopped:
// an abandoned Format may still be formatting. So the object it acted on
// (the instance its query selects, or the class of a static method) is
// remembered until the abandoned operation ends, and any WMI operation on
// that object meanwhile is refused with errdefs.ErrUnavailable "still
// running": a retry can never start a second Format of the same volume,
// and a hung provider holds at most one goroutine per object.
type boundedSystem struct {
	system
	limits wmiLimits

	mu sync.Mutex
	// abandoned maps an object key to the abandoned operation on it.
	abandoned map[string]*wmiOp
}

// wmiOp is one WMI operation in flight.
type wmiOp struct {
	what  string // "MSFT_Volume.Format", for messages
	since time.Time
	// finished is set, under boundedSystem.mu, when the operation
	// returns, so that it is never recorded as abandoned after the fact.
	finished bool
}

func newBoundedSystem(sys system) *boundedSystem {
	return &boundedSystem{system: sys, limits: defaultWMILimits, abandoned: map[string]*wmiOp{}}
}

func (s *boundedSystem) query(ctx context.Context, q *wmi.WQL) ([]wmi.Props, error) {
	return bounded(ctx, s, q.String(), "query of "+q.Class(), s.limits.query, func(ctx context.Context) ([]wmi.Props, error) {
		return s.system.query(ctx, q)
	})
}

func (s *boundedSystem) call(ctx context.Context, q *wmi.WQL, method string, in ...wmi.Param) (wmi.Props, error) {
	limit := s.limits.method
	if q.Class() == classVolume && method == "Format" {
		limit = s.limits.format
	}
	return bounded(ctx, s, q.String(), q.Class()+"."+method, limit, func(ctx context.Context) (wmi.Props, error) {
		return s.system.call(ctx, q, method, in...)
	})
}

func (s *boundedSystem) callStatic(ctx context.Context, class, method string, in ...wmi.Param) (wmi.Props, error) {
	return bounded(ctx, s, class+"."+method, class+"."+method, s.limits.method, func(ctx context.Context) (wmi.Props, error) {
		return s.system.callStatic(ctx, class, method, in...)
	})
}

// bounded runs fn on the object key as boundedSystem describes.
func bounded[T any](ctx context.Context, s *boundedSystem, key, what string, limit time.Duration, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	s.mu.Lock()
	if prev, ok := s.abandoned[key]; ok {
		s.mu.Unlock()
		return zero, errdefs.Errorf(errdefs.ErrUnavailable, "%s on %s: an earlier %s on it, abandoned %s ago when its caller stopped waiting, is still running inside WMI; retry later",
			what, key, prev.what, time.Since(prev.since).Round(time.Second))
	}
	s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	type result struct {
		v   T
		err error
	}
	op := &wmiOp{what: what, since: time.Now()}
	done := make(chan result, 1)
	go func() {
		v, err := fn(ctx)
		s.mu.Lock()
		op.finished = true
		if s.abandoned[key] == op {
			delete(s.abandoned, key)
		}
		s.mu.Unlock()
		done <- result{v, err}
	}()
	var expired <-chan time.Time
	if _, ok := ctx.Deadline(); !ok {
		timer := time.NewTimer(limit)
		defer timer.Stop()
		expired = timer.C
	}
	var err error
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		err = fmt.Errorf("%s on %s: %w; the call was abandoned and may still be running inside WMI", what, key, ctx.Err())
	case <-expired:
		err = errdefs.Errorf(errdefs.ErrUnavailable, "%s on %s did not answer within %v; the WMI provider may be hung, and the call was abandoned (it may still be running)", what, key, limit)
	}
	s.mu.Lock()
	if !op.finished {
		s.abandoned[key] = op
	}
	s.mu.Unlock()
	return zero, err
}
