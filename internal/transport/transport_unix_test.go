//go:build unix

package transport

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// shortDir returns a fresh directory with a short path: t.TempDir embeds
// the test name and can push socket paths past the 108-byte limit.
func shortDir(t *testing.T) string {
	t.Helper()
	return sockdir.New(t, "tr")
}

func testEndpoint(dir string) Endpoint {
	o := DefaultOptions()
	o.SocketDir = dir
	return Endpoint{Name: "csi-proxy-disk-v1", Options: o}
}

func TestListenCreatesDirModeAndRemovesOnClose(t *testing.T) {
	dir := filepath.Join(shortDir(t), "sub")
	ep := testEndpoint(dir)
	l, err := Listen(ep)
	if err != nil {
		t.Fatal(err)
	}
	addr := ep.Address()
	if want := dir + "/csi-proxy-disk-v1.sock"; addr != want {
		t.Fatalf("Address() = %s, want %s", addr, want)
	}
	if got := l.Addr().String(); got != addr {
		t.Errorf("listener Addr() = %s, want %s", got, addr)
	}
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o755 {
		t.Errorf("dir mode = %v, want 0755", di.Mode().Perm())
	}
	fi, err := os.Lstat(addr)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		t.Errorf("%s is %v, want a socket", addr, fi.Mode().Type())
	}
	if fi.Mode().Perm() != 0o660 {
		t.Errorf("socket mode = %#o, want 0660", fi.Mode().Perm())
	}
	// The private bind directory is gone: only the socket remains.
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("socket dir holds %v, want only the socket", ents)
	}
	serveEcho(l)
	roundTrip(t, addr)

	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Lstat(addr); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("socket still there after Close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestListenCustomModeAndOwner(t *testing.T) {
	ep := testEndpoint(shortDir(t))
	ep.SocketMode = 0o600
	// Chowning to one's own ids works unprivileged and still goes through
	// the chown path; as root use ids nobody has.
	ep.SocketUID, ep.SocketGID = os.Getuid(), os.Getgid()
	if os.Geteuid() == 0 {
		ep.SocketUID, ep.SocketGID = 4242, 4343
	}
	l, err := Listen(ep)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fi, err := os.Lstat(ep.Address())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %#o, want 0600", fi.Mode().Perm())
	}
	st := fi.Sys().(*syscall.Stat_t)
	if int(st.Uid) != ep.SocketUID || int(st.Gid) != ep.SocketGID {
		t.Errorf("owner = %d:%d, want %d:%d", st.Uid, st.Gid, ep.SocketUID, ep.SocketGID)
	}
}

func TestListenReplacesStaleSocket(t *testing.T) {
	ep := testEndpoint(shortDir(t))
	addr := ep.Address()
	// A crashed daemon leaves its socket file behind.
	old, err := net.ListenUnix("unix", &net.UnixAddr{Name: addr, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	old.SetUnlinkOnClose(false)
	old.Close()
	if _, err := os.Lstat(addr); err != nil {
		t.Fatalf("stale socket not left behind: %v", err)
	}

	l, err := Listen(ep)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	defer l.Close()
	serveEcho(l)
	roundTrip(t, addr)
}

func TestListenRefusesLiveSocket(t *testing.T) {
	ep := testEndpoint(shortDir(t))
	first, err := Listen(ep)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	serveEcho(first)

	_, err = Listen(ep)
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("second Listen: %v, want ErrInUse", err)
	}
	if !strings.Contains(err.Error(), "endpoint "+ep.Address()+" is already in use by another process") {
		t.Errorf("message %q does not name the endpoint and the reason", err)
	}
	// The live server is untouched.
	roundTrip(t, ep.Address())
}

func TestListenRefusesNonSocket(t *testing.T) {
	ep := testEndpoint(shortDir(t))
	if err := os.WriteFile(ep.Address(), []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Listen(ep)
	if err == nil || !strings.Contains(err.Error(), "is not a socket") {
		t.Fatalf("Listen over a regular file: %v, want a not-a-socket error", err)
	}
	if b, err := os.ReadFile(ep.Address()); err != nil || string(b) != "precious" {
		t.Fatalf("regular file was touched: %q, %v", b, err)
	}

	// A directory in the way is refused the same way.
	ep.Name = "csi-proxy-volume-v1"
	if err := os.Mkdir(ep.Address(), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(ep); err == nil || !strings.Contains(err.Error(), "is not a socket") {
		t.Fatalf("Listen over a directory: %v", err)
	}
}

func TestListenRefusesLongPath(t *testing.T) {
	dir := "/tmp/" + strings.Repeat("d", 100)
	ep := testEndpoint(dir)
	_, err := Listen(ep)
	if err == nil || !strings.Contains(err.Error(), "bytes long") || !strings.Contains(err.Error(), "shorter socket directory") {
		t.Fatalf("Listen with a %d-byte path: %v", len(ep.Address()), err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("directory created despite the error: %v", err)
	}
}

func TestListenRejectsBadInput(t *testing.T) {
	dir := shortDir(t)
	for _, name := range []string{"", "../x", "a/b", `a\b`, "..", "c:x"} {
		ep := testEndpoint(dir)
		ep.Name = name
		if _, err := Listen(ep); err == nil {
			t.Errorf("Listen(name %q) succeeded", name)
		}
	}
	ep := testEndpoint(dir)
	ep.SocketMode = fs.ModeSetuid | 0o660
	if _, err := Listen(ep); err == nil {
		t.Error("Listen with a setuid mode succeeded")
	}
}

func TestCloseLeavesReplacedSocket(t *testing.T) {
	ep := testEndpoint(shortDir(t))
	l, err := Listen(ep)
	if err != nil {
		t.Fatal(err)
	}
	// Somebody removed our socket and another daemon bound the path.
	os.Remove(ep.Address())
	other, err := Listen(ep)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	l.Close()
	if _, err := os.Lstat(ep.Address()); err != nil {
		t.Fatalf("closing the old listener removed the new socket: %v", err)
	}
}

func TestDefaults(t *testing.T) {
	ep := Endpoint{Name: "csi-proxy-smb-v1"}
	if got, want := ep.Address(), "/run/csi-node-proxy/csi-proxy-smb-v1.sock"; got != want {
		t.Errorf("default Address() = %s, want %s", got, want)
	}
	if got := PipePath("csi-proxy-smb-v1"); got != `\\.\pipe\csi-proxy-smb-v1` {
		t.Errorf("PipePath = %s", got)
	}
	if o := DefaultOptions(); o.SocketUID != -1 || o.SocketGID != -1 || o.SocketMode != 0o660 || o.PipeSDDL != DefaultPipeSDDL {
		t.Errorf("DefaultOptions() = %+v", o)
	}
}
