// Package client is the legacy golden test's stand-in for the client
// module's package: the generated registry needs groupVersion.
package client

import (
	"google.golang.org/grpc"

	"github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/legacy/groups"
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
