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

// acceptRaw is never called where rawListener is nil; were it, it would
// still judge connections by the bounds.
func (l *trackingListener) acceptRaw() (net.Conn, error) { return l.acceptNet() }
