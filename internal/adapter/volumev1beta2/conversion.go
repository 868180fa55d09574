package volumev1beta2 //nolint:revive // the package comment is in zz_generated.adapter.go, which lint skips

import (
	pb "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1beta2"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter/diskid"
)

// DismountVolume, VolumeStats, GetVolumeDiskNumber and GetVolumeIDFromMount
// are upstream's v1beta3 UnmountVolume, GetVolumeStats,
// GetDiskNumberFromVolumeID and GetVolumeIDFromTargetPath.
//
//convgen:rename DismountVolume=UnmountVolume VolumeStats=GetVolumeStats
//convgen:rename GetVolumeDiskNumber=GetDiskNumberFromVolumeID GetVolumeIDFromMount=GetVolumeIDFromTargetPath

// toModelListVolumesOnDiskRequest parses disk_id, the disk number as a
// decimal string (upstream's v1beta3 made it the uint32 disk_number). The
// partition number stays 0, every partition, which is what upstream did for
// these versions.
func toModelListVolumesOnDiskRequest(in *pb.ListVolumesOnDiskRequest) (*volume.ListVolumesOnDiskRequest, error) {
	n, err := diskid.Parse(in.DiskId)
	if err != nil {
		return nil, err
	}
	out := autoToModelListVolumesOnDiskRequest(in)
	out.DiskNumber = n
	return out, nil
}

// toModelMountVolumeRequest: upstream's v1beta3 renamed path to target_path.
func toModelMountVolumeRequest(in *pb.MountVolumeRequest) *volume.MountVolumeRequest {
	out := autoToModelMountVolumeRequest(in)
	out.TargetPath = in.Path
	return out
}

// toModelDismountVolumeRequest: DismountVolume is upstream's v1beta3
// UnmountVolume, and its path is target_path there.
func toModelDismountVolumeRequest(in *pb.DismountVolumeRequest) *volume.UnmountVolumeRequest {
	out := autoToModelDismountVolumeRequest(in)
	out.TargetPath = in.Path
	return out
}

// toModelResizeVolumeRequest: upstream's v1beta3 renamed size to size_bytes.
func toModelResizeVolumeRequest(in *pb.ResizeVolumeRequest) *volume.ResizeVolumeRequest {
	out := autoToModelResizeVolumeRequest(in)
	out.SizeBytes = in.Size
	return out
}

// fromModelVolumeStatsResponse: VolumeStats is upstream's v1beta3
// GetVolumeStats, which renamed volumeSize and volumeUsedSize to total_bytes
// and used_bytes.
func fromModelVolumeStatsResponse(in *volume.GetVolumeStatsResponse) *pb.VolumeStatsResponse {
	out := autoFromModelVolumeStatsResponse(in)
	out.VolumeSize = in.TotalBytes
	out.VolumeUsedSize = in.UsedBytes
	return out
}

// fromModelVolumeDiskNumberResponse: GetVolumeDiskNumber is upstream's
// v1beta3 GetDiskNumberFromVolumeID, which made diskNumber a uint32.
func fromModelVolumeDiskNumberResponse(in *volume.GetDiskNumberFromVolumeIDResponse) *pb.VolumeDiskNumberResponse {
	out := autoFromModelVolumeDiskNumberResponse(in)
	out.DiskNumber = int64(in.DiskNumber)
	return out
}

// toModelVolumeIDFromMountRequest: GetVolumeIDFromMount is upstream's
// v1beta3 GetVolumeIDFromTargetPath, which renamed mount to target_path.
func toModelVolumeIDFromMountRequest(in *pb.VolumeIDFromMountRequest) *volume.GetVolumeIDFromTargetPathRequest {
	out := autoToModelVolumeIDFromMountRequest(in)
	out.TargetPath = in.Mount
	return out
}
