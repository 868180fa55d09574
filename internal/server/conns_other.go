//go:build !linux

package server

import (
	"net"
	"os"
	"syscall"
)

// peerUID tells no user where the kernel does not say at accept (Windows
// pipes: the caller is identified in the handshake); only the total and
// per-container connection bounds apply there.
func peerUID(net.Conn) (string, bool) { return "", false }

// rawListener is nil: only Linux accepts below the runtime's poller.
func rawListener(net.Listener) (*os.File, syscall.RawConn) { return nil, nil }

// acceptOne is never called where rawListener is nil; were it, it would
// still judge connections by the bounds.
func (l *trackingListener) acceptOne() (net.Conn, bool, error) {
	c, err := l.acceptNet()
	return c, false, err
}

// stormAcceptor ends at once, handing the accepting back: only Linux
// accepts a storm on a thread of its own (acceptOne never says refused
// here anyway).
func (l *trackingListener) stormAcceptor(out chan<- acceptResult) {
	l.hand(out, acceptResult{over: true})
}
