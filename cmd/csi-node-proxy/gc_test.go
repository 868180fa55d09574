package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// keepGC restores the collector's settings after a test that changes them.
func keepGC(t *testing.T) {
	percent := debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
}

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestTuneGCSetsTargetAndLimitWhenTheEnvironmentDoesNot(t *testing.T) {
	keepGC(t)
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	got := tuneGC(env(nil), func() (int64, bool) { return 512 << 20, true })
	if got.Percent != defaultGCPercent || got.PercentFrom != "default" {
		t.Errorf("GC percent %d from %s, want %d from default", got.Percent, got.PercentFrom, defaultGCPercent)
	}
	if now := debug.SetGCPercent(100); now != defaultGCPercent {
		t.Errorf("the runtime's GC percent is %d, want %d", now, defaultGCPercent)
	}
	if want := int64(384 << 20); got.MemoryLimit != want || got.MemoryLimitFrom != "cgroup" || debug.SetMemoryLimit(-1) != want {
		t.Errorf("memory limit %d from %s (runtime: %d), want %d from cgroup", got.MemoryLimit, got.MemoryLimitFrom, debug.SetMemoryLimit(-1), want)
	}
}

func TestTuneGCLeavesWhatTheEnvironmentChose(t *testing.T) {
	keepGC(t)
	// As the runtime would have read GOGC=150 GOMEMLIMIT=1GiB at start.
	debug.SetGCPercent(150)
	debug.SetMemoryLimit(1 << 30)
	got := tuneGC(env(map[string]string{"GOGC": "150", "GOMEMLIMIT": "1GiB"}), func() (int64, bool) { return 512 << 20, true })
	if got.Percent != 150 || got.PercentFrom != "GOGC" {
		t.Errorf("GC percent %d from %s, want 150 from GOGC", got.Percent, got.PercentFrom)
	}
	if now := debug.SetGCPercent(100); now != 150 {
		t.Errorf("the runtime's GC percent became %d, want GOGC's 150", now)
	}
	if got.MemoryLimit != 1<<30 || got.MemoryLimitFrom != "GOMEMLIMIT" || debug.SetMemoryLimit(-1) != 1<<30 {
		t.Errorf("memory limit %d from %s (runtime: %d), want GOMEMLIMIT's 1 GiB", got.MemoryLimit, got.MemoryLimitFrom, debug.SetMemoryLimit(-1))
	}
}

func TestTuneGCWithoutAnyLimit(t *testing.T) {
	keepGC(t)
	debug.SetMemoryLimit(math.MaxInt64)
	got := tuneGC(env(nil), func() (int64, bool) { return 0, false })
	if got.MemoryLimit != 0 || got.MemoryLimitFrom != "none" || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("memory limit %d from %s (runtime: %d), want none", got.MemoryLimit, got.MemoryLimitFrom, debug.SetMemoryLimit(-1))
	}
}
