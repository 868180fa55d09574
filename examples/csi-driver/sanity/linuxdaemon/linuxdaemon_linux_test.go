//go:build linux

package linuxdaemon

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/examples/csi-driver/sanity/sanitytest"
	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

func TestMain(m *testing.M) {
	code := m.Run()
	linuxnode.RemoveDaemonBinary()
	os.Exit(code)
}

// TestSanity: the daemon runs as a node runs it (its own process,
// --host=linux, XFS) and sees every disk of the machine, so it finds the
// loop disks the driver's controller attaches, as on a node; the driver
// dials its disk, volume and filesystem sockets with client.Dial.
func TestSanity(t *testing.T) {
	sanitytest.RequireLinuxNode(t)
	s := linuxnode.New(t)
	d := linuxnode.StartDaemon(t, s, linuxnode.AllDisks, "--linux-filesystem=xfs")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	node, err := client.Dial(ctx, client.Options{SocketDir: d.SocketDir, Groups: []string{"disk", "volume", "filesystem"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Close() })
	sanitytest.RunLinux(t, "the daemon on the Linux backend", s, node)
}
