// Package soak is the load and fault suite: the daemon binary on the
// simulated host, driven over its unix sockets by concurrent clients with
// an audit log on, under connection churn, cancelled and abandoned calls,
// SIGTERM under load, and a broken audit log (/dev/full, a full tmpfs, a
// removed file whose path cannot be opened); --audit-sync (and library
// mode's AuditSync) seen reaching the disk; and, as root, the daemon on
// --host=linux killed with SIGKILL at moments of a block volume's flow on
// real loop disks (intent written, mkfs or e2fsck running, mounted or
// unmounted and not yet answered), restarted, and the flow run again
// (TestKillRecovery; figures of what each kill left in its log).
//
// What it checks is exact: no unexpected error, every change audited
// exactly once (an intent and an outcome under one ID), no change made
// while its record cannot be written, every call answered OK or
// Unavailable across SIGTERM with none half-done, and the daemon's
// goroutines and file descriptors back to their baseline (threads not
// growing from one round to the next). Latency (p50/p99) and calls/s are
// reported with t.Logf as figures, never as pass/fail timing.
//
// `go test ./test/soak/` runs a bounded form fit for CI (make test); these
// environment variables make it longer (make soak):
//
//	SOAK_DURATION  how long each load round runs (default 4s), e.g. 5m
//	SOAK_CLIENTS   concurrent clients (default 16)
//	SOAK_CHURN     connections opened and closed (default 300)
//
// Linux only (unix sockets, /proc, /dev/full); the tmpfs case, the audit
// sync test (a loop disk of its own) and the kill suite need root and
// skip without it.
package soak
