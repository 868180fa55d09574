package main

import "runtime/debug"

// defaultGCPercent is the collector's target (GOGC) when the environment
// sets none. The daemon's live heap is small (a few MiB: connections,
// policy, host snapshots) and every call allocates a few KiB that die with
// it, so at Go's default of 100 the collector ran every few MiB of calls:
// 12% of the daemon's CPU under one busy driver (separate-process
// benchmark, 16 calls on one connection, shipped configuration), and the
// reason that figure sat at 0.88-0.92 of a bare gRPC server. At 300 the
// heap may grow to four times the live data before a collection (tens of
// MiB under the hostile-load suite's flood, against the 512 MiB the
// manifests and the unit allow), and the soft memory limit below makes the
// collector work harder long before the container's limit.
const defaultGCPercent = 300

// memoryLimitShare is the part of the daemon's own memory limit (its
// cgroup's, on Linux) given to the Go runtime as its soft limit
// (GOMEMLIMIT) when the environment sets none: the rest is for what the
// runtime does not count (thread stacks outside the heap, the binary's
// pages, page cache charged to the cgroup).
const memoryLimitShare = 0.75

// gcSettings says how the collector was set, for the start-up log line.
type gcSettings struct {
	// Percent is the GOGC in force and PercentFrom where it came from
	// ("GOGC" or "default").
	Percent     int
	PercentFrom string
	// MemoryLimit is the soft limit set from the cgroup, 0 for none;
	// MemoryLimitFrom says where it came from ("GOMEMLIMIT", "cgroup" or
	// "none").
	MemoryLimit     int64
	MemoryLimitFrom string
}

// tuneGC sets the collector's target and soft memory limit unless the
// environment (lookupEnv) chose them: GOGC and GOMEMLIMIT are read by the
// runtime itself at start and always win. limit returns the daemon's own
// memory limit, if it has one (cgroupMemoryLimit).
func tuneGC(lookupEnv func(string) (string, bool), limit func() (int64, bool)) gcSettings {
	s := gcSettings{Percent: defaultGCPercent, PercentFrom: "default", MemoryLimitFrom: "none"}
	if _, ok := lookupEnv("GOGC"); ok {
		// As the runtime read it (an unusable GOGC is 100, "off" -1):
		// the setter returns the value it replaces.
		s.Percent, s.PercentFrom = debug.SetGCPercent(100), "GOGC"
		debug.SetGCPercent(s.Percent)
	} else {
		debug.SetGCPercent(defaultGCPercent)
	}
	if _, ok := lookupEnv("GOMEMLIMIT"); ok {
		s.MemoryLimitFrom = "GOMEMLIMIT"
		s.MemoryLimit = debug.SetMemoryLimit(-1) // reads it without changing it
		return s
	}
	if l, ok := limit(); ok {
		s.MemoryLimit = int64(float64(l) * memoryLimitShare)
		s.MemoryLimitFrom = "cgroup"
		debug.SetMemoryLimit(s.MemoryLimit)
	}
	return s
}
