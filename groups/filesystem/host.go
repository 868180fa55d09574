package filesystem

import "context"

// Host is what a host backend provides for the filesystem group. Paths are
// cleaned and inside the working directories when the Service calls it.
type Host interface {
	// PathExists tells whether path exists, without following a final link.
	PathExists(ctx context.Context, path string) (bool, error)
	// Mkdir creates path and missing parents; an existing directory is
	// success, an existing non-directory is errdefs.ErrAlreadyExists.
	Mkdir(ctx context.Context, path string) error
	// Rmdir removes path: a symlink or mount point itself, an empty
	// directory, or with force a tree (never descending into a mount point
	// or following a link). A missing path is errdefs.ErrNotFound; a
	// non-empty directory without force is errdefs.ErrFailedPrecondition.
	Rmdir(ctx context.Context, path string, force bool) error
	// RmdirContents removes every entry inside the directory path, with the
	// same care for links and mount points as Rmdir with force. A link or
	// mount point at path itself is followed (its target's entries are
	// removed), as upstream does by opening the directory.
	RmdirContents(ctx context.Context, path string) error
	// CreateSymlink creates a directory link at link pointing to source. An
	// existing link to the same source is success.
	CreateSymlink(ctx context.Context, source, link string) error
	// IsSymlink tells whether path is a symlink or mount point whose target
	// exists.
	IsSymlink(ctx context.Context, path string) (bool, error)
}
