package filesystemv1beta1 //nolint:revive // the package comment is in zz_generated.client.go, which lint skips

import (
	pb "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1beta1"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
)

// LinkPath and IsMountPoint are upstream's v1beta2 CreateSymlink and
// IsSymlink. The requests' PathContext stays PLUGIN (0): upstream ignored
// it and so does the daemon, so there is nothing for the model to set. The
// responses' error string is not read: upstream never filled it and the
// daemon never does (failures are gRPC errors); v1beta2 dropped both.
//
//convgen:rename LinkPath=CreateSymlink IsMountPoint=IsSymlink
//convgen:ignore Context Error

// toModelIsMountPointResponse: IsMountPoint is upstream's v1beta2
// IsSymlink, which renamed is_mount_point to is_symlink.
func toModelIsMountPointResponse(in *pb.IsMountPointResponse) *filesystem.IsSymlinkResponse {
	out := autoToModelIsMountPointResponse(in)
	out.IsSymlink = in.IsMountPoint
	return out
}
