//go:build !windows

package client

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// socketSuffix ends every socket file name.
const socketSuffix = ".sock"

// endpointAddress is the endpoint's Unix socket in o.SocketDir.
func endpointAddress(o Options, name string) string {
	return filepath.Join(o.SocketDir, name+socketSuffix)
}

// endpointPath is the socket of a file name unknownEndpoints returned.
func endpointPath(o Options, file string) string { return filepath.Join(o.SocketDir, file) }

// where says where endpoints were looked for, for error messages.
func (o Options) where() string { return "in " + o.SocketDir }

// dial connects to a Unix socket.
func dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", addr)
}

// unknownEndpoints lists the sockets of group in o.SocketDir whose version
// this client is not built with: a daemon newer than the client. Only
// names are read; nothing is dialed.
func (o Options) unknownEndpoints(group string) []string {
	entries, err := os.ReadDir(o.SocketDir)
	if err != nil {
		return nil
	}
	prefix := o.endpoint(group, "")
	var out []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), socketSuffix)
		if !ok || !strings.HasPrefix(name, prefix) || e.Type()&os.ModeSocket == 0 {
			continue
		}
		if v := strings.TrimPrefix(name, prefix); !slices.Contains(KnownVersions()[group], v) {
			out = append(out, e.Name())
		}
	}
	return out
}
