package disk

// The request, response and value types of upstream v2's pkg/disk
// (kubernetes-csi/csi-proxy commit 874f535 (PR #438),
// pkg/disk/types.go), as aliases of this repository's group model
// (groups/disk), which carries upstream's names: a value built here is the
// group's own, so it goes through library mode unconverted.

import model "github.com/csi-node-proxy/csi-node-proxy/groups/disk"

// DiskLocation is upstream v2's disk.DiskLocation: model.DiskLocation.
type DiskLocation = model.DiskLocation

// ListDiskLocationsRequest is upstream v2's disk.ListDiskLocationsRequest: model.ListDiskLocationsRequest.
type ListDiskLocationsRequest = model.ListDiskLocationsRequest

// ListDiskLocationsResponse is upstream v2's disk.ListDiskLocationsResponse: model.ListDiskLocationsResponse.
type ListDiskLocationsResponse = model.ListDiskLocationsResponse

// PartitionDiskRequest is upstream v2's disk.PartitionDiskRequest: model.PartitionDiskRequest.
type PartitionDiskRequest = model.PartitionDiskRequest

// PartitionDiskResponse is upstream v2's disk.PartitionDiskResponse: model.PartitionDiskResponse.
type PartitionDiskResponse = model.PartitionDiskResponse

// RescanRequest is upstream v2's disk.RescanRequest: model.RescanRequest.
type RescanRequest = model.RescanRequest

// RescanResponse is upstream v2's disk.RescanResponse: model.RescanResponse.
type RescanResponse = model.RescanResponse

// ListDiskIDsRequest is upstream v2's disk.ListDiskIDsRequest: model.ListDiskIDsRequest.
type ListDiskIDsRequest = model.ListDiskIDsRequest

// DiskIDs is upstream v2's disk.DiskIDs: model.DiskIDs.
type DiskIDs = model.DiskIDs

// ListDiskIDsResponse is upstream v2's disk.ListDiskIDsResponse: model.ListDiskIDsResponse.
type ListDiskIDsResponse = model.ListDiskIDsResponse

// GetDiskStatsRequest is upstream v2's disk.GetDiskStatsRequest: model.GetDiskStatsRequest.
type GetDiskStatsRequest = model.GetDiskStatsRequest

// GetDiskStatsResponse is upstream v2's disk.GetDiskStatsResponse: model.GetDiskStatsResponse.
type GetDiskStatsResponse = model.GetDiskStatsResponse

// SetDiskStateRequest is upstream v2's disk.SetDiskStateRequest: model.SetDiskStateRequest.
type SetDiskStateRequest = model.SetDiskStateRequest

// SetDiskStateResponse is upstream v2's disk.SetDiskStateResponse: model.SetDiskStateResponse.
type SetDiskStateResponse = model.SetDiskStateResponse

// SetDiskReadOnlyRequest is upstream v2's disk.SetDiskReadOnlyRequest: model.SetDiskReadOnlyRequest.
type SetDiskReadOnlyRequest = model.SetDiskReadOnlyRequest

// SetDiskReadOnlyResponse is upstream v2's disk.SetDiskReadOnlyResponse: model.SetDiskReadOnlyResponse.
type SetDiskReadOnlyResponse = model.SetDiskReadOnlyResponse

// GetDiskStateRequest is upstream v2's disk.GetDiskStateRequest: model.GetDiskStateRequest.
type GetDiskStateRequest = model.GetDiskStateRequest

// GetDiskStateResponse is upstream v2's disk.GetDiskStateResponse: model.GetDiskStateResponse.
type GetDiskStateResponse = model.GetDiskStateResponse

// GetDiskReadOnlyRequest is upstream v2's disk.GetDiskReadOnlyRequest: model.GetDiskReadOnlyRequest.
type GetDiskReadOnlyRequest = model.GetDiskReadOnlyRequest

// GetDiskReadOnlyResponse is upstream v2's disk.GetDiskReadOnlyResponse: model.GetDiskReadOnlyResponse.
type GetDiskReadOnlyResponse = model.GetDiskReadOnlyResponse
