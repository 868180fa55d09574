//go:build !windows

package storage

import "github.com/csi-node-proxy/csi-node-proxy/errdefs"

// newSystem reports that the backend needs Windows: there is no silent
// fallback.
func newSystem() (system, error) {
	return nil, errdefs.Errorf(errdefs.ErrUnimplemented, "the Windows storage backend runs only on Windows")
}
