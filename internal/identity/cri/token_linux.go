//go:build linux

package cri

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/beneath"
)

// nativeStyle is the path style of the host the daemon runs on, which
// kubelet's paths in the runtime's answers use.
const nativeStyle = hostpath.POSIX

// readToken reads the token file of pod podUID's projected volume below
// the kubelet directory, at most maxTokenSize bytes.
//
// The kubelet directory's own path is configuration and is opened as it
// is (it is often a link to a data disk). Below it, the volume directory
// is opened with openat2 and RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, so no
// link on the way (a planted pods/<uid> link, a volume that is a link)
// is followed. The token itself is a link in kubelet's layout (token ->
// ..data/token, ..data -> ..<timestamp>, written by its atomic writer),
// so it is opened relative to the volume directory with RESOLVE_BENEATH:
// relative links that stay inside the volume are followed, and any link
// that leaves it, absolute or by "..", is refused by the kernel. Only a
// regular file is read (O_NONBLOCK keeps a FIFO from blocking the open).
func readToken(kubelet, podUID, volume string) ([]byte, error) {
	root, err := unix.Open(kubelet, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the kubelet directory %s: %w", kubelet, err)
	}
	defer beneath.Close(root)
	rel := "pods/" + podUID + "/volumes/" + projectedDir + "/" + volume
	dir, err := beneath.Openat2(root, rel, unix.O_PATH|unix.O_DIRECTORY, beneath.Resolve|unix.RESOLVE_NO_SYMLINKS)
	if err != nil {
		return nil, fmt.Errorf("open the volume directory: %w", err)
	}
	defer beneath.Close(dir)
	fd, err := beneath.Openat2(dir, tokenFile, unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK, beneath.Resolve)
	if err != nil {
		if errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ELOOP) {
			return nil, errors.New("the token file leads out of its volume")
		}
		return nil, fmt.Errorf("open the token file: %w", err)
	}
	f := os.NewFile(uintptr(fd), tokenFile)
	defer func() { _ = f.Close() }() // read-only: closing cannot lose data
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("stat the token file: %w", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, errors.New("the token is not a regular file")
	}
	return readTokenFile(f, uint64(st.Size)) // a regular file's size is not negative
}
