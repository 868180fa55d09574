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
