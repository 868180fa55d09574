package server

import (
	"os"
	"runtime"
	"slices"
	"testing"
)

// TestProcBudgetOnePerStorm: each storm acceptor running adds one to
// GOMAXPROCS, counted from the value before the first, and the last to
// end gives the runtime back its own setting, once; a release with none
// running changes nothing.
func TestProcBudgetOnePerStorm(t *testing.T) {
	current := 2
	var sets []int
	var restored []int
	b := procBudget{
		set: func(n int) int {
			old := current
			if n > 0 {
				current = n
				sets = append(sets, n)
			}
			return old
		},
		restore: func(base int) { restored = append(restored, base); current = base },
	}
	b.add()
	b.add()
	if current != 4 {
		t.Errorf("GOMAXPROCS with two storm acceptors from 2: %d, want 4", current)
	}
	b.release()
	if current != 3 || len(restored) != 0 {
		t.Errorf("after one of two ended: GOMAXPROCS %d, restored %v; want 3, none", current, restored)
	}
	b.release()
	if !slices.Equal(restored, []int{2}) {
		t.Errorf("after the last ended: restored %v, want [2]", restored)
	}
	b.release() // none running
	if !slices.Equal(sets, []int{3, 4, 3}) || len(restored) != 1 {
		t.Errorf("GOMAXPROCS set to %v and restored %v; want [3 4 3] and one restore", sets, restored)
	}
	// A later storm counts from the value then.
	current = 6
	b.add()
	if current != 7 {
		t.Errorf("a storm from 6: GOMAXPROCS %d, want 7", current)
	}
}

// TestProcBudgetAtMostDoubles: storms on more endpoints than the runtime
// had Ps add no more than that many: a caller refused on two dozen
// endpoints at once must not have GOMAXPROCS at 26 on two cores. The
// storms beyond share the extra Ps; as they end, the count comes down
// through the same values.
func TestProcBudgetAtMostDoubles(t *testing.T) {
	current := 2
	var seen []int
	b := procBudget{
		set: func(n int) int {
			old := current
			if n > 0 {
				current = n
			}
			return old
		},
		restore: func(base int) { current = base },
	}
	for range 24 {
		b.add()
		seen = append(seen, current)
	}
	if want := append([]int{3}, slices.Repeat([]int{4}, 23)...); !slices.Equal(seen, want) {
		t.Errorf("GOMAXPROCS as 24 storms start from 2: %v, want %v", seen, want)
	}
	seen = seen[:0]
	for range 24 {
		b.release()
		seen = append(seen, current)
	}
	if want := append(slices.Repeat([]int{4}, 22), 3, 2); !slices.Equal(seen, want) {
		t.Errorf("GOMAXPROCS as the 24 storms end: %v, want %v", seen, want)
	}
}

// TestRestoreGOMAXPROCS: with the GOMAXPROCS environment variable set
// (which the runtime read at start and keeps), the value before the storm
// comes back; without it, the runtime's default does.
func TestRestoreGOMAXPROCS(t *testing.T) {
	orig := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { restoreGOMAXPROCS(orig) })
	t.Setenv("GOMAXPROCS", "") // set, if empty: as a manifest naming it
	runtime.GOMAXPROCS(orig + 3)
	restoreGOMAXPROCS(orig + 1)
	if got := runtime.GOMAXPROCS(0); got != orig+1 {
		t.Errorf("with GOMAXPROCS in the environment: %d after restore, want the value before the storm, %d", got, orig+1)
	}
}

// TestRestoreGOMAXPROCSDefault: without the environment variable the
// runtime's default comes back (go test sets none; the test binary
// started at that default).
func TestRestoreGOMAXPROCSDefault(t *testing.T) {
	if _, set := os.LookupEnv("GOMAXPROCS"); set {
		t.Skip("this test process was started with GOMAXPROCS set: its default is not known here")
	}
	orig := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(orig + 3)
	restoreGOMAXPROCS(orig + 1) // not this value: the default
	if got := runtime.GOMAXPROCS(0); got != orig {
		t.Errorf("without GOMAXPROCS in the environment: %d after restore, want the runtime's default, %d", got, orig)
	}
}
