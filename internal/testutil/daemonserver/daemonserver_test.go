package daemonserver

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
)

// TestServesWhatAPIsSelect: the node serves exactly the selected
// group-versions through the working-dir policy hostset builds, and Stop
// removes the sockets, so a second node can start on the same directory.
func TestServesWhatAPIsSelect(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("serves unix sockets; on Windows the server serves named pipes")
	}
	kubelet := simulated.DefaultKubeletDir
	o := Options{Host: hostset.Config{WorkingDirs: []string{kubelet}}, APIs: "filesystem-v1"}
	n := StartNoCleanup(t, o)
	if n.Sim == nil || len(n.Server.Endpoints()) != 1 {
		t.Fatalf("simulated host %v, endpoints %v; want the simulated host serving filesystem v1 alone", n.Sim, n.Server.Endpoints())
	}
	addr := n.Address(t, "filesystem", "v1")
	if filepath.Dir(addr) != n.SocketDir {
		t.Errorf("endpoint %s is not in the socket directory %s", addr, n.SocketDir)
	}
	conn, fsc := dial(t, addr)
	if _, err := fsc.Mkdir(context.Background(), &filesystemv1.MkdirRequest{Path: kubelet + `\pods`}); err != nil {
		t.Errorf("Mkdir below the working directory: %v", err)
	}
	if _, err := fsc.Mkdir(context.Background(), &filesystemv1.MkdirRequest{Path: `C:\Windows\x`}); err == nil {
		t.Error("Mkdir outside the working directories succeeded")
	}
	conn.Close()
	n.Stop(t)
	if _, err := os.Lstat(addr); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket %s after Stop: %v", addr, err)
	}
	o.SocketDir = n.SocketDir
	again := Start(t, o)
	if again.Address(t, "filesystem", "v1") != addr {
		t.Error("a node restarted on the same directory serves elsewhere")
	}
	// A call before the end: Stop at once after Start races grpc's Serve
	// (it would then fail with grpc.ErrServerStopped).
	conn, fsc = dial(t, addr)
	defer conn.Close()
	if _, err := fsc.PathExists(context.Background(), &filesystemv1.PathExistsRequest{Path: kubelet + `\pods`}); err != nil {
		t.Errorf("PathExists on the restarted node: %v", err)
	}
}

// dial connects to the filesystem v1 endpoint at addr.
func dial(t *testing.T, addr string) (*grpc.ClientConn, filesystemv1.FilesystemClient) {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	return conn, filesystemv1.NewFilesystemClient(conn)
}
