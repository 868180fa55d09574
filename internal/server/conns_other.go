//go:build !linux

package server

import "net"

// peerUID tells no user where the kernel does not say at accept (Windows
// pipes: the caller is identified in the handshake); only the total and
// per-container connection bounds apply there.
func peerUID(net.Conn) (string, bool) { return "", false }

// rawSocket holds no socket where rawListener takes none over.
type rawSocket struct{ fd int }

// rawListener takes no socket over: only Linux accepts below the
// runtime's poller.
func rawListener(net.Listener) int { return -1 }

// acceptRaw is never called where rawListener takes no socket; were it,
// it would still judge connections by the bounds.
func (l *trackingListener) acceptRaw() (net.Conn, error) { return l.acceptNet() }

// closeRaw has nothing to close where rawListener takes no socket.
func (l *trackingListener) closeRaw() {}
