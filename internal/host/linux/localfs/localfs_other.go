//go:build !linux

package localfs

import (
	"context"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// errUnsupported is every operation's error off Linux: the package exists
// there only so that cross-platform wiring compiles.
var errUnsupported = errdefs.Errorf(errdefs.ErrUnimplemented, "localfs: the local POSIX filesystem backend is implemented only on Linux")

// PathExists implements filesystem.Host; off Linux it always fails.
func (f *FS) PathExists(context.Context, string) (bool, error) { return false, errUnsupported }

// Mkdir implements filesystem.Host; off Linux it always fails.
func (f *FS) Mkdir(context.Context, string) error { return errUnsupported }

// Rmdir implements filesystem.Host; off Linux it always fails.
func (f *FS) Rmdir(context.Context, string, bool) error { return errUnsupported }

// RmdirContents implements filesystem.Host; off Linux it always fails.
func (f *FS) RmdirContents(context.Context, string) error { return errUnsupported }

// CreateSymlink implements filesystem.Host; off Linux it always fails.
func (f *FS) CreateSymlink(context.Context, string, string) error { return errUnsupported }

// IsSymlink implements filesystem.Host; off Linux it always fails.
func (f *FS) IsSymlink(context.Context, string) (bool, error) { return false, errUnsupported }
