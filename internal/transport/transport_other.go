//go:build !unix && !windows

package transport

import (
	"context"
	"net"
)

func address(ep Endpoint) string { return SocketPath(ep.SocketDir, ep.Name) }

func listen(Endpoint) (net.Listener, error) { return nil, ErrNotSupported }

func dial(context.Context, string) (net.Conn, error) { return nil, ErrNotSupported }
