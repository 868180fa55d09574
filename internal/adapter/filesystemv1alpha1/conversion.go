package filesystemv1alpha1 //nolint:revive // the package comment is in zz_generated.adapter.go, which lint skips

import (
	pb "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1alpha1"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
)

// LinkPath and IsMountPoint are upstream's v1beta2 CreateSymlink and
// IsSymlink. Upstream ignored the requests' PathContext (every path may lie
// in any working directory) and never filled the responses' error string
// (failures are gRPC errors); v1beta2 dropped both fields.
//
//convgen:rename LinkPath=CreateSymlink IsMountPoint=IsSymlink
//convgen:ignore Context Error

// fromModelIsMountPointResponse: IsMountPoint is upstream's v1beta2
// IsSymlink, which renamed is_mount_point to is_symlink.
func fromModelIsMountPointResponse(in *filesystem.IsSymlinkResponse) *pb.IsMountPointResponse {
	out := autoFromModelIsMountPointResponse(in)
	out.IsMountPoint = in.IsSymlink
	return out
}
