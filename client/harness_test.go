// These tests run the client against the daemon's real server code:
// version negotiation with daemons serving every version, only old ones,
// or none the client asks for; that Dial leaves exactly one connection per
// group and Close none; reconnection after a restart; and that every model
// method of every group round-trips through the client, with errors
// mapped as in library mode. They are external tests (package client_test)
// because they link the daemon (internal/server through daemonserver,
// host/simulated, inprocess), which the client itself must never link
// (deps_test.go): a test's imports are not the package's.

package client_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonserver"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// The world of testdata/sim.json.
const (
	kubelet     = `C:\var\lib\kubelet`
	dataDisk    = uint32(1) // RAW 1 GiB, page83 ...c01
	offlineDisk = uint32(2) // offline, partitioned
	missingDisk = uint32(99)
	dataPage83  = "60022480000000000000000000000c01"
	dataSerial  = "NEG-DATA-0001"
	smbShare    = `\\fileserver\share`
	smbUser     = `CONTOSO\csi`
	smbPassword = "Sh4re-P@ssw0rd!"
	portal      = "10.0.0.10"
	iqnOpen     = "iqn.2003-01.org.example:open"
	biosSerial  = "NEG-BIOS-0001"
)

// allowedServices is the system group's allow-list: W32Time is one of the
// simulated host's default services.
var allowedServices = []string{"W32Time"}

// oldAPIs is one old version per group, each older than the version the
// client prefers, and with renamed RPCs or retyped fields where the group
// has them: disk v1beta1 (string disk IDs, DiskStats), volume v1beta1
// (Dismount, VolumeStats, int64 disk number, mount), filesystem v1beta1
// (LinkPath, IsMountPoint), smb v1beta1 (error strings), iscsi v1alpha1,
// system v1alpha1 (its only version).
const oldAPIs = "disk-v1beta1,volume-v1beta1,filesystem-v1beta1,smb-v1beta1,iscsi-v1alpha1,system-v1alpha1"

// daemon is the daemon's server code, wired by the shared harness as the
// daemon wires it, on a simulated Windows host, serving some
// group-versions on unix sockets in dir.
type daemon struct {
	dir  string
	node *daemonserver.Node
}

// socketDir returns a fresh short directory for sockets (a socket path must
// fit in 108 bytes; t.TempDir's can be longer).
func socketDir(t *testing.T) string {
	t.Helper()
	return sockdir.New(t, "cn")
}

// startDaemon serves the group-versions spec selects (the daemon's --apis
// syntax) in dir until the test ends.
func startDaemon(t *testing.T, dir, spec string) *daemon {
	t.Helper()
	d := startDaemonNoCleanup(t, dir, spec)
	t.Cleanup(func() { d.stop(t) })
	return d
}

// startDaemonNoCleanup is startDaemon for a test that stops the daemon
// itself (d.stop), to restart it.
func startDaemonNoCleanup(t *testing.T, dir, spec string) *daemon {
	t.Helper()
	requireUnixSockets(t)
	cfg, err := simulated.LoadConfig(filepath.Join("testdata", "sim.json"))
	if err != nil {
		t.Fatal(err)
	}
	n := daemonserver.StartNoCleanup(t, daemonserver.Options{
		Host:            hostset.Config{Host: hostset.Simulated, WorkingDirs: cfg.WorkingDirs, Simulated: &cfg},
		AllowedServices: allowedServices,
		APIs:            spec,
		SocketDir:       dir,
	})
	return &daemon{dir: dir, node: n}
}

// stop stops the daemon and waits for it: its endpoints are gone when it
// returns.
func (d *daemon) stop(t *testing.T) {
	t.Helper()
	d.node.Stop(t)
}

// requireUnixSockets skips a test on Windows, where the client dials named
// pipes: pipe_windows_test.go covers those.
func requireUnixSockets(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("this test serves unix sockets; on Windows the client dials named pipes (pipe_windows_test.go)")
	}
}

// serverConns counts the connections the daemon holds open on sockets in
// dir, read from /proc/net/unix: a socket accepted by a listener shows the
// listener's path (the daemon binds in a private directory under dir and
// links the socket into place, so the path is under dir), and a connected
// one has state 03. Client-side sockets have no path and are not counted.
func serverConns(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		t.Fatalf("counting connections needs /proc/net/unix: %v", err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		// Num RefCount Protocol Flags Type St Inode Path
		if len(f) >= 8 && f[5] == "03" && strings.HasPrefix(f[7], dir+"/") {
			n++
		}
	}
	return n
}

// waitConns waits until the daemon holds want connections in dir: a
// connection the client closed ends on the server side a moment later.
func waitConns(t *testing.T, dir string, want int, when string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := serverConns(t, dir)
		if got == want {
			// Stay a moment: a late probe connection would show now.
			time.Sleep(50 * time.Millisecond)
			if got = serverConns(t, dir); got == want {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the daemon holds %d connections, want %d", when, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
