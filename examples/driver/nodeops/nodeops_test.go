package nodeops_test

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/client/mounter"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/examples/driver/nodeops"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonserver"
)

// The node both modes run on: the simulated Windows host with the
// daemon's default kubelet directory and one RAW data disk.
const (
	kubelet = `C:\var\lib\kubelet`
	page83  = "60022480c0ffee00c0ffee00c0ffee01"
	simDisk = "size=8GiB,location=1:0:0:4,page83=" + page83
	staging = kubelet + `\plugins\kubernetes.io\csi\example.csi.io\pv-1\globalmount`
	podDir  = kubelet + `\pods\0f1e2d3c\volumes\kubernetes.io~csi\pv-1`
	target  = podDir + `\mount`
)

// TestBothModes runs the driver's sequence, unchanged, in-process and
// through the daemon's sockets with the client: the constructor is the
// only difference.
func TestBothModes(t *testing.T) {
	t.Run("inprocess", func(t *testing.T) {
		node, err := inprocess.New(t.Context(), inprocess.Options{Host: inprocess.HostSimulated, SimDisks: []string{simDisk}})
		if err != nil {
			t.Fatal(err)
		}
		defer node.Close()
		driverSequence(t, node)
	})
	t.Run("daemon", func(t *testing.T) {
		dir := startDaemon(t)
		node, err := client.Dial(t.Context(), client.Options{SocketDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer node.Close()
		driverSequence(t, node)
	})
}

// driverSequence stages, publishes, reads stats, expands, unpublishes and
// unstages, each twice (kubelet retries), checking what the node says
// after each step, and that mistakes come back as the same errdefs kinds.
func driverSequence(t *testing.T, node groups.Node) {
	ctx := t.Context()
	m := mounter.New(node, mounter.Options{})
	if _, err := nodeops.NodeStageVolume(ctx, m, "60022480000000000000000000000bad", staging); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("staging a disk that is not attached: %v, want ErrNotFound", err)
	}
	var volumeID string
	for range 2 {
		id, err := nodeops.NodeStageVolume(ctx, m, page83, staging)
		if err != nil {
			t.Fatalf("NodeStageVolume: %v", err)
		}
		if volumeID != "" && id != volumeID {
			t.Errorf("staged again as %s, first as %s", id, volumeID)
		}
		volumeID = id
	}
	if _, err := node.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: podDir}); err != nil {
		t.Fatal(err) // kubelet's part: the pod's volume directory
	}
	for range 2 {
		if err := nodeops.NodePublishVolume(m, staging, target); err != nil {
			t.Fatalf("NodePublishVolume: %v", err)
		}
	}
	if link, err := node.Filesystem().IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: target}); err != nil || !link.IsSymlink {
		t.Errorf("published path: %+v, %v; want a symlink", link, err)
	}
	st, err := nodeops.NodeGetVolumeStats(ctx, m, target)
	if err != nil || st.Total < 7<<30 || st.Used < 0 || st.Used > st.Total {
		t.Errorf("stats: %+v, %v", st, err)
	}
	// Nothing to grow: the volume fills its disk already, and stays.
	if size, err := nodeops.NodeExpandVolume(ctx, m, target); err != nil || size != st.Total {
		t.Errorf("expand: %d, %v; want %d unchanged", size, err, st.Total)
	}
	// A path outside the working directories is refused by the group
	// Service in both modes, with the same kind of error.
	if err := nodeops.NodePublishVolume(m, staging, `C:\Windows\evil`); !errors.Is(err, errdefs.ErrInvalidArgument) && !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("publishing outside the working dirs: %v", err)
	}
	for range 2 {
		if err := nodeops.NodeUnpublishVolume(m, target); err != nil {
			t.Fatalf("NodeUnpublishVolume: %v", err)
		}
	}
	if st, err := node.Filesystem().PathExists(ctx, &filesystem.PathExistsRequest{Path: target}); err != nil || st.Exists {
		t.Errorf("unpublished path: %+v, %v; want gone", st, err)
	}
	for range 2 {
		if err := nodeops.NodeUnstageVolume(ctx, m, staging); err != nil {
			t.Fatalf("NodeUnstageVolume: %v", err)
		}
	}
	if st, err := node.Filesystem().PathExists(ctx, &filesystem.PathExistsRequest{Path: staging}); err != nil || st.Exists {
		t.Errorf("unstaged path: %+v, %v; want gone", st, err)
	}
	// The data survived: staging again finds the volume formatted and
	// mounts the same one.
	if _, err := node.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: staging}); err != nil {
		t.Fatal(err) // kubelet's part: the staging directory
	}
	id, err := nodeops.NodeStageVolume(ctx, m, page83, staging)
	if err != nil || id != volumeID {
		t.Errorf("restage: %s, %v; want %s", id, err, volumeID)
	}
	if err := nodeops.NodeUnstageVolume(ctx, m, staging); err != nil {
		t.Errorf("final unstage: %v", err)
	}
}

// startDaemon serves every group-version on the simulated host, built by
// hostset as the daemon builds it with --host=simulated --sim-disk, on unix
// sockets in a fresh directory, until the test ends.
func startDaemon(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the client dials named pipes on Windows; this test serves unix sockets")
	}
	n := daemonserver.Start(t, daemonserver.Options{
		Host: hostset.Config{Host: hostset.Simulated, WorkingDirs: []string{kubelet}, RequirePrivacy: true, SimDisks: []string{simDisk}},
	})
	return n.SocketDir
}

// TestGuideShowsThisCode: docs/driver-guide.md shows nodeops.go exactly,
// so the guide cannot drift from the code the test above runs.
func TestGuideShowsThisCode(t *testing.T) {
	src, err := os.ReadFile("nodeops.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../../docs/driver-guide.md")
	if err != nil {
		t.Fatal(err)
	}
	const start = "<!-- begin examples/driver/nodeops/nodeops.go -->\n```go\n"
	const end = "```\n<!-- end examples/driver/nodeops/nodeops.go -->"
	text := string(doc)
	i := strings.Index(text, start)
	j := strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("docs/driver-guide.md has no block between %q and %q", start, end)
	}
	if got := text[i+len(start) : j]; got != string(src) {
		t.Errorf("docs/driver-guide.md shows another nodeops.go than examples/driver/nodeops/nodeops.go; copy the file into the guide")
	}
}
