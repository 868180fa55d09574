package systemd

import (
	"context"
	"fmt"
	"sync"
)

// FakeBus is an in-memory systemd for tests: units with states and
// dependencies, and jobs that finish at once. Starting a unit makes it
// active/running; stopping one makes it and, as systemd does, every
// running unit that requires it inactive/dead. It is exported so the
// layers above (the daemon's wiring, the system group's tests) can run the
// Linux backend without a bus. It is safe for concurrent use.
type FakeBus struct {
	mu    sync.Mutex
	units map[string]Unit
	// results holds, per "StartUnit foo.service", the result the next such
	// job ends with instead of "done" (the unit's state then stays put).
	results map[string]string
	err     error
	jobs    []string
}

var _ Bus = (*FakeBus)(nil)

// NewFakeBus returns a FakeBus that knows units.
func NewFakeBus(units ...Unit) *FakeBus {
	b := &FakeBus{units: map[string]Unit{}, results: map[string]string{}}
	for _, u := range units {
		b.SetUnit(u)
	}
	return b
}

// SetUnit adds or replaces a unit; an empty LoadState becomes "loaded".
func (b *FakeBus) SetUnit(u Unit) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if u.LoadState == "" {
		u.LoadState = "loaded"
	}
	b.units[u.Name] = u
}

// FailNextJob makes the next job of method ("StartUnit", "StopUnit") on
// unit end with result (e.g. "failed", "timeout") without changing the
// unit.
func (b *FakeBus) FailNextJob(method, unit, result string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.results[method+" "+unit] = result
}

// SetError makes every call fail with err (nil restores normal service),
// as an unreachable bus does.
func (b *FakeBus) SetError(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.err = err
}

// Jobs returns the jobs run so far, as "StartUnit foo.service replace".
func (b *FakeBus) Jobs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.jobs...)
}

// Unit implements Bus. An unknown unit is returned with LoadState
// "not-found", as systemd's LoadUnit does.
func (b *FakeBus) Unit(ctx context.Context, name string) (Unit, error) {
	if err := ctx.Err(); err != nil {
		return Unit{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return Unit{}, b.err
	}
	u, ok := b.units[name]
	if !ok {
		return Unit{Name: name, LoadState: "not-found", ActiveState: "inactive", SubState: "dead"}, nil
	}
	return u, nil
}

// RunJob implements Bus.
func (b *FakeBus) RunJob(ctx context.Context, method, name, mode string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return "", b.err
	}
	u, ok := b.units[name]
	if !ok || u.LoadState == "not-found" {
		return "", &BusError{Name: "org.freedesktop.systemd1.NoSuchUnit", Message: fmt.Sprintf("Unit %s not found.", name)}
	}
	if method != "StartUnit" && method != "StopUnit" {
		return "", &BusError{Name: "org.freedesktop.DBus.Error.UnknownMethod", Message: "unknown method " + method}
	}
	if u.LoadState == "masked" && method == "StartUnit" {
		return "", &BusError{Name: "org.freedesktop.systemd1.UnitMasked", Message: fmt.Sprintf("Unit %s is masked.", name)}
	}
	b.jobs = append(b.jobs, method+" "+name+" "+mode)
	key := method + " " + name
	if r, ok := b.results[key]; ok {
		delete(b.results, key)
		return r, nil
	}
	if method == "StartUnit" {
		u.ActiveState, u.SubState = "active", "running"
		b.units[name] = u
		return "done", nil
	}
	b.stop(name, map[string]bool{})
	return "done", nil
}

// stop stops name and, recursively, the units systemd stops with it.
func (b *FakeBus) stop(name string, seen map[string]bool) {
	if seen[name] {
		return
	}
	seen[name] = true
	u, ok := b.units[name]
	if !ok {
		return
	}
	u.ActiveState, u.SubState = "inactive", "dead"
	b.units[name] = u
	for _, list := range [][]string{u.RequiredBy, u.RequisiteOf, u.BoundBy, u.ConsistsOf} {
		for _, d := range list {
			b.stop(d, seen)
		}
	}
}
