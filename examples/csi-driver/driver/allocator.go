package driver

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
)

// Disk is a disk the controller allocated for one volume.
type Disk struct {
	// ID is the volume ID.
	ID string
	// Size is the disk's size in bytes.
	Size int64
	// Serial is the SerialNumber the proxy's ListDiskIDs reports for the
	// disk: how the node side finds it (mounter.FindDiskBySerial), as
	// aws-ebs finds its volumes. For a loop disk it is the backing file's
	// path (docs/linux.md, Identities).
	Serial string
}

// Allocator makes and removes the disks behind volumes on this node: the
// part of a local-disk driver that a cloud's API plays for a cloud
// driver. It is pluggable because what can make a disk depends on the
// node: loop devices over sparse files on Linux (LoopAllocator), the
// simulated host's AddDisk (SimAllocator), where no loop device can
// exist.
//
// Every method is idempotent, as CSI's controller calls must be.
type Allocator interface {
	// Create makes the disk of volume id with size bytes, or returns the
	// existing one as it is (the caller compares sizes).
	Create(ctx context.Context, id string, size int64) (Disk, error)
	// Get returns the disk of volume id; errdefs.ErrNotFound if there is
	// none.
	Get(ctx context.Context, id string) (Disk, error)
	// Expand grows the disk of volume id to at least size bytes (never
	// shrinks it) and returns it.
	Expand(ctx context.Context, id string, size int64) (Disk, error)
	// Delete removes the disk of volume id; one that is gone is success.
	// A disk still in use is errdefs.ErrFailedPrecondition.
	Delete(ctx context.Context, id string) error
}

// validID is what volume IDs look like (see volumeID): anything else
// names no volume, and is never used in a file name.
var validID = regexp.MustCompile(`^ld-[0-9a-f]{32}$`)

// SimAllocator allocates disks on the simulated Windows host
// (host/simulated) with AddDisk, ResizeDisk and RemoveDisk: the
// simulated host has no loop devices, and its disks are whatever the
// test world says they are. Each disk gets its volume ID as serial
// number. It is for library mode with inprocess.HostSimulated (the host
// is inprocess.Node.Simulated()) and for tests that serve a simulated
// host through the daemon's sockets.
type SimAllocator struct {
	// Host is the simulated host the disks are attached to.
	Host *simulated.Host

	mu    sync.Mutex
	disks map[string]uint32 // volume ID -> disk number
}

// NewSimAllocator returns a SimAllocator on h.
func NewSimAllocator(h *simulated.Host) *SimAllocator {
	return &SimAllocator{Host: h, disks: map[string]uint32{}}
}

// Create implements Allocator.
func (a *SimAllocator) Create(ctx context.Context, id string, size int64) (Disk, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if d, err := a.get(id); err == nil {
		return d, nil
	}
	n, err := a.Host.AddDisk(simulated.DiskSpec{Size: simulated.Size(size), Serial: id})
	if err != nil {
		return Disk{}, fmt.Errorf("add a simulated disk of %d bytes: %w", size, err)
	}
	a.disks[id] = n
	return a.get(id)
}

// Get implements Allocator.
func (a *SimAllocator) Get(ctx context.Context, id string) (Disk, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.get(id)
}

func (a *SimAllocator) get(id string) (Disk, error) {
	n, ok := a.disks[id]
	if !ok {
		return Disk{}, errdefs.Errorf(errdefs.ErrNotFound, "no volume %q", id)
	}
	for _, d := range a.Host.ListDisks() {
		if d.Number == n {
			return Disk{ID: id, Size: d.Size, Serial: id}, nil
		}
	}
	return Disk{}, errdefs.Errorf(errdefs.ErrNotFound, "the disk of volume %q (disk %d) is gone", id, n)
}

// Expand implements Allocator.
func (a *SimAllocator) Expand(ctx context.Context, id string, size int64) (Disk, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	d, err := a.get(id)
	if err != nil {
		return Disk{}, err
	}
	if size <= d.Size {
		return d, nil
	}
	if err := a.Host.ResizeDisk(a.disks[id], size); err != nil {
		return Disk{}, fmt.Errorf("grow the disk of volume %s: %w", id, err)
	}
	return a.get(id)
}

// Delete implements Allocator. A disk with a mounted volume is refused
// (the simulated host would let it go, as a cloud detach would).
func (a *SimAllocator) Delete(ctx context.Context, id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, ok := a.disks[id]
	if !ok {
		return nil
	}
	for _, v := range a.Host.ListVolumes() {
		if v.Disk == n && len(v.MountPoints) > 0 {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "volume %s is mounted at %v", id, v.MountPoints)
		}
	}
	if err := a.Host.RemoveDisk(n); err != nil && !errors.Is(err, errdefs.ErrNotFound) {
		return fmt.Errorf("remove the disk of volume %s: %w", id, err)
	}
	delete(a.disks, id)
	return nil
}
