//go:build !linux

package driver

import (
	"context"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// LoopAllocator allocates disks as loop devices, which exist only on
// Linux: elsewhere every call fails (use SimAllocator on the simulated
// host).
type LoopAllocator struct {
	// Dir holds the backing files.
	Dir string
}

// NewLoopAllocator fails: loop devices are Linux's.
func NewLoopAllocator(dir string) (*LoopAllocator, error) { return nil, errNoLoop }

var errNoLoop = errdefs.Errorf(errdefs.ErrUnimplemented, "loop disks need Linux")

// Create implements Allocator by failing.
func (*LoopAllocator) Create(context.Context, string, int64) (Disk, error) { return Disk{}, errNoLoop }

// Get implements Allocator by failing.
func (*LoopAllocator) Get(context.Context, string) (Disk, error) { return Disk{}, errNoLoop }

// Expand implements Allocator by failing.
func (*LoopAllocator) Expand(context.Context, string, int64) (Disk, error) { return Disk{}, errNoLoop }

// Delete implements Allocator by failing.
func (*LoopAllocator) Delete(context.Context, string) error { return errNoLoop }
