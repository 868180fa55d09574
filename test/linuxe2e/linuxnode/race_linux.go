//go:build linux && race

package linuxnode

// raceEnabled: the tests run with -race, so the daemon is built with it too.
const raceEnabled = true
