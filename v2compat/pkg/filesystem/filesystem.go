// Package filesystem forwards to github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/filesystem: it is
// upstream v2's pkg/filesystem when this module stands in for
// github.com/kubernetes-csi/csi-proxy/v2 by a replace line. It imports no
// package of this module, only the root module's, so the same file
// compiles under either module path (see the module's doc.go).
package filesystem

import (
	impl "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/filesystem"
	implapi "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/filesystem/hostapi"
)

// Interface is impl.Interface.
type Interface = impl.Interface

// PathValidRequest is impl.PathValidRequest.
type PathValidRequest = impl.PathValidRequest

// PathValidResponse is impl.PathValidResponse.
type PathValidResponse = impl.PathValidResponse

// Filesystem is impl.Filesystem.
type Filesystem = impl.Filesystem

// PathExistsRequest is impl.PathExistsRequest.
type PathExistsRequest = impl.PathExistsRequest

// PathExistsResponse is impl.PathExistsResponse.
type PathExistsResponse = impl.PathExistsResponse

// MkdirRequest is impl.MkdirRequest.
type MkdirRequest = impl.MkdirRequest

// MkdirResponse is impl.MkdirResponse.
type MkdirResponse = impl.MkdirResponse

// RmdirRequest is impl.RmdirRequest.
type RmdirRequest = impl.RmdirRequest

// RmdirResponse is impl.RmdirResponse.
type RmdirResponse = impl.RmdirResponse

// RmdirContentsRequest is impl.RmdirContentsRequest.
type RmdirContentsRequest = impl.RmdirContentsRequest

// RmdirContentsResponse is impl.RmdirContentsResponse.
type RmdirContentsResponse = impl.RmdirContentsResponse

// CreateSymlinkRequest is impl.CreateSymlinkRequest.
type CreateSymlinkRequest = impl.CreateSymlinkRequest

// CreateSymlinkResponse is impl.CreateSymlinkResponse.
type CreateSymlinkResponse = impl.CreateSymlinkResponse

// IsSymlinkRequest is impl.IsSymlinkRequest.
type IsSymlinkRequest = impl.IsSymlinkRequest

// IsSymlinkResponse is impl.IsSymlinkResponse.
type IsSymlinkResponse = impl.IsSymlinkResponse

// New is impl.New.
func New(hostAPI implapi.HostAPI) (*Filesystem, error) { return impl.New(hostAPI) }
