// Package diskid converts the disk IDs of the API versions before v1beta3,
// where upstream csi-proxy named a disk by its number written as a decimal
// string (a diskID or disk_id field, or a map key), to and from the model's
// uint32 disk numbers. The older adapters' generated //convgen:diskid
// conversions, and disk v1alpha1's hand-written GetDiskNumberByName, call
// it.
package diskid

import (
	"strconv"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// Parse returns the disk number a disk ID names. Like upstream it accepts
// decimal digits only (strconv.ParseUint); unlike upstream, which truncated
// to 32 bits, a number beyond uint32 is refused rather than wrapped onto
// another disk. Anything else is errdefs.ErrInvalidArgument.
func Parse(id string) (uint32, error) {
	n, err := strconv.ParseUint(id, 10, 32)
	if err != nil {
		return 0, errdefs.Errorf(errdefs.ErrInvalidArgument, "disk ID %q is not a disk number", id)
	}
	return uint32(n), nil
}

// Format writes a disk number as a disk ID.
func Format(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

// FormatKeys converts a map keyed by disk number into one keyed by disk ID,
// converting each value with conv. A nil map stays nil.
func FormatKeys[V, W any](m map[uint32]V, conv func(V) W) map[string]W {
	if m == nil {
		return nil
	}
	out := make(map[string]W, len(m))
	for n, v := range m {
		out[Format(n)] = conv(v)
	}
	return out
}
