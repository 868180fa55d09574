package cri

import (
	"context"
	"net"
	"strings"

	"github.com/Microsoft/go-winio"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// DefaultEndpoint is containerd's CRI pipe on Windows nodes.
const DefaultEndpoint = "npipe:////./pipe/containerd-containerd"

const endpointForm = "npipe:////./pipe/name"

// dial returns the gRPC target and options for a CRI endpoint: a named
// pipe, dialled through go-winio (grpc-go has no pipe resolver).
func dial(endpoint string) (string, []grpc.DialOption, error) {
	p, ok := strings.CutPrefix(endpoint, "npipe://")
	if !ok || !strings.HasPrefix(strings.ReplaceAll(p, "/", `\`), `\\.\pipe\`) {
		return "", nil, errNoEndpointScheme
	}
	pipe := strings.ReplaceAll(p, "/", `\`)
	return "passthrough:///" + pipe, []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return winio.DialPipeContext(ctx, pipe) }),
	}, nil
}

// socketPath is "" for a named pipe: a pipe has no inode to compare, and
// a runtime that restarts breaks the connections to its pipe.
func socketPath(string) string { return "" }

// socketInode is never called on Windows (socketPath is "").
func socketInode(string) (uint64, error) { return 0, nil }

// dialSocket is never called on Windows (socketPath is "").
func dialSocket(context.Context, string, func(uint64)) (net.Conn, error) {
	return nil, errNoEndpointScheme
}
