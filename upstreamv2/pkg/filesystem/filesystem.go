// Package filesystem is upstream v2's pkg/filesystem (kubernetes-csi/csi-proxy branch
// library-development at e776c65, pkg/filesystem/filesystem.go, filesystem/types.go) on csi-node-proxy's
// library mode: New(hostapi.New()) gives the filesystem group of the process's
// library-mode node (package upstreamv2), whose calls pass the daemon's
// validation, policy gate and audit log.
package filesystem

import (
	"context"

	model "github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	filesystemapi "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/filesystem/hostapi"
)

// Interface is upstream v2's filesystem.Interface: the group model's
// methods and PathValid, which no wire version has.
type Interface interface {
	model.Interface
	// PathValid tells whether the path can be reached (see
	// Filesystem.PathValid for how far that goes here).
	PathValid(context.Context, *PathValidRequest) (*PathValidResponse, error)
}

// PathValidRequest is upstream v2's filesystem.PathValidRequest.
type PathValidRequest struct {
	// Path is the path to check, in the host's filesystem.
	Path string
}

// PathValidResponse is upstream v2's filesystem.PathValidResponse.
type PathValidResponse struct {
	// Valid tells whether the path can be reached.
	Valid bool
}

// Filesystem is what New returns, as upstream's *filesystem.Filesystem.
type Filesystem struct {
	model.Interface
}

var _ Interface = (*Filesystem)(nil)

// New returns the filesystem group hostAPI leads to.
func New(hostAPI filesystemapi.HostAPI) (*Filesystem, error) {
	g, err := hostAPI.Group()
	if err != nil {
		return nil, err
	}
	return &Filesystem{Interface: g}, nil
}

// PathValid answers upstream's PathValid (pkg/filesystem/filesystem.go
// and pkg/utils/utils.go at e776c65: GetFileAttributesW on the path,
// which follows links; false when the path, file or name is not found)
// with the group's PathExists, gated and audited as a read. It differs
// from upstream for a link whose target is gone (a dangling SMB link after
// its mapping went away): upstream reports it invalid, this valid, because
// no group method follows a link to test its target (IsSymlink is false
// both for a plain path and for such a link). Not done: a group method
// that follows links.
func (f *Filesystem) PathValid(ctx context.Context, r *PathValidRequest) (*PathValidResponse, error) {
	if r == nil {
		r = &PathValidRequest{}
	}
	e, err := f.PathExists(ctx, &model.PathExistsRequest{Path: r.Path})
	if err != nil {
		return nil, err
	}
	return &PathValidResponse{Valid: e.Exists}, nil
}
