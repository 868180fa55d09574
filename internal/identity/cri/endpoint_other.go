//go:build !windows

package cri

import (
	"path"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// DefaultEndpoint is containerd's CRI socket, the runtime of most
// clusters; CRI-O's is unix:///var/run/crio/crio.sock.
const DefaultEndpoint = "unix:///run/containerd/containerd.sock"

const endpointForm = "unix:///absolute/path"

// dial returns the gRPC target and options for a CRI endpoint: a Unix
// socket, which grpc-go dials itself.
func dial(endpoint string) (string, []grpc.DialOption, error) {
	p, ok := strings.CutPrefix(endpoint, "unix://")
	if !ok || !path.IsAbs(p) {
		return "", nil, errNoEndpointScheme
	}
	return "unix://" + path.Clean(p), []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, nil
}
