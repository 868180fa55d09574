package server

import (
	"net"
	"strconv"

	"golang.org/x/sys/unix"
)

// peerUID returns the Unix user of the process that connected c, from the
// kernel (SO_PEERCRED), for the per-user connection bound: cheap, and
// known before any handshake.
func peerUID(c net.Conn) (string, bool) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return "", false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return "", false
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil || cerr != nil {
		return "", false
	}
	return strconv.FormatUint(uint64(cred.Uid), 10), true
}
