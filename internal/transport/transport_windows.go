//go:build windows

package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
)

func address(ep Endpoint) string { return PipePath(ep.Name) }

// listen creates the pipe with the configured security descriptor.
//
// go-winio creates a reserved first instance of the pipe that never gets
// ConnectNamedPipe. Windows 10 and later keep clients off it, but Windows
// Server 2008 R2 / 7 and Wine let a client connect to it, and that client
// then hangs forever (microsoft/go-winio#313). Opening and closing one
// client right after listening uses that instance up; on other versions it
// is harmless. It is done here, not in tests, so production and the Wine
// tests take the same path.
func listen(ep Endpoint) (net.Listener, error) {
	path := address(ep)
	if _, err := winio.SddlToSecurityDescriptor(ep.PipeSDDL); err != nil {
		return nil, fmt.Errorf("invalid pipe security descriptor %q: %w", ep.PipeSDDL, err)
	}
	// Windows refuses a second server of an existing pipe name, but Wine
	// allows it, so look before creating: a pipe that exists is served.
	if pipeExists(path) {
		return nil, fmt.Errorf("endpoint %s is %w", path, ErrInUse)
	}
	l, err := winio.ListenPipe(path, &winio.PipeConfig{SecurityDescriptor: ep.PipeSDDL})
	if err != nil {
		if errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_PIPE_BUSY) ||
			errors.Is(err, windows.ERROR_ALREADY_EXISTS) || errors.Is(err, windows.ERROR_FILE_EXISTS) {
			return nil, fmt.Errorf("endpoint %s is %w (or access to it is denied): %w", path, ErrInUse, err)
		}
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	connectOnce(path)
	return &pipeListener{Listener: l}, nil
}

// pipeListener records, the moment a client connects, its process ID and
// the time: Windows reuses PIDs quickly, so identification (package
// identity) refuses a process created after this time, and the PID is the
// one of the client that connected, not of whoever holds the pipe later.
type pipeListener struct{ net.Listener }

// Accept waits for a client and records its process ID and the time.
func (l *pipeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	pc := &pipeConn{Conn: c, at: time.Now()}
	if fc, ok := c.(interface{ Fd() uintptr }); ok {
		pc.pidErr = windows.GetNamedPipeClientProcessId(windows.Handle(fc.Fd()), &pc.pid)
	} else {
		pc.pidErr = fmt.Errorf("a %T is not a named pipe", c)
	}
	return pc, nil
}

// pipeConn is an accepted pipe connection with its client's process ID
// and connect time.
type pipeConn struct {
	net.Conn
	pid    uint32
	pidErr error
	at     time.Time
}

// ClientProcessID returns the client's process ID and the connect time;
// ok is false when the pipe did not say.
func (c *pipeConn) ClientProcessID() (pid uint32, at time.Time, ok bool) {
	return c.pid, c.at, c.pidErr == nil
}

// NetConn returns the pipe connection underneath.
func (c *pipeConn) NetConn() net.Conn { return c.Conn }

// openClient opens a client handle to the pipe without asking for read or
// write access and without letting the server impersonate the caller.
func openClient(path string) (windows.Handle, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return windows.InvalidHandle, err
	}
	return windows.CreateFile(p, 0, 0, nil, windows.OPEN_EXISTING,
		windows.SECURITY_SQOS_PRESENT|windows.SECURITY_ANONYMOUS, 0)
}

// pipeExists tells whether a server already offers the pipe: it can be
// opened, all its instances are busy, or it exists but refuses us.
func pipeExists(path string) bool {
	h, err := openClient(path)
	if err == nil {
		_ = windows.CloseHandle(h) // a probe handle; nothing to do if closing fails
		return true
	}
	return errors.Is(err, windows.ERROR_PIPE_BUSY) || errors.Is(err, windows.ERROR_ACCESS_DENIED)
}

// connectOnce opens and closes one client; see listen for why. Failure
// (typically ERROR_PIPE_BUSY on Windows 10 and later) is expected and
// ignored.
func connectOnce(path string) {
	if h, err := openClient(path); err == nil {
		_ = windows.CloseHandle(h) // a throwaway handle; nothing to do if closing fails
	}
}

func dial(ctx context.Context, address string) (net.Conn, error) {
	return winio.DialPipeContext(ctx, address)
}
