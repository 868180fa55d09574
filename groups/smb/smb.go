// Package smb is the SMB API group: node-wide (global) mappings of SMB
// shares, optionally linked into a working directory.
//
// Passwords are secrets: nothing in this package logs or formats them into
// errors. See package groups for how the pieces fit together.
package smb

import "context"

// Interface is the SMB group as drivers call it, in-process or through the
// daemon. Errors wrap errdefs sentinels.
type Interface interface {
	// NewSmbGlobalMapping maps the share of RemotePath for the node with
	// the credentials and, when LocalPath is set, links LocalPath to
	// RemotePath. An existing healthy mapping of the share is reused; a
	// stale one is re-created.
	//convgen:mutates
	NewSmbGlobalMapping(context.Context, *NewSmbGlobalMappingRequest) (*NewSmbGlobalMappingResponse, error)
	// RemoveSmbGlobalMapping removes the mapping of RemotePath's share.
	//convgen:mutates
	RemoveSmbGlobalMapping(context.Context, *RemoveSmbGlobalMappingRequest) (*RemoveSmbGlobalMappingResponse, error)
}

// NewSmbGlobalMappingRequest describes a mapping.
type NewSmbGlobalMappingRequest struct {
	// RemotePath is \\server\share or a path below it.
	RemotePath string `guard:"-"`
	// LocalPath, if set, becomes a link to RemotePath.
	LocalPath string `guard:"path"`
	Username  string `guard:"-"`
	// Password is a secret.
	Password string `guard:"secret"`
}

// NewSmbGlobalMappingResponse is empty.
type NewSmbGlobalMappingResponse struct{}

// RemoveSmbGlobalMappingRequest names the share to unmap.
type RemoveSmbGlobalMappingRequest struct {
	RemotePath string `guard:"-"`
}

// RemoveSmbGlobalMappingResponse is empty.
type RemoveSmbGlobalMappingResponse struct{}
