//go:build !windows

package services

import "github.com/csi-node-proxy/csi-node-proxy/errdefs"

// New fails off Windows: this backend talks to the Windows service
// control manager and firmware tables. The constructor exists on every OS
// so that wiring code compiles everywhere.
func New() (*Host, error) {
	return nil, errdefs.Errorf(errdefs.ErrUnimplemented, "the Windows system backend runs only on Windows")
}
