package objecthost

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sys/windows"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// osVolumeMounts asks Windows for every path of a volume: its drive
// letter root and every folder it is mounted on.
func osVolumeMounts(_ context.Context, id string) ([]string, error) {
	name, err := windows.UTF16PtrFromString(id)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "volume %q: %v", id, err)
	}
	n := uint32(1024)
	for range 4 {
		buf := make([]uint16, n)
		err = windows.GetVolumePathNamesForVolumeName(name, &buf[0], n, &n)
		switch {
		case err == nil:
			var out []string
			start := 0
			for i, c := range buf {
				if c != 0 {
					continue
				}
				if i == start {
					return out, nil
				}
				out = append(out, windows.UTF16ToString(buf[start:i]))
				start = i + 1
			}
			return out, nil
		case errors.Is(err, windows.ERROR_MORE_DATA):
			continue
		case errors.Is(err, windows.ERROR_FILE_NOT_FOUND), errors.Is(err, windows.ERROR_INVALID_NAME):
			return nil, errdefs.Errorf(errdefs.ErrNotFound, "no volume %s", id)
		}
		return nil, fmt.Errorf("paths of volume %s: %w", id, err)
	}
	return nil, fmt.Errorf("paths of volume %s: the list kept growing: %w", id, errdefs.ErrUnavailable)
}
