//go:build !windows

package smbmap

import "github.com/csi-node-proxy/csi-node-proxy/errdefs"

// New fails off Windows: SMB global mappings are a Windows feature. The
// constructor exists on every OS so that wiring code compiles everywhere.
func New(cfg Config) (*Host, error) {
	return nil, errdefs.Errorf(errdefs.ErrUnimplemented, "the Windows SMB backend runs only on Windows")
}
