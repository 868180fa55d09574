//go:build !linux

package blockdev

import (
	"context"
	"runtime"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// errPathsUnsupported is the error of every volume method that takes a
// caller's path, off Linux: such paths are confined with openat2(2)
// (package beneath), which only Linux has, and an unconfined path must not
// be acted on.
var errPathsUnsupported = errdefs.Errorf(errdefs.ErrUnimplemented, "the Linux block device backend resolves mount targets with openat2, which %s lacks", runtime.GOOS)

// MountVolume implements volume.Host; off Linux it always fails.
func (b *Backend) MountVolume(context.Context, string, string) error { return errPathsUnsupported }

// UnmountVolume implements volume.Host; off Linux it always fails.
func (b *Backend) UnmountVolume(context.Context, string, string) error { return errPathsUnsupported }

// lookupPath would resolve p beneath its working directory; off Linux it
// always fails.
func (b *Backend) lookupPath(string, string) (*resolvedPath, error) {
	return nil, errPathsUnsupported
}
