package volumev1alpha1 //nolint:revive // the package comment is in zz_generated.adapter.go, which lint skips

import (
	pb "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1alpha1"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter/diskid"
)

// DismountVolume is upstream's v1beta3 UnmountVolume.
//
//convgen:rename DismountVolume=UnmountVolume

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
