//go:build !linux

package server

import "net"

// peerUID tells no user where the kernel does not say at accept (Windows
// pipes: the caller is identified in the handshake); only the total and
// per-container connection bounds apply there.
func peerUID(net.Conn) (string, bool) { return "", false }
