//go:build linux

package identity

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// wrapped hides the connection's type, as the server's tracking wrapper
// does, and hands it out through NetConn.
type wrapped struct{ net.Conn }

func (w wrapped) NetConn() net.Conn { return w.Conn }

// pair returns the server end of a fresh Unix socket connection made by
// this process.
func pair(t *testing.T) net.Conn {
	t.Helper()
	dir := sockdir.New(t, "id")
	l, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	client, err := net.Dial("unix", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	server, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	return server
}

func TestIdentifyUnixPeer(t *testing.T) {
	conn := pair(t)
	_, ai, err := NewCredentials(Options{}).ServerHandshake(wrapped{conn})
	if err != nil {
		t.Fatal(err)
	}
	c := ai.(AuthInfo).Caller
	if c.PID != os.Getpid() || !c.HasUnixIDs || c.UID != uint32(os.Geteuid()) || c.GID != uint32(os.Getegid()) {
		t.Errorf("caller %+v, want this process (pid %d uid %d gid %d)", c, os.Getpid(), os.Geteuid(), os.Getegid())
	}
	// This test's own cgroup decides the rest: whatever it is, reading it
	// must work, and a container found must come with a full ID.
	if c.Incomplete != "" && !strings.Contains(c.Incomplete, "cgroup namespace") {
		t.Errorf("incomplete identity of this process: %s", c.Incomplete)
	}
	if c.ContainerID != "" && len(c.ContainerID) != 64 {
		t.Errorf("container ID %q", c.ContainerID)
	}
	// The executable and start time name the process in audit records.
	if self, err := os.Executable(); err != nil || c.Executable != self {
		t.Errorf("executable %q, want %q (%v)", c.Executable, self, err)
	}
	if age := time.Since(c.StartTime); c.StartTime.IsZero() || age < 0 || age > time.Hour {
		t.Errorf("start time %v, want when this test process started", c.StartTime)
	}
}

func TestIdentifyWithoutProcess(t *testing.T) {
	// A procfs without the peer: the kernel's IDs stay, the rest is
	// explained.
	c := Identify(pair(t), Options{ProcRoot: t.TempDir()})
	if !c.HasUnixIDs || c.PID != os.Getpid() || c.ContainerID != "" || !strings.Contains(c.Incomplete, "cannot read the caller's process") {
		t.Errorf("caller %+v", c)
	}
}

func TestIdentifyNotASocket(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if c := Identify(a, Options{}); c.HasUnixIDs || c.Incomplete == "" {
		t.Errorf("caller of a pipe: %+v", c)
	}
}
