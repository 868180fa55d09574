package upstreamwire

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	diskv1 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1"
	fsv1 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v1"
	smbv1 "github.com/kubernetes-csi/csi-proxy/client/api/smb/v1"
	systemv1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/system/v1alpha1"
	volumev1 "github.com/kubernetes-csi/csi-proxy/client/api/volume/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
	"github.com/csi-node-proxy/csi-node-proxy/test/drivers/flows"
)

const (
	// kubeletDir is the daemon's kubelet directory (its default).
	kubeletDir = `C:\var\lib\kubelet`
	// readyTimeout bounds the daemon's start; stopTimeout its exit.
	readyTimeout = 15 * time.Second
	stopTimeout  = 15 * time.Second
)

// endpoints are the group-versions the drivers' v1 clients use.
var endpoints = []string{"disk-v1", "volume-v1", "filesystem-v1", "smb-v1", "system-v1alpha1"}

// simConfig writes the flows' fixture as the daemon's --sim-config JSON
// (host/simulated's documented format).
func simConfig(t *testing.T, f flows.Fixture) string {
	t.Helper()
	type diskJSON struct {
		Number   uint32 `json:"number"`
		Size     int64  `json:"size"`
		Location string `json:"location"`
		Page83   string `json:"page83,omitempty"`
		Serial   string `json:"serial,omitempty"`
		Offline  bool   `json:"offline,omitempty"`
	}
	type shareJSON struct {
		Path     string   `json:"path"`
		Username string   `json:"username"`
		Password string   `json:"password"`
		Dirs     []string `json:"dirs"`
	}
	cfg := struct {
		WorkingDirs []string    `json:"workingDirs"`
		BIOSSerial  string      `json:"biosSerial"`
		Disks       []diskJSON  `json:"disks"`
		SMBShares   []shareJSON `json:"smbShares"`
	}{WorkingDirs: []string{kubeletDir}, BIOSSerial: f.BIOSSerial}
	for _, d := range f.Disks {
		cfg.Disks = append(cfg.Disks, diskJSON{d.Number, d.Size, d.Location, d.Page83, d.Serial, d.Offline})
	}
	for _, s := range f.Shares {
		cfg.SMBShares = append(cfg.SMBShares, shareJSON{s.Path, s.Username, s.Password, s.Dirs})
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sim.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startDaemon starts the daemon (built once from the cmd module,
// daemonbin) on the simulated host described by the config file; it is
// stopped (SIGTERM, checked clean exit) when the test ends, failed or not.
func startDaemon(t *testing.T, simConfigFile string) map[string]*grpc.ClientConn {
	t.Helper()
	bin := daemonbin.Binary(t)
	dir := sockdir.New(t, "dflows")
	var socks []string
	for _, ep := range endpoints {
		socks = append(socks, filepath.Join(dir, "csi-proxy-"+ep+".sock"))
	}
	daemonbin.Start(t, bin, daemonbin.Options{
		Args:         []string{"--host=simulated", "--socket-dir=" + dir, "--sim-config=" + simConfigFile},
		Ready:        daemonbin.SocketsAccept(socks...),
		ReadyTimeout: readyTimeout,
		StopTimeout:  stopTimeout,
	})
	conns := map[string]*grpc.ClientConn{}
	for i, ep := range endpoints {
		sock := socks[i]
		cc, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(fmt.Errorf("client for %s: %w", sock, err))
		}
		t.Cleanup(func() { cc.Close() })
		conns[ep] = cc
	}
	return conns
}

// TestUpstreamV1Stubs runs the five drivers' Windows node flows through
// upstream csi-proxy v1.3.0's generated v1 clients against the daemon on
// the simulated host, with the kubelet directory spelled with a drive
// letter and without one (EKS). The kubelet's own MkdirAll goes over the
// proxy's Mkdir (MkdirAll semantics): the test cannot reach the daemon's
// in-memory host any other way.
func TestUpstreamV1Stubs(t *testing.T) {
	plan := flows.NewPlan(
		flows.Env{Name: "C-drive", KubeletDir: kubeletDir, Windows: true, Drive: "C:"},
		flows.Env{Name: "no-drive", KubeletDir: `\var\lib\kubelet`, Windows: true, Drive: "C:"},
	)
	conns := startDaemon(t, simConfig(t, plan.Fixture()))
	plan.Run(t, flows.Proxy{
		Disk:       upDisk{diskv1.NewDiskClient(conns["disk-v1"])},
		Volume:     upVolume{volumev1.NewVolumeClient(conns["volume-v1"])},
		Filesystem: upFS{fsv1.NewFilesystemClient(conns["filesystem-v1"])},
		SMB:        upSMB{smbv1.NewSmbClient(conns["smb-v1"])},
		System:     upSystem{systemv1alpha1.NewSystemClient(conns["system-v1alpha1"])},
	})
}
