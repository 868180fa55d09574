package volume

import "context"

// Host is what a host backend provides for the volume group. Arguments are
// validated and cleaned by the Service first: paths are cleaned host paths
// inside the working directories and volume IDs are well formed. A volume,
// disk or mount that does not exist is an error wrapping
// errdefs.ErrNotFound.
type Host interface {
	// ListVolumesOnDisk returns the volume IDs on the disk's partition, or
	// on every partition when partition is 0.
	ListVolumesOnDisk(ctx context.Context, disk, partition uint32) ([]string, error)
	// MountVolume mounts the volume at target. The Service has already
	// checked that nothing else is mounted there, holding the volume's and
	// then the path's lock (always in that order), so two volumes aimed at
	// one path cannot both pass the check.
	MountVolume(ctx context.Context, volumeID, target string) error
	// UnmountVolume flushes the volume and removes its mount at target.
	UnmountVolume(ctx context.Context, volumeID, target string) error
	// IsVolumeFormatted tells whether the volume carries a filesystem.
	IsVolumeFormatted(ctx context.Context, volumeID string) (bool, error)
	// FormatVolume creates the host's default filesystem on the volume.
	FormatVolume(ctx context.Context, volumeID string) error
	// VolumeSizes returns the volume's current size and the largest size
	// its disk allows it to grow to, in bytes.
	VolumeSizes(ctx context.Context, volumeID string) (current, maximum int64, err error)
	// ResizeVolume grows the volume's partition and filesystem to size bytes.
	ResizeVolume(ctx context.Context, volumeID string, size int64) error
	// VolumeStats returns the filesystem's total and used bytes.
	VolumeStats(ctx context.Context, volumeID string) (total, used int64, err error)
	// DiskNumber returns the disk the volume lives on.
	DiskNumber(ctx context.Context, volumeID string) (uint32, error)
	// VolumeAt returns the volume mounted exactly at path, or an error
	// wrapping errdefs.ErrNotFound when path is not a mount point.
	VolumeAt(ctx context.Context, path string) (string, error)
	// ClosestVolume returns the volume that holds path: its own mount or
	// the nearest ancestor's, following symlinks.
	ClosestVolume(ctx context.Context, path string) (string, error)
	// FlushVolume writes the volume's cached data to stable storage.
	FlushVolume(ctx context.Context, volumeID string) error
}
