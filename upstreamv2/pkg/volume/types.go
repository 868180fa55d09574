package volume

// The request, response and value types of upstream v2's pkg/volume
// (kubernetes-csi/csi-proxy branch library-development at e776c65,
// pkg/volume/types.go), as aliases of this repository's group model
// (groups/volume), which carries upstream's names: a value built here is the
// group's own, so it goes through library mode unconverted.

import model "github.com/csi-node-proxy/csi-node-proxy/groups/volume"

// ListVolumesOnDiskRequest is upstream v2's volume.ListVolumesOnDiskRequest: model.ListVolumesOnDiskRequest.
type ListVolumesOnDiskRequest = model.ListVolumesOnDiskRequest

// ListVolumesOnDiskResponse is upstream v2's volume.ListVolumesOnDiskResponse: model.ListVolumesOnDiskResponse.
type ListVolumesOnDiskResponse = model.ListVolumesOnDiskResponse

// MountVolumeRequest is upstream v2's volume.MountVolumeRequest: model.MountVolumeRequest.
type MountVolumeRequest = model.MountVolumeRequest

// MountVolumeResponse is upstream v2's volume.MountVolumeResponse: model.MountVolumeResponse.
type MountVolumeResponse = model.MountVolumeResponse

// IsVolumeFormattedRequest is upstream v2's volume.IsVolumeFormattedRequest: model.IsVolumeFormattedRequest.
type IsVolumeFormattedRequest = model.IsVolumeFormattedRequest

// IsVolumeFormattedResponse is upstream v2's volume.IsVolumeFormattedResponse: model.IsVolumeFormattedResponse.
type IsVolumeFormattedResponse = model.IsVolumeFormattedResponse

// FormatVolumeRequest is upstream v2's volume.FormatVolumeRequest: model.FormatVolumeRequest.
type FormatVolumeRequest = model.FormatVolumeRequest

// FormatVolumeResponse is upstream v2's volume.FormatVolumeResponse: model.FormatVolumeResponse.
type FormatVolumeResponse = model.FormatVolumeResponse

// WriteVolumeCacheRequest is upstream v2's volume.WriteVolumeCacheRequest: model.WriteVolumeCacheRequest.
type WriteVolumeCacheRequest = model.WriteVolumeCacheRequest

// WriteVolumeCacheResponse is upstream v2's volume.WriteVolumeCacheResponse: model.WriteVolumeCacheResponse.
type WriteVolumeCacheResponse = model.WriteVolumeCacheResponse

// UnmountVolumeRequest is upstream v2's volume.UnmountVolumeRequest: model.UnmountVolumeRequest.
type UnmountVolumeRequest = model.UnmountVolumeRequest

// UnmountVolumeResponse is upstream v2's volume.UnmountVolumeResponse: model.UnmountVolumeResponse.
type UnmountVolumeResponse = model.UnmountVolumeResponse

// ResizeVolumeRequest is upstream v2's volume.ResizeVolumeRequest: model.ResizeVolumeRequest.
type ResizeVolumeRequest = model.ResizeVolumeRequest

// ResizeVolumeResponse is upstream v2's volume.ResizeVolumeResponse: model.ResizeVolumeResponse.
type ResizeVolumeResponse = model.ResizeVolumeResponse

// GetVolumeStatsRequest is upstream v2's volume.GetVolumeStatsRequest: model.GetVolumeStatsRequest.
type GetVolumeStatsRequest = model.GetVolumeStatsRequest

// GetVolumeStatsResponse is upstream v2's volume.GetVolumeStatsResponse: model.GetVolumeStatsResponse.
type GetVolumeStatsResponse = model.GetVolumeStatsResponse

// GetDiskNumberFromVolumeIDRequest is upstream v2's volume.GetDiskNumberFromVolumeIDRequest: model.GetDiskNumberFromVolumeIDRequest.
type GetDiskNumberFromVolumeIDRequest = model.GetDiskNumberFromVolumeIDRequest

// GetDiskNumberFromVolumeIDResponse is upstream v2's volume.GetDiskNumberFromVolumeIDResponse: model.GetDiskNumberFromVolumeIDResponse.
type GetDiskNumberFromVolumeIDResponse = model.GetDiskNumberFromVolumeIDResponse

// GetVolumeIDFromTargetPathRequest is upstream v2's volume.GetVolumeIDFromTargetPathRequest: model.GetVolumeIDFromTargetPathRequest.
type GetVolumeIDFromTargetPathRequest = model.GetVolumeIDFromTargetPathRequest

// GetVolumeIDFromTargetPathResponse is upstream v2's volume.GetVolumeIDFromTargetPathResponse: model.GetVolumeIDFromTargetPathResponse.
type GetVolumeIDFromTargetPathResponse = model.GetVolumeIDFromTargetPathResponse

// GetClosestVolumeIDFromTargetPathRequest is upstream v2's volume.GetClosestVolumeIDFromTargetPathRequest: model.GetClosestVolumeIDFromTargetPathRequest.
type GetClosestVolumeIDFromTargetPathRequest = model.GetClosestVolumeIDFromTargetPathRequest

// GetClosestVolumeIDFromTargetPathResponse is upstream v2's volume.GetClosestVolumeIDFromTargetPathResponse: model.GetClosestVolumeIDFromTargetPathResponse.
type GetClosestVolumeIDFromTargetPathResponse = model.GetClosestVolumeIDFromTargetPathResponse
