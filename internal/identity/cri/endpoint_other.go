//go:build !windows

package cri

import (
	"context"
	"net"
	"os"
	"path"
	"strings"
	"syscall"

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

// socketPath is the file of a Unix socket endpoint that dial accepted,
// whose inode tells one runtime start from the next.
func socketPath(endpoint string) string {
	p, _ := strings.CutPrefix(endpoint, "unix://")
	return path.Clean(p)
}

// socketInode is the inode of the socket file at p: a runtime that
// restarts removes its socket and creates a new one, so a new inode means
// a connection made before is to a runtime that is gone (or going).
func socketInode(p string) (uint64, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, nil
	}
	return uint64(st.Ino), nil //nolint:unconvert // Ino is uint32 on some platforms
}

// dialSocket connects to the Unix socket p and reports the inode it
// found there just before.
func dialSocket(ctx context.Context, p string, dialled func(ino uint64)) (net.Conn, error) {
	ino, err := socketInode(p)
	if err != nil {
		return nil, err
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, "unix", p)
	if err != nil {
		return nil, err
	}
	dialled(ino)
	return conn, nil
}
