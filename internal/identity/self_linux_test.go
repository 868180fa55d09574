//go:build linux

package identity

import (
	"os"
	"slices"
	"testing"
)

// TestSelf: the process's own identity is what the kernel says about it,
// and complete on a Linux /proc.
func TestSelf(t *testing.T) {
	c := Self()
	if c.PID != os.Getpid() || !c.HasUnixIDs || c.UID != uint32(os.Geteuid()) || c.GID != uint32(os.Getegid()) {
		t.Errorf("Self() = %+v; pid %d euid %d egid %d", c, os.Getpid(), os.Geteuid(), os.Getegid())
	}
	if c.Incomplete != "" {
		t.Errorf("incomplete: %s", c.Incomplete)
	}
	groups, err := os.Getgroups()
	if err != nil {
		t.Fatal(err)
	}
	var want []uint32
	for _, g := range groups {
		want = append(want, uint32(g))
	}
	got := slices.Clone(c.Groups)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("groups %v, want %v", got, want)
	}
	// A /proc without this process makes the identity incomplete rather
	// than wrong.
	if c := self(Options{ProcRoot: t.TempDir()}); c.Incomplete == "" || c.Groups != nil || c.UID != uint32(os.Geteuid()) {
		t.Errorf("without /proc: %+v", c)
	}
}
