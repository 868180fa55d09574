package volumev1alpha1 //nolint:revive // the package comment is in zz_generated.client.go, which lint skips

import (
	pb "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1alpha1"
	"github.com/csi-node-proxy/csi-node-proxy/client/internal/diskid"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// DismountVolume is upstream's v1beta3 UnmountVolume.
//
//convgen:rename DismountVolume=UnmountVolume

// fromModelListVolumesOnDiskRequest sends the disk number as disk_id, a
// decimal string (upstream's v1beta3 made it the uint32 disk_number). This
// version has no partition number: it always lists the volumes of every
// partition, which is what PartitionNumber 0 asks for, so 0 is carried
// exactly and any other partition number is refused rather than widened to
// the whole disk.
func fromModelListVolumesOnDiskRequest(in *volume.ListVolumesOnDiskRequest) (*pb.ListVolumesOnDiskRequest, error) {
	if in.PartitionNumber != 0 {
		return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "ListVolumesOnDiskRequest.PartitionNumber is %d, but the volume v1alpha1 API lists every partition's volumes and cannot select one: leave it 0 or use a daemon that serves volume v1beta3 or later", in.PartitionNumber)
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
