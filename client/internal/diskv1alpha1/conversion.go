package diskv1alpha1 //nolint:revive // the package comment is in zz_generated.client.go, which lint skips

import (
	pb "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1alpha1"
	"github.com/csi-node-proxy/csi-node-proxy/client/internal/diskid"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
)

// GetDiskNumberByName, which upstream dropped in v1beta1, has no method in
// disk.Interface: a driver finds a disk by its page 0x83 ID with
// ListDiskIDs, which this version lacks (the client then reports
// errdefs.ErrUnimplemented for it).
//
//convgen:skip GetDiskNumberByName

// fromModelPartitionDiskRequest sends the disk number as diskID, a decimal
// string (upstream's v1beta3 made it the uint32 disk_number).
func fromModelPartitionDiskRequest(in *disk.PartitionDiskRequest) *pb.PartitionDiskRequest {
	out := autoFromModelPartitionDiskRequest(in)
	out.DiskID = diskid.Format(in.DiskNumber)
	return out
}

// toModelListDiskLocationsResponse keys the locations by disk number; this
// version keys them by disk ID.
func toModelListDiskLocationsResponse(in *pb.ListDiskLocationsResponse) (*disk.ListDiskLocationsResponse, error) {
	locs, err := diskid.ParseKeys(in.DiskLocations, toModelDiskLocation)
	if err != nil {
		return nil, err
	}
	out := autoToModelListDiskLocationsResponse(in)
	out.DiskLocations = locs
	return out, nil
}
