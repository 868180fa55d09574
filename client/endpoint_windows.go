//go:build windows

package client

import (
	"context"
	"net"

	"github.com/Microsoft/go-winio"
)

// endpointAddress is the endpoint's named pipe.
func endpointAddress(o Options, name string) string { return o.PipePrefix + name }

// endpointPath is the pipe of a name unknownEndpoints returned (it returns
// none on Windows).
func endpointPath(o Options, name string) string { return o.PipePrefix + name }

// where says where endpoints were looked for, for error messages.
func (o Options) where() string { return "under " + o.PipePrefix }

// dial connects to a named pipe; go-winio waits for a busy pipe until ctx
// ends.
func dial(ctx context.Context, addr string) (net.Conn, error) {
	return winio.DialPipeContext(ctx, addr)
}

// unknownEndpoints would list pipes of versions the client does not know;
// pipes are not listed on Windows, so the error says only what was probed.
func (o Options) unknownEndpoints(string) []string { return nil }
