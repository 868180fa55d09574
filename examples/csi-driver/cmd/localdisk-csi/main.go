// Command localdisk-csi is the example local-disk CSI driver
// (examples/csi-driver/driver): Identity, Controller and Node services on
// one unix socket, the node's storage reached through csi-node-proxy,
// either the daemon's sockets (-proxy=daemon, the default: the driver
// runs unprivileged apart from the controller's loop devices) or library
// mode in this process (-proxy=inprocess).
//
// Disks come from -allocator: "loop" (sparse files in -disk-dir on loop
// devices; Linux, root) or "simulated" (the simulated Windows host of
// library mode, -proxy=inprocess -host=simulated: a demonstration that
// needs no disk and no root).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/examples/csi-driver/driver"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
)

func main() {
	if err := run(); err != nil {
		klog.ErrorS(err, "localdisk-csi")
		klog.Flush()
		os.Exit(1)
	}
}

func run() error {
	endpoint := flag.String("endpoint", "unix:///csi/csi.sock", "the CSI socket")
	nodeID := flag.String("node-id", "", "this node's ID (the Kubernetes node name); default the host name")
	proxy := flag.String("proxy", "daemon", `how to reach the node: "daemon" (csi-node-proxy's sockets) or "inprocess" (library mode)`)
	socketDir := flag.String("proxy-socket-dir", client.DefaultSocketDir, "-proxy=daemon: the daemon's socket directory")
	host := flag.String("host", "", `-proxy=inprocess: the backend, "linux" or "simulated" (default: this OS's)`)
	kubelet := flag.String("kubelet-path", "", "-proxy=inprocess: the kubelet's directory (default the daemon's)")
	fs := flag.String("linux-filesystem", "", `-proxy=inprocess on Linux: "ext4" or "xfs" (online growth of ext4 needs CAP_SYS_RESOURCE)`)
	alloc := flag.String("allocator", "loop", `where disks come from: "loop" or "simulated"`)
	diskDir := flag.String("disk-dir", "/var/lib/localdisk-csi/disks", "-allocator=loop: the backing files")
	klog.InitFlags(nil)
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if *nodeID == "" {
		h, err := os.Hostname()
		if err != nil {
			return err
		}
		*nodeID = h
	}

	var node groups.Node
	var sim *inprocess.Node
	switch *proxy {
	case "daemon":
		// The groups a block driver calls, as its DaemonSet mounts them:
		// a missing one fails here, naming its socket.
		c, err := client.Dial(ctx, client.Options{SocketDir: *socketDir, Groups: []string{"disk", "volume", "filesystem"}})
		if err != nil {
			return err
		}
		node = c
	case "inprocess":
		n, err := inprocess.New(ctx, inprocess.Options{Host: *host, KubeletPath: *kubelet, LinuxFilesystem: *fs})
		if err != nil {
			return err
		}
		node, sim = n, n
	default:
		return fmt.Errorf("-proxy=%q: want daemon or inprocess", *proxy)
	}
	defer node.Close() //nolint:errcheck // exiting

	var a driver.Allocator
	switch *alloc {
	case "loop":
		l, err := driver.NewLoopAllocator(*diskDir)
		if err != nil {
			return err
		}
		a = l
	case "simulated":
		if sim == nil || sim.Simulated() == nil {
			return fmt.Errorf("-allocator=simulated needs -proxy=inprocess -host=simulated: the disks are the simulated host's")
		}
		a = driver.NewSimAllocator(sim.Simulated())
	default:
		return fmt.Errorf("-allocator=%q: want loop or simulated", *alloc)
	}

	d, err := driver.New(driver.Config{NodeID: *nodeID, Node: node, Allocator: a, Logger: klog.Background(), Version: "example"})
	if err != nil {
		return err
	}
	klog.InfoS("serving", "endpoint", *endpoint, "proxy", *proxy, "allocator", *alloc, "node", *nodeID)
	return d.Serve(ctx, *endpoint)
}
