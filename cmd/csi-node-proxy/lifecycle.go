package main

import (
	"context"
	"time"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
	"github.com/csi-node-proxy/csi-node-proxy/internal/winsvc"
)

// shutdown is the daemon's one graceful shutdown, after SIGTERM or SIGINT
// in the foreground and after the service control manager's Stop or
// Shutdown alike: the endpoints disappear at once and calls in flight get
// timeout to finish. n hears that draining began (the service handler
// then reports StopPending with a wait hint covering timeout).
func shutdown(srv *server.Server, timeout time.Duration, n winsvc.Notifier) error {
	klog.InfoS("Shutting down", "timeout", timeout)
	n.Stopping(timeout)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := srv.Stop(ctx); err != nil {
		return err
	}
	klog.InfoS("Stopped")
	return nil
}

// closeNode closes the node once the server has stopped and no call can
// reach it: the policy watcher, the audit log and what the host's
// backends hold. A failure is only logged: the daemon is going away, and
// its exit status is about serving.
func closeNode(n *hostset.Node) {
	if err := n.Close(); err != nil {
		klog.ErrorS(err, "Closing the node (audit log, host backend)")
	}
}

// noNotifier is the Notifier of a daemon in the foreground: nobody is
// told.
type noNotifier struct{}

func (noNotifier) Started()               {}
func (noNotifier) Stopping(time.Duration) {}
