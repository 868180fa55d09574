package volumev1beta1 //nolint:revive // the package comment is in zz_generated.client.go, which lint skips

import (
	"fmt"
	"math"

	pb "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1beta1"
	"github.com/csi-node-proxy/csi-node-proxy/client/internal/diskid"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// DismountVolume, VolumeStats, GetVolumeDiskNumber and GetVolumeIDFromMount
// are upstream's v1beta3 UnmountVolume, GetVolumeStats,
// GetDiskNumberFromVolumeID and GetVolumeIDFromTargetPath.
//
//convgen:rename DismountVolume=UnmountVolume VolumeStats=GetVolumeStats
//convgen:rename GetVolumeDiskNumber=GetDiskNumberFromVolumeID GetVolumeIDFromMount=GetVolumeIDFromTargetPath

// fromModelListVolumesOnDiskRequest sends the disk number as disk_id, a
// decimal string (upstream's v1beta3 made it the uint32 disk_number). This
// version has no partition number: it always lists the volumes of every
// partition, which is what PartitionNumber 0 asks for, so 0 is carried
// exactly and any other partition number is refused rather than widened to
// the whole disk.
func fromModelListVolumesOnDiskRequest(in *volume.ListVolumesOnDiskRequest) (*pb.ListVolumesOnDiskRequest, error) {
	if in.PartitionNumber != 0 {
		return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "ListVolumesOnDiskRequest.PartitionNumber is %d, but the volume v1beta1 API lists every partition's volumes and cannot select one: leave it 0 or use a daemon that serves volume v1beta3 or later", in.PartitionNumber)
	}
	out := autoFromModelListVolumesOnDiskRequest(in)
	out.DiskId = diskid.Format(in.DiskNumber)
	return out, nil
}

// fromModelMountVolumeRequest: upstream's v1beta3 renamed path to
// target_path.
func fromModelMountVolumeRequest(in *volume.MountVolumeRequest) *pb.MountVolumeRequest {
	out := autoFromModelMountVolumeRequest(in)
	out.Path = in.TargetPath
	return out
}

// fromModelDismountVolumeRequest: DismountVolume is upstream's v1beta3
// UnmountVolume, and its path is target_path there.
func fromModelDismountVolumeRequest(in *volume.UnmountVolumeRequest) *pb.DismountVolumeRequest {
	out := autoFromModelDismountVolumeRequest(in)
	out.Path = in.TargetPath
	return out
}

// fromModelResizeVolumeRequest: upstream's v1beta3 renamed size to
// size_bytes.
func fromModelResizeVolumeRequest(in *volume.ResizeVolumeRequest) *pb.ResizeVolumeRequest {
	out := autoFromModelResizeVolumeRequest(in)
	out.Size = in.SizeBytes
	return out
}

// toModelVolumeStatsResponse: VolumeStats is upstream's v1beta3
// GetVolumeStats, which renamed volumeSize and volumeUsedSize to
// total_bytes and used_bytes.
func toModelVolumeStatsResponse(in *pb.VolumeStatsResponse) *volume.GetVolumeStatsResponse {
	out := autoToModelVolumeStatsResponse(in)
	out.TotalBytes = in.VolumeSize
	out.UsedBytes = in.VolumeUsedSize
	return out
}

// toModelVolumeDiskNumberResponse: GetVolumeDiskNumber is upstream's v1beta3
// GetDiskNumberFromVolumeID, which made diskNumber a uint32. A number that
// does not fit is a malformed answer, not one to wrap onto another disk.
func toModelVolumeDiskNumberResponse(in *pb.VolumeDiskNumberResponse) (*volume.GetDiskNumberFromVolumeIDResponse, error) {
	if in.DiskNumber < 0 || in.DiskNumber > math.MaxUint32 {
		return nil, fmt.Errorf("the daemon answered with disk number %d, which is not a uint32", in.DiskNumber)
	}
	out := autoToModelVolumeDiskNumberResponse(in)
	out.DiskNumber = uint32(in.DiskNumber)
	return out, nil
}

// fromModelVolumeIDFromMountRequest: GetVolumeIDFromMount is upstream's
// v1beta3 GetVolumeIDFromTargetPath, which renamed mount to target_path.
func fromModelVolumeIDFromMountRequest(in *volume.GetVolumeIDFromTargetPathRequest) *pb.VolumeIDFromMountRequest {
	out := autoFromModelVolumeIDFromMountRequest(in)
	out.Mount = in.TargetPath
	return out
}
