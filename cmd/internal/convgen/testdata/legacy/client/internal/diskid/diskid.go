// Package diskid stands in for client/internal/diskid (internal to
// package client, so this tree cannot import it): the functions the
// generated client stubs call, with the same signatures.
package diskid

import (
	"fmt"
	"math"
	"strconv"
)

// Format writes a disk number as a disk ID.
func Format(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

// Parse returns the disk number a disk ID names.
func Parse(id string) (uint32, error) {
	n, err := strconv.ParseUint(id, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("disk ID %q is not a disk number", id)
	}
	return uint32(n), nil
}

// ParseKeys converts a map keyed by disk ID into one keyed by disk number.
func ParseKeys[V, W any](m map[string]V, conv func(V) W) (map[uint32]W, error) {
	out := make(map[uint32]W, len(m))
	for id, v := range m {
		n, err := Parse(id)
		if err != nil {
			return nil, err
		}
		out[n] = conv(v)
	}
	return out, nil
}

// FromInt64 returns the disk number an int64 carries.
func FromInt64(n int64) (uint32, error) {
	if n < 0 || n > math.MaxUint32 {
		return 0, fmt.Errorf("disk number %d is not a uint32", n)
	}
	return uint32(n), nil
}
