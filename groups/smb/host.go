package smb

import "context"

// Mapping is a validated mapping request as the Service hands it to a Host.
type Mapping struct {
	// Share is the normalised share root, \\server\share, lower-cased.
	Share string
	// RemotePath is the full normalised remote path (Share or below it);
	// the local link points here.
	RemotePath string
	// LocalPath is the cleaned link path inside a working directory, or "".
	LocalPath string
	Username  string
	// Password is a secret: never log it or put it in an error.
	Password string
}

// Host is what a host backend provides for the SMB group.
type Host interface {
	// NewSmbGlobalMapping maps m.Share with m's credentials (re-creating a
	// stale mapping) and links m.LocalPath to m.RemotePath when set. Wrong
	// credentials are errdefs.ErrPermissionDenied; a missing share or a
	// server name that does not resolve is errdefs.ErrNotFound; a server
	// that does not answer is errdefs.ErrUnavailable (worth a retry).
	NewSmbGlobalMapping(ctx context.Context, m Mapping) error
	// RemoveSmbGlobalMapping removes the mapping of share; a share that is
	// not mapped is errdefs.ErrNotFound.
	RemoveSmbGlobalMapping(ctx context.Context, share string) error
}
