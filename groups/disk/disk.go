// Package disk is the disk API group: finding the node's disks, partitioning
// them and bringing them online.
//
// Disks are named by a host disk number (on Windows the PhysicalDrive
// number). See package groups for how the model, Interface, Host and Service
// fit together.
package disk

import "context"

// Interface is the disk group as drivers call it: in-process (library mode)
// or through the daemon (client). Every method validates its request and
// returns errors that wrap an errdefs sentinel.
type Interface interface {
	// ListDiskLocations returns the bus location of every disk that has one,
	// keyed by disk number.
	//convgen:read
	ListDiskLocations(context.Context, *ListDiskLocationsRequest) (*ListDiskLocationsResponse, error)
	// PartitionDisk gives the disk a GPT with one data partition spanning it;
	// a disk that already has a data partition is left alone.
	//convgen:mutates
	PartitionDisk(context.Context, *PartitionDiskRequest) (*PartitionDiskResponse, error)
	// Rescan asks the host to look for new disks and changed sizes. It
	// changes the node: new devices appear.
	//convgen:mutates
	Rescan(context.Context, *RescanRequest) (*RescanResponse, error)
	// ListDiskIDs returns the page 0x83 ID and serial number of every disk,
	// keyed by disk number.
	//convgen:read
	ListDiskIDs(context.Context, *ListDiskIDsRequest) (*ListDiskIDsResponse, error)
	// GetDiskStats returns the size of a disk.
	//convgen:read
	GetDiskStats(context.Context, *GetDiskStatsRequest) (*GetDiskStatsResponse, error)
	// SetDiskState brings a disk online or takes it offline; asking for the
	// current state succeeds.
	//convgen:mutates
	SetDiskState(context.Context, *SetDiskStateRequest) (*SetDiskStateResponse, error)
	// GetDiskState tells whether a disk is online.
	//convgen:read
	GetDiskState(context.Context, *GetDiskStateRequest) (*GetDiskStateResponse, error)
	// SetDiskReadOnly sets or clears a disk's read-only attribute; asking
	// for the current one succeeds and changes nothing. A disk re-attached
	// to a VM can come back online read-only (kubernetes-csi/csi-proxy#437,
	// vsphere-csi-driver#1631); upstream answers that in its v2 library
	// only (kubernetes-csi/csi-proxy PR #438, commit 874f535), so no wire
	// version carries this method: the client answers it
	// errdefs.ErrUnimplemented, and pipe-mode drivers rely on the daemon's
	// opt-in that clears the attribute when SetDiskState brings a disk
	// online (docs/compatibility.md).
	//convgen:mutates
	SetDiskReadOnly(context.Context, *SetDiskReadOnlyRequest) (*SetDiskReadOnlyResponse, error)
	// GetDiskReadOnly tells whether a disk is read-only (library mode
	// only, as SetDiskReadOnly).
	//convgen:read
	GetDiskReadOnly(context.Context, *GetDiskReadOnlyRequest) (*GetDiskReadOnlyResponse, error)
}

// ListDiskLocationsRequest asks for every disk's location.
type ListDiskLocationsRequest struct{}

// ListDiskLocationsResponse maps disk numbers to locations.
type ListDiskLocationsResponse struct {
	DiskLocations map[uint32]*DiskLocation
}

// DiskLocation is where a disk sits on its storage bus. The values are the
// host's decimal numbers as strings, as upstream reports them.
type DiskLocation struct {
	Adapter string
	Bus     string
	Target  string
	LUNID   string

	// NVMeNamespaceID is the number the host gives an NVMe disk's
	// namespace, 0 for any other disk or when the host does not know it.
	// On Windows it is the decimal number ending the disk's device
	// instance ID ("…&0&000002"), which azuredisk-csi-driver reads as the
	// namespace ID (pkg/os/disk/disk.go @ d983d613, getNVMeLunFromPath).
	// Library mode and the mounter only: upstream's wire DiskLocation has
	// no such field, and the wire stays upstream's, so the mounter can
	// find Azure's NVMe data disks by LUN where upstream's LUNID is "".
	NVMeNamespaceID uint32
	// Product is the disk's product identification as the host spells it
	// (Windows: the "prod_" part of the device instance ID, the first 16
	// characters of the SCSI product ID with "_" for spaces, such as
	// "msft_nvme_accele"), or "". Set with NVMeNamespaceID, so that the
	// mounter applies a cloud's numbering only to that cloud's disks; not
	// on the wire either.
	Product string
}

// PartitionDiskRequest names the disk to partition.
type PartitionDiskRequest struct {
	DiskNumber uint32 `guard:"disk"`
}

// PartitionDiskResponse is empty.
type PartitionDiskResponse struct{}

// RescanRequest is empty.
type RescanRequest struct{}

// RescanResponse is empty.
type RescanResponse struct{}

// ListDiskIDsRequest asks for every disk's identifiers.
type ListDiskIDsRequest struct{}

// ListDiskIDsResponse maps disk numbers to identifiers.
type ListDiskIDsResponse struct {
	DiskIDs map[uint32]*DiskIDs
}

// DiskIDs are a disk's identifiers; either may be empty.
type DiskIDs struct {
	// Page83 is the SCSI VPD page 0x83 device identifier.
	Page83 string
	// SerialNumber is the disk's serial number.
	SerialNumber string
}

// GetDiskStatsRequest names a disk.
type GetDiskStatsRequest struct {
	DiskNumber uint32 `guard:"disk"`
}

// GetDiskStatsResponse carries the disk's size.
type GetDiskStatsResponse struct {
	// TotalBytes is the disk's size in bytes.
	TotalBytes int64
}

// SetDiskStateRequest names a disk and the wanted state.
type SetDiskStateRequest struct {
	DiskNumber uint32 `guard:"disk"`
	IsOnline   bool   `guard:"-"`
}

// SetDiskStateResponse is empty.
type SetDiskStateResponse struct{}

// GetDiskStateRequest names a disk.
type GetDiskStateRequest struct {
	DiskNumber uint32 `guard:"disk"`
}

// GetDiskStateResponse tells whether the disk is online.
type GetDiskStateResponse struct {
	IsOnline bool
}

// SetDiskReadOnlyRequest names a disk and the wanted read-only attribute.
type SetDiskReadOnlyRequest struct {
	DiskNumber uint32 `guard:"disk"`
	IsReadOnly bool   `guard:"-"`
}

// SetDiskReadOnlyResponse is empty.
type SetDiskReadOnlyResponse struct{}

// GetDiskReadOnlyRequest names a disk.
type GetDiskReadOnlyRequest struct {
	DiskNumber uint32 `guard:"disk"`
}

// GetDiskReadOnlyResponse tells whether the disk is read-only.
type GetDiskReadOnlyResponse struct {
	IsReadOnly bool
}
