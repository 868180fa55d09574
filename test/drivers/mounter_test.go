package drivers_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
	"github.com/csi-node-proxy/csi-node-proxy/test/drivers/flows"
	"github.com/csi-node-proxy/csi-node-proxy/test/drivers/flows/viamounter"
)

// The five drivers' node flows through the shared mounter (client/mounter),
// in the modes a driver runs it in: library mode and over the wire with
// our client (upstream's stubs test the wire contract itself, in
// upstreamwire). The Linux backend's run is in linux_test.go.

// TestMain removes the daemon binary the tests built once (daemonbin).
func TestMain(m *testing.M) { os.Exit(daemonbin.Main(m)) }

// windowsEnvs are the simulated Windows node's environments: the kubelet
// directory spelled with a drive letter and without one (EKS).
func windowsEnvs() []flows.Env {
	return []flows.Env{
		{Name: "C-drive", KubeletDir: kubeletDir, Windows: true, Drive: "C:"},
		{Name: "no-drive", KubeletDir: `\var\lib\kubelet`, Windows: true, Drive: "C:"},
	}
}

// newFlowsMounter is the shared mounter as the flows call it.
var newFlowsMounter flows.NewMounter = viamounter.New

// TestLibraryModeMounter runs the flows through the mounter over library
// mode (inprocess.New) on the simulated host.
func TestLibraryModeMounter(t *testing.T) {
	envs := windowsEnvs()
	n := librarySim(t, flows.NewMounterPlan(envs...).Fixture(), envs)
	flows.NewMounterPlan(envs...).Run(t, n, newFlowsMounter, nil)
}

// TestWireMounter runs the flows through the mounter over client.Dial
// against the daemon (built from cmd, daemonbin) on the simulated host.
// The kubelet's own MkdirAll goes over the proxy's Mkdir (MkdirAll
// semantics): the simulated host lives in the daemon's process.
func TestWireMounter(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the daemon serves unix sockets here; on Windows the client dials named pipes")
	}
	plan := flows.NewMounterPlan(windowsEnvs()...)
	cfg := simConfig(plan.Fixture())
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	simFile := filepath.Join(t.TempDir(), "sim.json")
	if err := os.WriteFile(simFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := sockdir.New(t, "mflows") // not t.TempDir: a socket path must fit in 108 bytes
	groupNames := []string{"disk", "volume", "filesystem", "smb"}
	var socks []string
	for _, ep := range []string{"disk-v1", "volume-v1", "filesystem-v1", "smb-v1"} {
		socks = append(socks, filepath.Join(dir, "csi-proxy-"+ep+".sock"))
	}
	daemonbin.Start(t, daemonbin.Binary(t), daemonbin.Options{
		Args:  []string{"--host=simulated", "--socket-dir=" + dir, "--sim-config=" + simFile},
		Ready: daemonbin.SocketsAccept(socks...),
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, client.Options{SocketDir: dir, Groups: groupNames})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	plan.Run(t, c, newFlowsMounter, nil)
}
