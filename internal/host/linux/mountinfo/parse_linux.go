package mountinfo

import (
	"fmt"
	"io"

	moby "github.com/moby/sys/mountinfo"
)

// Parse parses a mountinfo table with moby's parser and converts its
// entries to Mount.
func Parse(r io.Reader) ([]Mount, error) {
	infos, err := moby.GetMountsFromReader(r, nil)
	if err != nil {
		return nil, fmt.Errorf("mountinfo: %w", err)
	}
	out := make([]Mount, len(infos))
	for i, in := range infos {
		if in.Major < 0 || in.Minor < 0 {
			return nil, fmt.Errorf("mountinfo: mount %d has a negative device number %d:%d", in.ID, in.Major, in.Minor)
		}
		out[i] = Mount{
			ID: in.ID, ParentID: in.Parent,
			Major: uint32(in.Major), Minor: uint32(in.Minor), //nolint:gosec // checked non-negative above; the kernel prints 32-bit numbers
			Root: in.Root, MountPoint: in.Mountpoint, Options: in.Options,
			FSType: in.FSType, Source: in.Source, SuperOptions: in.VFSOptions,
		}
	}
	return out, nil
}
