// Package filesystem is the filesystem API group: checking, creating,
// linking and removing paths inside the proxy's working directories.
//
// See package groups for how the pieces fit together.
package filesystem

import "context"

// Interface is the filesystem group as drivers call it, in-process or
// through the daemon. Every path must lie inside a working directory;
// errors wrap errdefs sentinels.
type Interface interface {
	// PathExists tells whether the path exists, without following a link.
	//convgen:read
	PathExists(context.Context, *PathExistsRequest) (*PathExistsResponse, error)
	// Mkdir creates the directory and missing parents; an existing directory
	// is success.
	//convgen:mutates
	Mkdir(context.Context, *MkdirRequest) (*MkdirResponse, error)
	// Rmdir removes an empty directory, or with Force a whole tree. A
	// symlink or mount point is removed itself, never its target. With
	// Force a path that does not exist is success (as upstream); without,
	// it is errdefs.ErrNotFound. A working directory itself is refused
	// with errdefs.ErrPermissionDenied.
	//convgen:mutates
	Rmdir(context.Context, *RmdirRequest) (*RmdirResponse, error)
	// RmdirContents removes everything inside the directory and keeps it;
	// a working directory itself is refused, as for Rmdir.
	//convgen:mutates
	RmdirContents(context.Context, *RmdirContentsRequest) (*RmdirContentsResponse, error)
	// CreateSymlink creates a link at TargetPath pointing to SourcePath.
	// TargetPath must lie below a working directory, not be one.
	//convgen:mutates
	CreateSymlink(context.Context, *CreateSymlinkRequest) (*CreateSymlinkResponse, error)
	// IsSymlink tells whether the path is a symlink or mount point whose
	// target exists.
	//convgen:read
	IsSymlink(context.Context, *IsSymlinkRequest) (*IsSymlinkResponse, error)
}

// PathExistsRequest names a path.
type PathExistsRequest struct {
	Path string `guard:"path"`
}

// PathExistsResponse tells whether it exists.
type PathExistsResponse struct {
	Exists bool
}

// MkdirRequest names the directory to create.
type MkdirRequest struct {
	Path string `guard:"path"`
}

// MkdirResponse is empty.
type MkdirResponse struct{}

// RmdirRequest names the directory to remove.
type RmdirRequest struct {
	Path  string `guard:"path"`
	Force bool   `guard:"-"`
}

// RmdirResponse is empty.
type RmdirResponse struct{}

// RmdirContentsRequest names the directory to empty.
type RmdirContentsRequest struct {
	Path string `guard:"path"`
}

// RmdirContentsResponse is empty.
type RmdirContentsResponse struct{}

// CreateSymlinkRequest names the link and what it points to.
type CreateSymlinkRequest struct {
	// SourcePath is the existing directory the link points to.
	SourcePath string `guard:"path"`
	// TargetPath is the link to create.
	TargetPath string `guard:"path"`
}

// CreateSymlinkResponse is empty.
type CreateSymlinkResponse struct{}

// IsSymlinkRequest names a path.
type IsSymlinkRequest struct {
	Path string `guard:"path"`
}

// IsSymlinkResponse tells whether it is a link or mount point.
type IsSymlinkResponse struct {
	IsSymlink bool
}
