// Package simtest is the setup the groups' simulated-node tests share: a
// simulated Windows node (package host/simulated), the path policy of its
// working directories, and the two checks every such test makes. Each
// group's _sim_test.go started with its own copy of these lines; one copy
// keeps the groups' tests building their nodes alike.
//
// The groups' external tests (package <group>_test) import it, and so do
// the other tests that serve groups on a simulated node of their own (the
// CLI's, the Windows storage backend's parity test). It sits with the other test helpers rather than under groups/, because it
// imports host/simulated, a backend, which imports the groups: under
// groups/ it would be a package of the group layer importing up, and here
// it is a tool, which may import what it tests and which no layer links.
package simtest

import (
	"errors"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// Node returns a simulated node built from cfg (simulated.DefaultConfig,
// perhaps with targets or shares added), failing t at once if it does not
// build: no test of a group can go on without its node.
func Node(t testing.TB, cfg simulated.Config) *simulated.Host {
	t.Helper()
	h, err := simulated.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Paths returns the Windows path policy of h's working directories, so a
// test's Service confines paths as it does on a simulated node the daemon
// serves.
func Paths(t testing.TB, h *simulated.Host) *hostpath.Policy {
	t.Helper()
	paths, err := hostpath.NewPolicy(hostpath.Windows, h.WorkingDirs())
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// Volume returns h's record of volume id (IDs compare without case, as
// on Windows), failing t at once when h has no such volume.
func Volume(t testing.TB, h *simulated.Host, id string) simulated.VolumeInfo {
	t.Helper()
	for _, v := range h.ListVolumes() {
		if strings.EqualFold(v.ID, id) {
			return v
		}
	}
	t.Fatalf("the simulated host has no volume %s", id)
	return simulated.VolumeInfo{}
}

// Must fails t at once on a non-nil err: a step the rest of the test
// builds on.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// WantKind fails t at once unless err wraps kind, the errdefs sentinel the
// step must answer with.
func WantKind(t testing.TB, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error = %v; want one wrapping %q", err, kind)
	}
}
