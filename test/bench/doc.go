// Package bench holds the benchmarks behind docs/benchmarks.md. Each one
// measures the proxy against a baseline run in the same process, so the
// figure that matters is a ratio, not an absolute time on one machine.
package bench
