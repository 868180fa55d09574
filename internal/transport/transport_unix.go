//go:build unix

package transport

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// maxSocketPath is the longest socket path bind(2) accepts: sun_path holds
// the path and its terminating NUL (108 bytes on Linux, 104 on the BSDs).
var maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// probeTimeout bounds the connection attempt that tells a live socket from
// a stale one. A live local server answers at once.
const probeTimeout = time.Second

func address(ep Endpoint) string { return SocketPath(ep.SocketDir, ep.Name) }

// listen creates the socket so that it is never reachable with the wrong
// mode or owner: it binds in a fresh private (0700) directory, sets mode and
// owner there, and only then links the socket into place. Setting the mode
// after binding in place would leave a window in which the umask decides
// who may connect, and a connection accepted into the backlog then stays.
func listen(ep Endpoint) (net.Listener, error) {
	path := address(ep)
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("socket path %s is %d bytes long, more than the %d bytes a Unix socket address holds: choose a shorter socket directory", path, len(path), maxSocketPath)
	}
	if ep.SocketMode&^fs.ModePerm != 0 {
		return nil, fmt.Errorf("socket mode %#o has bits other than permission bits", ep.SocketMode)
	}
	if err := os.MkdirAll(ep.SocketDir, 0o755); err != nil {
		return nil, fmt.Errorf("create socket directory: %w", err)
	}
	if err := removeStale(path); err != nil {
		return nil, err
	}

	// The private directory's path is shorter than the final one (".b"
	// plus at most 10 digits and "/s" against "csi-proxy-" plus a
	// group-version and ".sock"), so the length check above covers it.
	tmp, err := os.MkdirTemp(ep.SocketDir, ".b")
	if err != nil {
		return nil, fmt.Errorf("create private bind directory: %w", err)
	}
	defer os.RemoveAll(tmp) //nolint:errcheck // best effort: an empty private dir left behind is harmless
	tmpPath := filepath.Join(tmp, "s")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmpPath, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	// The file moves away from where it was bound; unixListener.Close
	// removes it at its final path instead.
	l.SetUnlinkOnClose(false)
	fail := func(err error) (net.Listener, error) {
		_ = l.Close() // the error being returned matters, not this one
		return nil, err
	}
	if err := os.Chmod(tmpPath, ep.SocketMode); err != nil {
		return fail(fmt.Errorf("set mode of %s: %w", path, err))
	}
	if ep.SocketUID >= 0 || ep.SocketGID >= 0 {
		if err := os.Chown(tmpPath, ep.SocketUID, ep.SocketGID); err != nil {
			return fail(fmt.Errorf("set owner of %s: %w", path, err))
		}
	}
	// link(2) never replaces an existing file, so a daemon that bound
	// the path since removeStale looked is not clobbered. rename(2) is the
	// fallback for file systems that do not link sockets.
	if err := os.Link(tmpPath, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fail(fmt.Errorf("endpoint %s is %w", path, ErrInUse))
		}
		if err := os.Rename(tmpPath, path); err != nil {
			return fail(fmt.Errorf("move socket into place at %s: %w", path, err))
		}
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fail(fmt.Errorf("stat %s: %w", path, err))
	}
	return &unixListener{UnixListener: l, path: path, file: fi}, nil
}

// removeStale removes the socket at path if no process serves it any more,
// as after a crash. It never removes anything but a socket, and never a
// socket that accepts connections or cannot be probed.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("endpoint %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("endpoint %s exists and is not a socket (%s); refusing to remove it", path, fi.Mode().Type())
	}
	c, err := net.DialTimeout("unix", path, probeTimeout)
	switch {
	case err == nil:
		_ = c.Close() // only a probe
		return fmt.Errorf("endpoint %s is %w", path, ErrInUse)
	case errors.Is(err, syscall.EAGAIN):
		// The backlog is full: somebody is serving it, slowly.
		return fmt.Errorf("endpoint %s is %w", path, ErrInUse)
	case !errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("endpoint %s exists and cannot be probed, so it is left alone: %w", path, err)
	}
	// Refused: nobody listens. Remove it unless it was replaced meanwhile.
	if now, err := os.Lstat(path); err != nil || !os.SameFile(fi, now) {
		return fmt.Errorf("endpoint %s changed while being checked; is another daemon starting?", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	return nil
}

// unixListener removes its socket file on Close, but only while the file
// is still the one it created: a socket that a later daemon bound in its
// place is left alone.
type unixListener struct {
	*net.UnixListener
	path string
	file fs.FileInfo

	once sync.Once
	err  error
}

// Addr reports the socket's final path rather than the private bind path.
func (l *unixListener) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }

// Close stops listening and removes the socket file.
func (l *unixListener) Close() error {
	l.once.Do(func() {
		l.err = l.UnixListener.Close()
		if now, err := os.Lstat(l.path); err == nil && os.SameFile(l.file, now) {
			if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) && l.err == nil {
				l.err = err
			}
		}
	})
	return l.err
}

func dial(ctx context.Context, address string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", address)
}
