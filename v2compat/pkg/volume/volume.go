// Package volume forwards to github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/volume: it is
// upstream v2's pkg/volume when this module stands in for
// github.com/kubernetes-csi/csi-proxy/v2 by a replace line. It imports no
// package of this module, only the root module's, so the same file
// compiles under either module path (see the module's doc.go).
package volume

import (
	impl "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/volume"
	implapi "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/volume/hostapi"
)

// Interface is impl.Interface.
type Interface = impl.Interface

// Volume is impl.Volume.
type Volume = impl.Volume

// ListVolumesOnDiskRequest is impl.ListVolumesOnDiskRequest.
type ListVolumesOnDiskRequest = impl.ListVolumesOnDiskRequest

// ListVolumesOnDiskResponse is impl.ListVolumesOnDiskResponse.
type ListVolumesOnDiskResponse = impl.ListVolumesOnDiskResponse

// MountVolumeRequest is impl.MountVolumeRequest.
type MountVolumeRequest = impl.MountVolumeRequest

// MountVolumeResponse is impl.MountVolumeResponse.
type MountVolumeResponse = impl.MountVolumeResponse

// IsVolumeFormattedRequest is impl.IsVolumeFormattedRequest.
type IsVolumeFormattedRequest = impl.IsVolumeFormattedRequest

// IsVolumeFormattedResponse is impl.IsVolumeFormattedResponse.
type IsVolumeFormattedResponse = impl.IsVolumeFormattedResponse

// FormatVolumeRequest is impl.FormatVolumeRequest.
type FormatVolumeRequest = impl.FormatVolumeRequest

// FormatVolumeResponse is impl.FormatVolumeResponse.
type FormatVolumeResponse = impl.FormatVolumeResponse

// WriteVolumeCacheRequest is impl.WriteVolumeCacheRequest.
type WriteVolumeCacheRequest = impl.WriteVolumeCacheRequest

// WriteVolumeCacheResponse is impl.WriteVolumeCacheResponse.
type WriteVolumeCacheResponse = impl.WriteVolumeCacheResponse

// UnmountVolumeRequest is impl.UnmountVolumeRequest.
type UnmountVolumeRequest = impl.UnmountVolumeRequest

// UnmountVolumeResponse is impl.UnmountVolumeResponse.
type UnmountVolumeResponse = impl.UnmountVolumeResponse

// ResizeVolumeRequest is impl.ResizeVolumeRequest.
type ResizeVolumeRequest = impl.ResizeVolumeRequest

// ResizeVolumeResponse is impl.ResizeVolumeResponse.
type ResizeVolumeResponse = impl.ResizeVolumeResponse

// GetVolumeStatsRequest is impl.GetVolumeStatsRequest.
type GetVolumeStatsRequest = impl.GetVolumeStatsRequest

// GetVolumeStatsResponse is impl.GetVolumeStatsResponse.
type GetVolumeStatsResponse = impl.GetVolumeStatsResponse

// GetDiskNumberFromVolumeIDRequest is impl.GetDiskNumberFromVolumeIDRequest.
type GetDiskNumberFromVolumeIDRequest = impl.GetDiskNumberFromVolumeIDRequest

// GetDiskNumberFromVolumeIDResponse is impl.GetDiskNumberFromVolumeIDResponse.
type GetDiskNumberFromVolumeIDResponse = impl.GetDiskNumberFromVolumeIDResponse

// GetVolumeIDFromTargetPathRequest is impl.GetVolumeIDFromTargetPathRequest.
type GetVolumeIDFromTargetPathRequest = impl.GetVolumeIDFromTargetPathRequest

// GetVolumeIDFromTargetPathResponse is impl.GetVolumeIDFromTargetPathResponse.
type GetVolumeIDFromTargetPathResponse = impl.GetVolumeIDFromTargetPathResponse

// GetClosestVolumeIDFromTargetPathRequest is impl.GetClosestVolumeIDFromTargetPathRequest.
type GetClosestVolumeIDFromTargetPathRequest = impl.GetClosestVolumeIDFromTargetPathRequest

// GetClosestVolumeIDFromTargetPathResponse is impl.GetClosestVolumeIDFromTargetPathResponse.
type GetClosestVolumeIDFromTargetPathResponse = impl.GetClosestVolumeIDFromTargetPathResponse

// New is impl.New.
func New(hostAPI implapi.HostAPI) (*Volume, error) { return impl.New(hostAPI) }
