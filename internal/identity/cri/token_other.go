//go:build !linux && !windows

package cri

import (
	"runtime"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// nativeStyle is the path style of the host the daemon runs on.
const nativeStyle = hostpath.POSIX

// readToken would read a pod's ServiceAccount token; here it cannot be
// confined to the pod's volume directory, so it is never read.
func readToken(string, string, string) ([]byte, error) {
	return nil, errdefs.Errorf(errdefs.ErrUnimplemented, "reading ServiceAccount tokens confined to their volume is not implemented on %s", runtime.GOOS)
}
