//go:build race

package daemonbin

// Race tells that this test binary runs with the race detector, so
// BinaryRace builds the daemon with it too.
const Race = true
