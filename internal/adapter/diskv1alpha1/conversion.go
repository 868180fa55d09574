package diskv1alpha1 //nolint:revive // the package comment is in zz_generated.adapter.go, which lint skips

import (
	"context"
	"maps"
	"slices"

	pb "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1alpha1"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter/diskid"
)

// Upstream's v1beta3 made diskID the uint32 disk_number and keyed
// disk_locations by it.
//
//convgen:diskid DiskID=DiskNumber DiskLocations

// GetDiskNumberByName serves v1alpha1.Disk/GetDiskNumberByName, which
// upstream dropped in v1beta1 and the disk group does not have. Upstream
// looks disk_name up as a SCSI page 0x83 identifier among the host's disks
// and answers with that disk's number as a decimal string; so does this,
// through ListDiskIDs. Disks are tried in number order, so of two disks with
// the same identifier the lower number wins. An empty name, which upstream
// would match against a disk without an identifier, is refused.
func (s *Server) GetDiskNumberByName(ctx context.Context, in *pb.GetDiskNumberByNameRequest) (*pb.GetDiskNumberByNameResponse, error) {
	if in.DiskName == "" {
		return nil, errgrpc.ToGRPC(errdefs.Errorf(errdefs.ErrInvalidArgument, "disk_name is empty"))
	}
	ids, err := s.group.ListDiskIDs(ctx, &disk.ListDiskIDsRequest{})
	if err != nil {
		return nil, errgrpc.ToGRPC(err)
	}
	for _, n := range slices.Sorted(maps.Keys(ids.DiskIDs)) {
		if id := ids.DiskIDs[n]; id != nil && id.Page83 == in.DiskName {
			return &pb.GetDiskNumberByNameResponse{DiskNumber: diskid.Format(n)}, nil
		}
	}
	return nil, errgrpc.ToGRPC(errdefs.Errorf(errdefs.ErrNotFound, "no disk has the page 0x83 identifier %q", in.DiskName))
}
