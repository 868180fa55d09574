// Package adapter lists the wire API versions the daemon can serve and how
// to register each on a gRPC server.
//
// Each subpackage internal/adapter/<group>/<version> is a thin, generated
// gRPC server for one group-version: it converts the versioned request into
// the group's model, calls the group Interface, converts the response back
// and maps the error with errgrpc.ToGRPC. Hand-written overrides for renamed
// or retyped fields live next to the generated code in conversion.go.
package adapter

import (
	"google.golang.org/grpc"

	"github.com/csi-node-proxy/csi-node-proxy/groups"
)

// API is one servable group-version.
type API struct {
	// Group is the group's name as it appears in endpoint names: disk,
	// volume, filesystem, smb, iscsi or system.
	Group string
	// Version is the API version, e.g. v1 or v1alpha2.
	Version string
	// Service is the fully qualified gRPC service name, e.g. v1.Disk.
	Service string
	// Register adds the group-version's gRPC service to s, backed by
	// its group's field of g.
	Register func(s grpc.ServiceRegistrar, g groups.Set)
}

// Name returns the endpoint name of the group-version:
// csi-proxy-<group>-<version>, as upstream names its pipes.
func (a API) Name() string { return "csi-proxy-" + a.Group + "-" + a.Version }

// All returns every group-version the daemon can serve, ordered by group
// and then from the oldest to the newest version.
func All() []API { return append([]API(nil), generated...) }
