// Package nodeplugin holds the test that the example node plugin's
// manifest and the client fit: the endpoints windows.yaml mounts are enough
// for client.Dial with its defaults. The directory is otherwise manifests
// only (test/manifests validates them).
package nodeplugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// pipeEndpoint is a named pipe of the proxy as a hostPath names it.
var pipeEndpoint = regexp.MustCompile(`^\\\\\.\\pipe\\csi-proxy-([a-z]+)-(v[0-9a-z]+)$`)

// manifestPipes returns the group-versions ("disk-v1") of the proxy pipes
// windows.yaml mounts into its plugin container, read from the hostPath
// volumes the container mounts.
func manifestPipes(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("windows.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type volumeMount struct {
		Name string `json:"name"`
	}
	type container struct {
		Name         string        `json:"name"`
		VolumeMounts []volumeMount `json:"volumeMounts"`
	}
	var out []string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var obj struct {
			Kind string `json:"kind"`
			Spec struct {
				Template struct {
					Spec struct {
						Containers []container `json:"containers"`
						Volumes    []struct {
							Name     string `json:"name"`
							HostPath *struct {
								Path string `json:"path"`
							} `json:"hostPath"`
						} `json:"volumes"`
					} `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		if obj.Kind != "DaemonSet" {
			continue
		}
		pod := obj.Spec.Template.Spec
		pipes := map[string]string{} // volume name -> group-version
		for _, v := range pod.Volumes {
			if v.HostPath == nil {
				continue
			}
			if m := pipeEndpoint.FindStringSubmatch(v.HostPath.Path); m != nil {
				pipes[v.Name] = m[1] + "-" + m[2]
			}
		}
		for _, c := range pod.Containers {
			for _, vm := range c.VolumeMounts {
				if gv, ok := pipes[vm.Name]; ok && !slices.Contains(out, gv) {
					out = append(out, gv)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestManifestPipes pins what windows.yaml mounts, so that the test below
// runs what the example deploys (and fails to parse nothing silently).
func TestManifestPipes(t *testing.T) {
	if got, want := manifestPipes(t), []string{"disk-v1", "filesystem-v1", "volume-v1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("windows.yaml mounts the pipes %v, want %v", got, want)
	}
}

// TestDialDefaultsWithExampleEndpoints starts the daemon binary serving
// exactly the endpoints windows.yaml mounts (--apis), and dials it with
// client.Dial's defaults, as the guide tells a driver to: the three groups
// connect, calls through them work, and a group the deployment lacks fails
// on use with an error naming it and its socket.
func TestDialDefaultsWithExampleEndpoints(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the daemon serves unix sockets in this test; on Windows the client dials named pipes")
	}
	apis := manifestPipes(t)
	dir := startDaemon(t, strings.Join(apis, ","))
	ctx := t.Context()
	// SocketDir is the test's; on a node it is the default, and on Windows
	// the pipes need no option at all.
	c, err := client.Dial(ctx, client.Options{SocketDir: dir})
	if err != nil {
		t.Fatalf("Dial with defaults against %v: %v", apis, err)
	}
	defer c.Close()
	if got, want := c.Versions(), map[string]string{"disk": "v1", "volume": "v1", "filesystem": "v1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("negotiated %v, want %v", got, want)
	}
	ids, err := c.Disk().ListDiskIDs(ctx, &disk.ListDiskIDsRequest{})
	if err != nil {
		t.Fatalf("ListDiskIDs: %v", err)
	}
	found := 0
	for _, id := range ids.DiskIDs {
		if id.Page83 == page83 {
			found++
		}
	}
	if found != 1 {
		t.Errorf("ListDiskIDs: %d disks with page83 %s (the --sim-disk), want 1", found, page83)
	}
	staging := kubelet + `\plugins\kubernetes.io\csi\csi.example.com\pv-1\globalmount`
	if _, err := c.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: staging}); err != nil {
		t.Errorf("Mkdir: %v", err)
	}
	if ex, err := c.Filesystem().PathExists(ctx, &filesystem.PathExistsRequest{Path: staging}); err != nil || !ex.Exists {
		t.Errorf("PathExists: %+v, %v", ex, err)
	}
	_, err = c.Volume().GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: staging})
	if !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("GetVolumeIDFromTargetPath of an empty dir: %v, want NotFound", err)
	}
	for _, g := range []string{"smb", "iscsi", "system"} {
		if c.Missing()[g] == nil {
			t.Errorf("Missing() lacks %s: %v", g, c.Missing())
		}
	}
	_, err = c.SMB().RemoveSmbGlobalMapping(ctx, nil)
	for _, want := range []string{"group smb is not available", filepath.Join(dir, "csi-proxy-smb-v1.sock"), "v1, v1beta2, v1beta1, v1alpha1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a call to smb: %v; want it to contain %q", err, want)
		}
	}
}

// The simulated node: the Windows kubelet directory and one disk.
const (
	kubelet = `C:\var\lib\kubelet`
	page83  = "60022480c0ffee00c0ffee00c0ffee01"
)

// startDaemon runs cmd/csi-node-proxy (built once, daemonbin) on the
// simulated host serving apis, with its sockets in a fresh directory,
// until the test ends (then SIGTERM, and a clean exit is checked).
func startDaemon(t *testing.T, apis string) string {
	t.Helper()
	bin := daemonbin.Binary(t)
	dir := sockdir.New(t, "np")
	daemonbin.Start(t, bin, daemonbin.Options{
		Args: []string{"--host=simulated", "--socket-dir=" + dir, "--apis=" + apis,
			"--sim-disk=size=8GiB,location=1:0:0:4,page83=" + page83},
		// Ready when every endpoint asked for is served; the others must not be.
		Ready: func() error {
			served, err := client.Served(context.Background(), client.Options{SocketDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, gv := range served {
				got = append(got, gv.Group+"-"+gv.Version)
			}
			slices.Sort(got)
			if strings.Join(got, ",") != apis {
				return fmt.Errorf("the daemon serves %v, want exactly %s", got, apis)
			}
			return nil
		},
		PollInterval: 50 * time.Millisecond,
	})
	return dir
}
