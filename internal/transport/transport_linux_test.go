package transport

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDetachSocketHandsTheSocketOver: after DetachSocket the returned
// descriptor (blocking, close-on-exec) is the socket: a client still
// connects at the same path and accept4 on the descriptor takes the
// connection, while the listener's own Accept fails; the listener's Close
// reports no error and removes the socket file.
func TestDetachSocketHandsTheSocketOver(t *testing.T) {
	ep := testEndpoint(shortDir(t))
	l, err := Listen(ep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	fd, err := l.(*unixListener).DetachSocket()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Close(fd) })
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK != 0 {
		t.Errorf("the handed-over descriptor's flags: %#x, %v; want it blocking", fl, err)
	}
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || fl&unix.FD_CLOEXEC == 0 {
		t.Errorf("the handed-over descriptor's descriptor flags: %#x, %v; want close-on-exec", fl, err)
	}

	c, err := net.Dial("unix", ep.Address())
	if err != nil {
		t.Fatalf("dialing the socket after the hand-over: %v", err)
	}
	defer c.Close()
	nfd, _, err := unix.Accept4(fd, unix.SOCK_CLOEXEC) // queued already: does not wait
	if err != nil {
		t.Fatalf("accept4 on the handed-over descriptor: %v", err)
	}
	_ = unix.Close(nfd)
	if _, err := l.Accept(); err == nil {
		t.Error("the listener's Accept succeeded after the hand-over")
	}

	if err := l.Close(); err != nil {
		t.Errorf("Close after the hand-over: %v", err)
	}
	if _, err := os.Lstat(ep.Address()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the socket file after Close: %v, want it removed", err)
	}
}
