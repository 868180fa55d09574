// Package client is the golden test's stand-in for package client: the
// generated registry needs these two types.
package client

import (
	"google.golang.org/grpc"

	"github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/widget/groups"
)

type groupVersion struct {
	group, version, service string
	bind                    func(grpc.ClientConnInterface, *groups.Set)
}

// Versions lists the generated registry, so that it is used.
func Versions() []string {
	var out []string
	for _, gv := range builtIn {
		out = append(out, gv.group+" "+gv.version+" "+gv.service)
	}
	return out
}
