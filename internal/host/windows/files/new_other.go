//go:build !windows

package files

import "github.com/csi-node-proxy/csi-node-proxy/errdefs"

// New fails off Windows: this backend makes Win32 calls only. The
// constructor exists on every OS so that wiring code compiles everywhere.
func New() (*Host, error) {
	return nil, errdefs.Errorf(errdefs.ErrUnimplemented, "the Windows filesystem backend runs only on Windows")
}
