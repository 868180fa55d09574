package disk

import "context"

// Host is what a host backend provides for the disk group. The Service
// validates requests before calling it, so a Host may assume well-formed
// arguments; it still reports a disk that does not exist with an error
// wrapping errdefs.ErrNotFound.
type Host interface {
	// ListDiskLocations returns the location of every disk that has one.
	ListDiskLocations(ctx context.Context) (map[uint32]DiskLocation, error)
	// ListDiskIDs returns the identifiers of every disk.
	ListDiskIDs(ctx context.Context) (map[uint32]DiskIDs, error)
	// PartitionDisk initialises a raw disk with GPT and creates one data
	// partition spanning it. It must succeed without change when the disk
	// already has a data partition.
	PartitionDisk(ctx context.Context, disk uint32) error
	// Rescan refreshes the host's view of disks.
	Rescan(ctx context.Context) error
	// DiskSize returns the disk's size in bytes.
	DiskSize(ctx context.Context, disk uint32) (int64, error)
	// SetDiskOnline brings the disk online (true) or offline (false); it is
	// a no-op when the disk is already in that state.
	SetDiskOnline(ctx context.Context, disk uint32, online bool) error
	// IsDiskOnline tells whether the disk is online.
	IsDiskOnline(ctx context.Context, disk uint32) (bool, error)
	// SetDiskReadOnly sets (true) or clears (false) the disk's read-only
	// attribute; it is a no-op when the disk already has it.
	SetDiskReadOnly(ctx context.Context, disk uint32, readOnly bool) error
	// IsDiskReadOnly tells whether the disk is read-only.
	IsDiskReadOnly(ctx context.Context, disk uint32) (bool, error)
}
