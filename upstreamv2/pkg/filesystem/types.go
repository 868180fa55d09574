package filesystem

// The request, response and value types of upstream v2's pkg/filesystem
// (kubernetes-csi/csi-proxy branch library-development at e776c65,
// pkg/filesystem/types.go), as aliases of this repository's group model
// (groups/filesystem), which carries upstream's names: a value built here is the
// group's own, so it goes through library mode unconverted.

import model "github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"

// PathExistsRequest is upstream v2's filesystem.PathExistsRequest: model.PathExistsRequest.
type PathExistsRequest = model.PathExistsRequest

// PathExistsResponse is upstream v2's filesystem.PathExistsResponse: model.PathExistsResponse.
type PathExistsResponse = model.PathExistsResponse

// MkdirRequest is upstream v2's filesystem.MkdirRequest: model.MkdirRequest.
type MkdirRequest = model.MkdirRequest

// MkdirResponse is upstream v2's filesystem.MkdirResponse: model.MkdirResponse.
type MkdirResponse = model.MkdirResponse

// RmdirRequest is upstream v2's filesystem.RmdirRequest: model.RmdirRequest.
type RmdirRequest = model.RmdirRequest

// RmdirResponse is upstream v2's filesystem.RmdirResponse: model.RmdirResponse.
type RmdirResponse = model.RmdirResponse

// RmdirContentsRequest is upstream v2's filesystem.RmdirContentsRequest: model.RmdirContentsRequest.
type RmdirContentsRequest = model.RmdirContentsRequest

// RmdirContentsResponse is upstream v2's filesystem.RmdirContentsResponse: model.RmdirContentsResponse.
type RmdirContentsResponse = model.RmdirContentsResponse

// CreateSymlinkRequest is upstream v2's filesystem.CreateSymlinkRequest: model.CreateSymlinkRequest.
type CreateSymlinkRequest = model.CreateSymlinkRequest

// CreateSymlinkResponse is upstream v2's filesystem.CreateSymlinkResponse: model.CreateSymlinkResponse.
type CreateSymlinkResponse = model.CreateSymlinkResponse

// IsSymlinkRequest is upstream v2's filesystem.IsSymlinkRequest: model.IsSymlinkRequest.
type IsSymlinkRequest = model.IsSymlinkRequest

// IsSymlinkResponse is upstream v2's filesystem.IsSymlinkResponse: model.IsSymlinkResponse.
type IsSymlinkResponse = model.IsSymlinkResponse
