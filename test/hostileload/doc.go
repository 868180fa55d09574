// Package hostileload is the hostile-load suite (issue 23): the daemon
// binary, a separate process on the simulated host, in a memory cgroup at
// the shipped limit (512 MiB), serves a well-behaved driver doing its
// stage/publish/unpublish/unstage flow while a caller no rule admits (a
// process of its own, as another Unix user) floods it: HTTP/2 streams
// that declare large requests and send only part of them, thousands of
// connections, requests near the size bound that the policy denies,
// requests over it, and a storm of small denied calls. The audit log is on
// a small tmpfs the test mounts.
//
// It asserts that the daemon lives, that every call of the driver
// succeeds, and every call on a new connection opened meanwhile (one
// every 50 ms, as a starting driver's), that the driver's p99 latency
// under the flood stays under 250 ms, and that every change the driver made has its audit records
// (intent and outcome) and none failed closed. It reports whether that
// p99 is within 3x of its p99 with the flooder stopped, the goal (SIGSTOP;
// the two alternate in 250 ms slices, so the machine's other load falls
// on both alike), and it prints the figures docs/security.md quotes: the memory peak against the limit,
// the driver's p50/p99 with the flood and without it, the audit bytes per
// denied call and the denial records suppressed.
//
// Linux and root only (a cgroup, a tmpfs, a second user); skipped
// otherwise. make test runs it (make hostile-load), in about a minute.
package hostileload
