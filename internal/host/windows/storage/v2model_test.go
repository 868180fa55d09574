package storage

import (
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	groupsystem "github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
)

// ModelNode is, for the external test of the drivers on upstream's v2
// library (v2flows_test.go, package storage_test: the upstreamv2 tree
// imports library mode, which imports this package), the group Services
// over the real backend on winModel as a node, built from cfg, with the
// hypervisor's two actions on it: grow a disk, set its read-only
// attribute. vSphere's NodeGetInfo needs the system group, which has no
// model on this seam (internal/host/windows/services has its own), so the
// simulated host of the same cfg answers it. The Services run without
// library mode's gate here; the gate is tested on the simulated host
// (test/drivers/v2mounters).
func ModelNode(t *testing.T, cfg simulated.Config) (n groups.Node, grow func(uint32, int64) error, setReadOnly func(uint32) error) {
	t.Helper()
	s := newModelStack(t, cfg)
	sim, err := simulated.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := s.Model
	grow = func(d uint32, size int64) error {
		m.resizeDisk(d, size)
		return nil
	}
	setReadOnly = func(d uint32) error {
		m.mu.Lock()
		defer m.mu.Unlock()
		md := m.disks[d]
		if md == nil {
			return errdefs.Errorf(errdefs.ErrNotFound, "no disk %d", d)
		}
		md.readOnly = true
		return nil
	}
	return v2ModelNode{flowsNode{s}, groupsystem.NewService(sim.System(), nil)}, grow, setReadOnly
}

// v2ModelNode is the model stack as a node, with the simulated host's
// system group.
type v2ModelNode struct {
	flowsNode
	system groupsystem.Interface
}

func (n v2ModelNode) System() groupsystem.Interface { return n.system }
