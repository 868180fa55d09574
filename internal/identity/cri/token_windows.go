package cri

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/windows"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// nativeStyle is the path style of the host the daemon runs on, which
// kubelet's paths in the runtime's answers use.
const nativeStyle = hostpath.Windows

// readToken reads the token file of pod podUID's projected volume below
// the kubelet directory, at most maxTokenSize bytes.
//
// Windows has no openat2: the file is opened by path, following reparse
// points as kubelet's own links (token -> ..data\token) need, and then
// the handle itself is asked where it lies (GetFinalPathNameByHandle).
// The data is read from that same handle only when its final path lies
// inside the volume directory, spelt from the kubelet directory's final
// path (configuration, which may itself be a link) and the expected
// elements; a link anywhere below the kubelet directory that leads
// elsewhere changes the final path, so it is refused. Checking the open
// handle, not a path, leaves no gap for a link swapped in between.
func readToken(kubelet, podUID, volume string) ([]byte, error) {
	rootFinal, err := finalPath(kubelet, true)
	if err != nil {
		return nil, fmt.Errorf("open the kubelet directory %s: %w", kubelet, err)
	}
	volFinal := rootFinal + `\pods\` + podUID + `\volumes\` + projectedDir + `\` + volume
	name := kubelet
	for _, e := range []string{"pods", podUID, "volumes", projectedDir, volume, tokenFile} {
		name = hostpath.Windows.Join(name, e) // no doubled separator after a drive root
	}
	h, err := open(name, false)
	if err != nil {
		return nil, fmt.Errorf("open the token file: %w", err)
	}
	f := os.NewFile(uintptr(h), tokenFile)
	defer func() { _ = f.Close() }() // read-only: closing cannot lose data
	final, err := handlePath(h)
	if err != nil {
		return nil, fmt.Errorf("find where the token file lies: %w", err)
	}
	if !strictlyBeneath(final, volFinal) {
		return nil, errors.New("the token file leads out of its volume")
	}
	if t, err := windows.GetFileType(h); err != nil || t != windows.FILE_TYPE_DISK {
		return nil, errors.New("the token is not a file")
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return nil, fmt.Errorf("stat the token file: %w", err)
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0 {
		return nil, errors.New("the token is not a regular file")
	}
	return readTokenFile(f, uint64(info.FileSizeHigh)<<32|uint64(info.FileSizeLow))
}

// open opens a file (or, with dir, a directory) for reading, following
// reparse points, sharing it with kubelet's writers.
func open(name string, dir bool) (windows.Handle, error) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return windows.InvalidHandle, err
	}
	flags := uint32(windows.FILE_ATTRIBUTE_NORMAL)
	if dir {
		flags |= windows.FILE_FLAG_BACKUP_SEMANTICS
	}
	return windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING, flags, 0)
}

// finalPath returns the final path of what name opens.
func finalPath(name string, dir bool) (string, error) {
	h, err := open(name, dir)
	if err != nil {
		return "", err
	}
	defer func() { _ = windows.CloseHandle(h) }() // a read-only handle: nothing to flush
	return handlePath(h)
}

// GetFinalPathNameByHandleW's flags (fileapi.h); x/sys/windows does not
// name them. Both are 0: a normalised name with its drive letter.
const (
	fileNameNormalized = 0x0
	volumeNameDOS      = 0x0
)

// handlePath returns the normalised DOS path (\\?\C:\...) of an open
// handle, every link resolved.
func handlePath(h windows.Handle) (string, error) {
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetFinalPathNameByHandle(h, &buf[0], uint32(len(buf)), fileNameNormalized|volumeNameDOS)
	if err != nil {
		return "", err
	}
	if int(n) >= len(buf) {
		return "", errors.New("the path is too long")
	}
	return strings.TrimSuffix(windows.UTF16ToString(buf[:n]), `\`), nil
}
