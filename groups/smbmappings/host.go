package smbmappings

import (
	"context"
	"time"
)

// Mapping is one SMB global mapping as a Host reports it.
type Mapping struct {
	// Share is the mapping's remote path, \\server\share, in any case.
	Share string
	// Status is one of the Status constants (never StatusMissing).
	Status string
	// Created is when the mapping was made, zero when the host does not
	// record it (Windows does not).
	Created time.Time
}

// Link is a symbolic link or junction found under a working directory.
type Link struct {
	// Path is the link's own path.
	Path string
	// Target is where it leads, as the host stores it (\\server\share\dir\,
	// \\?\UNC\server\share\dir, upstream's \\?\\\server\share\dir\, or a
	// local path); the Service picks out the SMB ones.
	Target string
}

// Host is what a host backend provides for the SMB mappings group. Changes
// (removing and re-creating mappings) go through the SMB group's Host, so
// that one backend and one per-share lock serve both groups.
type Host interface {
	// ListSmbGlobalMappings returns every SMB global mapping of the node.
	ListSmbGlobalMappings(ctx context.Context) ([]Mapping, error)
	// ListSmbLinks returns the symbolic links and junctions under roots
	// (each root an existing or missing directory; a missing root has no
	// links). The walk never follows a link or enters a mounted volume,
	// so it stays on the node's own directories and never lists a share.
	ListSmbLinks(ctx context.Context, roots []string) ([]Link, error)
}
