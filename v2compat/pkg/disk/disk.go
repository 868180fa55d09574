// Package disk forwards to github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/disk: it is
// upstream v2's pkg/disk when this module stands in for
// github.com/kubernetes-csi/csi-proxy/v2 by a replace line. It imports no
// package of this module, only the root module's, so the same file
// compiles under either module path (see the module's doc.go).
package disk

import (
	impl "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/disk"
	implapi "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/disk/hostapi"
)

// DiskLocation is impl.DiskLocation.
type DiskLocation = impl.DiskLocation

// ListDiskLocationsRequest is impl.ListDiskLocationsRequest.
type ListDiskLocationsRequest = impl.ListDiskLocationsRequest

// ListDiskLocationsResponse is impl.ListDiskLocationsResponse.
type ListDiskLocationsResponse = impl.ListDiskLocationsResponse

// PartitionDiskRequest is impl.PartitionDiskRequest.
type PartitionDiskRequest = impl.PartitionDiskRequest

// PartitionDiskResponse is impl.PartitionDiskResponse.
type PartitionDiskResponse = impl.PartitionDiskResponse

// RescanRequest is impl.RescanRequest.
type RescanRequest = impl.RescanRequest

// RescanResponse is impl.RescanResponse.
type RescanResponse = impl.RescanResponse

// ListDiskIDsRequest is impl.ListDiskIDsRequest.
type ListDiskIDsRequest = impl.ListDiskIDsRequest

// DiskIDs is impl.DiskIDs.
type DiskIDs = impl.DiskIDs

// ListDiskIDsResponse is impl.ListDiskIDsResponse.
type ListDiskIDsResponse = impl.ListDiskIDsResponse

// GetDiskStatsRequest is impl.GetDiskStatsRequest.
type GetDiskStatsRequest = impl.GetDiskStatsRequest

// GetDiskStatsResponse is impl.GetDiskStatsResponse.
type GetDiskStatsResponse = impl.GetDiskStatsResponse

// SetDiskStateRequest is impl.SetDiskStateRequest.
type SetDiskStateRequest = impl.SetDiskStateRequest

// SetDiskStateResponse is impl.SetDiskStateResponse.
type SetDiskStateResponse = impl.SetDiskStateResponse

// SetDiskReadOnlyRequest is impl.SetDiskReadOnlyRequest.
type SetDiskReadOnlyRequest = impl.SetDiskReadOnlyRequest

// SetDiskReadOnlyResponse is impl.SetDiskReadOnlyResponse.
type SetDiskReadOnlyResponse = impl.SetDiskReadOnlyResponse

// GetDiskStateRequest is impl.GetDiskStateRequest.
type GetDiskStateRequest = impl.GetDiskStateRequest

// GetDiskStateResponse is impl.GetDiskStateResponse.
type GetDiskStateResponse = impl.GetDiskStateResponse

// GetDiskReadOnlyRequest is impl.GetDiskReadOnlyRequest.
type GetDiskReadOnlyRequest = impl.GetDiskReadOnlyRequest

// GetDiskReadOnlyResponse is impl.GetDiskReadOnlyResponse.
type GetDiskReadOnlyResponse = impl.GetDiskReadOnlyResponse

// Interface is impl.Interface.
type Interface = impl.Interface

// Disk is impl.Disk.
type Disk = impl.Disk

// New is impl.New.
func New(hostAPI implapi.HostAPI) (*Disk, error) { return impl.New(hostAPI) }
