//go:build race

package hostile

// raceEnabled tells that the test runs with the race detector, so the
// daemon under test is built with it too.
const raceEnabled = true
