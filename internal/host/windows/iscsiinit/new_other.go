//go:build !windows

package iscsiinit

import "github.com/csi-node-proxy/csi-node-proxy/errdefs"

// New fails off Windows: this backend calls iscsidsc.dll. The constructor
// exists on every OS so that wiring code compiles everywhere.
func New() (*Host, error) {
	return nil, errdefs.Errorf(errdefs.ErrUnimplemented, "the Windows iSCSI backend runs only on Windows")
}
