//go:build linux && !race

package linuxnode

// raceEnabled: the tests run without -race.
const raceEnabled = false
