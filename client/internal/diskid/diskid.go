// Package diskid converts the model's uint32 disk numbers to and from the
// disk IDs of the API versions before v1beta3, where upstream csi-proxy
// named a disk by its number written as a decimal string (a diskID or
// disk_id field, or a map key) or, in volume's GetVolumeDiskNumber, as an
// int64. The client stubs' generated //convgen:diskid conversions call
// it; the daemon's adapters have their own copy in the main module's
// internal/adapter/diskid, which a client must not link (it sits among the
// daemon's packages, and the client's dependency test allows none of them).
package diskid

import (
	"fmt"
	"math"
	"strconv"
)

// Format writes a disk number as a disk ID.
func Format(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

// Parse returns the disk number a disk ID from the daemon names. A key that
// is not a decimal uint32 is a malformed answer: the error wraps no errdefs
// sentinel, so errgrpc.Code calls it Internal, as a host failure would be.
func Parse(id string) (uint32, error) {
	n, err := strconv.ParseUint(id, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("the daemon answered with disk ID %q, which is not a disk number", id)
	}
	return uint32(n), nil
}

// ParseKeys converts a map keyed by disk ID into one keyed by disk number,
// converting each value with conv. A nil map becomes an empty one, as the
// generated conversions make every list and map of a response (library
// mode never answers nil).
func ParseKeys[V, W any](m map[string]V, conv func(V) W) (map[uint32]W, error) {
	out := make(map[uint32]W, len(m))
	for id, v := range m {
		n, err := Parse(id)
		if err != nil {
			return nil, err
		}
		if _, dup := out[n]; dup {
			return nil, fmt.Errorf("the daemon answered with two disk IDs for disk %d", n)
		}
		out[n] = conv(v)
	}
	return out, nil
}

// FromInt64 returns the disk number the daemon sent as an int64 (volume
// v1beta1 and v1beta2's GetVolumeDiskNumber; v1beta3 made it a uint32). A
// number that does not fit is a malformed answer, not one to wrap onto
// another disk.
func FromInt64(n int64) (uint32, error) {
	if n < 0 || n > math.MaxUint32 {
		return 0, fmt.Errorf("the daemon answered with disk number %d, which is not a uint32", n)
	}
	return uint32(n), nil
}
