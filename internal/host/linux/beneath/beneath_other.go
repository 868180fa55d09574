//go:build !linux

package beneath

import (
	"runtime"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// errUnsupported is every opening operation's error off Linux: openat2(2)
// and its RESOLVE_ flags are Linux's, and without them a path cannot be
// confined, so nothing is opened at all.
var errUnsupported = errdefs.Errorf(errdefs.ErrUnimplemented, "confined path resolution (openat2 with RESOLVE_BENEATH) is implemented only on Linux, not on %s", runtime.GOOS)

// Probe reports that the kernel cannot confine paths: off Linux it always
// fails with errdefs.ErrUnimplemented.
func Probe() error { return errUnsupported }

// Open would open what p names beneath its working directory; off Linux it
// always fails with errdefs.ErrUnimplemented.
func (r *Roots) Open(string) (int, error) { return -1, errUnsupported }

// MkdirAll would create and open the directory p names beneath its working
// directory; off Linux it always fails with errdefs.ErrUnimplemented.
func (r *Roots) MkdirAll(string) (int, error) { return -1, errUnsupported }

// Parent would open the directory holding p's last element beneath its
// working directory; off Linux it always fails with
// errdefs.ErrUnimplemented.
func (r *Roots) Parent(string) (int, string, error) { return -1, "", errUnsupported }
