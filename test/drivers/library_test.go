package drivers_test

import (
	"context"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
	"github.com/csi-node-proxy/csi-node-proxy/test/drivers/flows"
)

// kubeletDir is the simulated node's kubelet directory.
const kubeletDir = `C:\var\lib\kubelet`

// simKubelet does the kubelet's own MkdirAll on the simulated host
// directly, as the kubelet does on a node without csi-proxy.
type simKubelet struct{ h *simulated.Host }

func (k simKubelet) MkdirAll(_ context.Context, path string) error { return k.h.MkdirAll(path) }

// simConfig turns the flows' fixture into the simulated host's world.
func simConfig(f flows.Fixture) simulated.Config {
	cfg := simulated.Config{WorkingDirs: []string{kubeletDir}, BIOSSerial: f.BIOSSerial}
	for _, d := range f.Disks {
		cfg.Disks = append(cfg.Disks, simulated.DiskSpec{
			Number: &d.Number, Size: simulated.Size(d.Size), Location: d.Location,
			Page83: d.Page83, Serial: d.Serial, Offline: d.Offline,
		})
	}
	for _, s := range f.Shares {
		cfg.SMBShares = append(cfg.SMBShares, simulated.SMBShare{Path: s.Path, Username: s.Username, Password: s.Password, Dirs: s.Dirs})
	}
	return cfg
}

// TestLibraryMode runs the five drivers' Windows node flows in library
// mode (inprocess.New) on the simulated host, with the kubelet directory
// spelled with a drive letter and without one (EKS).
func TestLibraryMode(t *testing.T) {
	envs := windowsEnvs()
	n := librarySim(t, flows.NewPlan(envs...).Fixture(), envs)
	plan := flows.NewPlan(envs...)
	plan.Run(t, flows.ProxyOf(n))
}

// librarySim starts library mode (inprocess.New) on the simulated host
// holding world, and gives every env the kubelet of that host.
func librarySim(t *testing.T, world flows.Fixture, envs []flows.Env) *inprocess.Node {
	t.Helper()
	cfg := simConfig(world)
	n, err := inprocess.New(t.Context(), inprocess.Options{Host: inprocess.HostSimulated, Simulated: &cfg, KubeletPath: kubeletDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	for i := range envs {
		envs[i].Kubelet = simKubelet{n.Simulated()}
	}
	return n
}
