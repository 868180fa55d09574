package hostset

import (
	"errors"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// The group Host interfaces under names of their own, to embed both.
type (
	diskHost   = disk.Host
	volumeHost = volume.Host
)

// closingBackend is a backend that holds something: it counts its Closes.
// It serves the disk and volume groups, as one Linux block backend does.
type closingBackend struct {
	diskHost
	volumeHost
	closes int
	err    error
}

func (b *closingBackend) Close() error {
	b.closes++
	return b.err
}

// closingValue is a backend with a Close on a type that is not
// comparable, so Close must not compare it.
type closingValue struct {
	system.Host
	closes []*int
}

func (v closingValue) Close() error {
	*v.closes[0]++
	return nil
}

// TestClose: Set.Close closes each backend that has a Close once, even
// when it serves several groups, goes on past a failure and reports it,
// and leaves the backends without one alone.
func TestClose(t *testing.T) {
	blocks := &closingBackend{err: errors.New("busy")}
	var sysCloses int
	s := Set{Disk: blocks, Volume: blocks, System: closingValue{closes: []*int{&sysCloses}}}
	if err := s.Close(); err == nil || err.Error() != "busy" {
		t.Errorf("Close = %v, want the block backend's error", err)
	}
	if blocks.closes != 1 || sysCloses != 1 {
		t.Errorf("block backend closed %d times, system backend %d times; want 1 and 1", blocks.closes, sysCloses)
	}
	if err := (Set{}).Close(); err != nil {
		t.Errorf("Close of an empty Set: %v", err)
	}

	// The simulated host holds nothing.
	sim, err := New(Config{Host: Simulated, WorkingDirs: []string{`C:\var\lib\kubelet`}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Close(); err != nil {
		t.Errorf("Close of the simulated host: %v", err)
	}
}
