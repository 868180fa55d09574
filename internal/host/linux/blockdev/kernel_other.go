//go:build !linux

package blockdev

import (
	"runtime"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// newKernel fails: block devices, BLKPG and mount(2) are Linux's. The
// package still builds elsewhere so its parsers and decision logic are
// tested on every OS the project builds on.
func newKernel() (kernel, error) {
	return nil, errdefs.Errorf(errdefs.ErrUnimplemented, "the Linux block device backend cannot run on %s", runtime.GOOS)
}
