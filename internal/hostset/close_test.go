package hostset

import (
	"errors"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
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

// TestClose: Set.Close closes the backend its Closer names once, even
// when it serves several groups, and reports its failure; a group
// backend wrapped later (as the daemon's metrics do) does not hide it;
// a Set without a Closer holds nothing.
func TestClose(t *testing.T) {
	blocks := &closingBackend{err: errors.New("busy")}
	s := Set{Disk: blocks, Volume: blocks, Closer: blocks}
	s.Disk = struct{ disk.Host }{s.Disk} // a decorator with no Close
	if err := s.Close(); err == nil || err.Error() != "busy" {
		t.Errorf("Close = %v, want the block backend's error", err)
	}
	if blocks.closes != 1 {
		t.Errorf("block backend closed %d times; want 1", blocks.closes)
	}
	if err := (Set{}).Close(); err != nil {
		t.Errorf("Close of an empty Set: %v", err)
	}

	// The simulated host holds nothing.
	sim, err := New(Config{Host: Simulated, WorkingDirs: []string{`C:\var\lib\kubelet`}})
	if err != nil {
		t.Fatal(err)
	}
	if sim.Closer != nil {
		t.Errorf("the simulated host names a Closer %T; it holds nothing", sim.Closer)
	}
	if err := sim.Close(); err != nil {
		t.Errorf("Close of the simulated host: %v", err)
	}
}
