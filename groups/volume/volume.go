// Package volume is the volume API group: listing, formatting, mounting,
// resizing and inspecting the volumes on the node's disks.
//
// A volume ID is the host's name for a volume: \\?\Volume{GUID}\ on a
// Windows host. Mount targets are host paths inside the working
// directories. See package groups for how the pieces fit together.
package volume

import "context"

// Interface is the volume group as drivers call it, in-process or through
// the daemon. Errors wrap errdefs sentinels.
type Interface interface {
	// ListVolumesOnDisk returns the volumes on a disk; partition number 0
	// means every partition.
	//convgen:read
	ListVolumesOnDisk(context.Context, *ListVolumesOnDiskRequest) (*ListVolumesOnDiskResponse, error)
	// MountVolume mounts the volume at the target path, which must lie
	// below a working directory: a working directory itself is refused
	// with errdefs.ErrPermissionDenied, since a mount over it would hide
	// everything kubelet keeps there. The same volume at the same path
	// again succeeds; another volume there fails with
	// errdefs.ErrFailedPrecondition.
	//convgen:mutates
	MountVolume(context.Context, *MountVolumeRequest) (*MountVolumeResponse, error)
	// UnmountVolume flushes the volume and removes its mount at the target
	// path, which must lie below a working directory, as for MountVolume.
	// Nothing mounted there is success.
	//convgen:mutates
	UnmountVolume(context.Context, *UnmountVolumeRequest) (*UnmountVolumeResponse, error)
	// IsVolumeFormatted tells whether the volume carries a filesystem.
	//convgen:read
	IsVolumeFormatted(context.Context, *IsVolumeFormattedRequest) (*IsVolumeFormattedResponse, error)
	// FormatVolume creates the host's default filesystem on the volume. A
	// volume that is already formatted is refused with
	// errdefs.ErrFailedPrecondition rather than erased.
	//convgen:mutates
	FormatVolume(context.Context, *FormatVolumeRequest) (*FormatVolumeResponse, error)
	// ResizeVolume grows the volume and its filesystem to SizeBytes (0: as
	// large as the disk allows). A gain under 100 MiB, or a smaller size
	// than the volume has (volumes never shrink), is skipped and reported as
	// success, as upstream does; a size beyond what the disk allows is
	// errdefs.ErrOutOfRange.
	//convgen:mutates
	ResizeVolume(context.Context, *ResizeVolumeRequest) (*ResizeVolumeResponse, error)
	// GetVolumeStats returns the volume's size and used bytes.
	//convgen:read
	GetVolumeStats(context.Context, *GetVolumeStatsRequest) (*GetVolumeStatsResponse, error)
	// GetDiskNumberFromVolumeID returns the disk the volume lives on.
	//convgen:read
	GetDiskNumberFromVolumeID(context.Context, *GetDiskNumberFromVolumeIDRequest) (*GetDiskNumberFromVolumeIDResponse, error)
	// GetVolumeIDFromTargetPath returns the volume mounted at the path; a
	// path where nothing is mounted is errdefs.ErrNotFound.
	//convgen:read
	GetVolumeIDFromTargetPath(context.Context, *GetVolumeIDFromTargetPathRequest) (*GetVolumeIDFromTargetPathResponse, error)
	// GetClosestVolumeIDFromTargetPath returns the volume holding the path:
	// its own mount or the nearest ancestor's, following symlinks.
	//convgen:read
	GetClosestVolumeIDFromTargetPath(context.Context, *GetClosestVolumeIDFromTargetPathRequest) (*GetClosestVolumeIDFromTargetPathResponse, error)
	// WriteVolumeCache flushes the volume's cached writes to the disk.
	//convgen:mutates
	WriteVolumeCache(context.Context, *WriteVolumeCacheRequest) (*WriteVolumeCacheResponse, error)
}

// ListVolumesOnDiskRequest names a disk and optionally a partition.
type ListVolumesOnDiskRequest struct {
	DiskNumber uint32 `guard:"disk"`
	// PartitionNumber 0 selects all partitions (upstream behaviour).
	PartitionNumber uint32 `guard:"-"`
}

// ListVolumesOnDiskResponse lists volume IDs.
type ListVolumesOnDiskResponse struct {
	VolumeIDs []string
}

// MountVolumeRequest names a volume and where to mount it.
type MountVolumeRequest struct {
	VolumeID   string `guard:"volume"`
	TargetPath string `guard:"path"`
}

// MountVolumeResponse is empty.
type MountVolumeResponse struct{}

// UnmountVolumeRequest names a volume and the mount to remove.
type UnmountVolumeRequest struct {
	VolumeID   string `guard:"volume"`
	TargetPath string `guard:"path"`
}

// UnmountVolumeResponse is empty.
type UnmountVolumeResponse struct{}

// IsVolumeFormattedRequest names a volume.
type IsVolumeFormattedRequest struct {
	VolumeID string `guard:"volume"`
}

// IsVolumeFormattedResponse tells whether it is formatted.
type IsVolumeFormattedResponse struct {
	Formatted bool
}

// FormatVolumeRequest names a volume.
type FormatVolumeRequest struct {
	VolumeID string `guard:"volume"`
}

// FormatVolumeResponse is empty.
type FormatVolumeResponse struct{}

// ResizeVolumeRequest names a volume and its wanted size.
type ResizeVolumeRequest struct {
	VolumeID string `guard:"volume"`
	// SizeBytes is the wanted size; 0 means the largest the disk allows.
	SizeBytes int64 `guard:"-"`
}

// ResizeVolumeResponse is empty.
type ResizeVolumeResponse struct{}

// GetVolumeStatsRequest names a volume.
type GetVolumeStatsRequest struct {
	VolumeID string `guard:"volume"`
}

// GetVolumeStatsResponse carries the volume's size and use in bytes.
type GetVolumeStatsResponse struct {
	TotalBytes int64
	UsedBytes  int64
}

// GetDiskNumberFromVolumeIDRequest names a volume.
type GetDiskNumberFromVolumeIDRequest struct {
	VolumeID string `guard:"volume"`
}

// GetDiskNumberFromVolumeIDResponse carries the volume's disk number.
type GetDiskNumberFromVolumeIDResponse struct {
	DiskNumber uint32
}

// GetVolumeIDFromTargetPathRequest names a mount path.
type GetVolumeIDFromTargetPathRequest struct {
	TargetPath string `guard:"path"`
}

// GetVolumeIDFromTargetPathResponse carries the mounted volume's ID.
type GetVolumeIDFromTargetPathResponse struct {
	VolumeID string
}

// GetClosestVolumeIDFromTargetPathRequest names a path.
type GetClosestVolumeIDFromTargetPathRequest struct {
	TargetPath string `guard:"path"`
}

// GetClosestVolumeIDFromTargetPathResponse carries the holding volume's ID.
type GetClosestVolumeIDFromTargetPathResponse struct {
	VolumeID string
}

// WriteVolumeCacheRequest names a volume.
type WriteVolumeCacheRequest struct {
	VolumeID string `guard:"volume"`
}

// WriteVolumeCacheResponse is empty.
type WriteVolumeCacheResponse struct{}
