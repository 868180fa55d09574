// Package bench holds the benchmarks behind docs/benchmarks.md. Each one
// measures the proxy against a baseline measured in the same run,
// interleaved with it (in this process, or, for the separate-process
// benchmarks, the daemon and a bare server each in a process of its own),
// so the figure that matters is a ratio, not an absolute time on one
// machine.
package bench
