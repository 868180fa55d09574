package diskv1beta2 //nolint:revive // the package comment is in zz_generated.client.go, which lint skips

import (
	pb "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1beta2"
	"github.com/csi-node-proxy/csi-node-proxy/client/internal/diskid"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
)

// DiskStats, SetAttachState and GetAttachState are upstream's v1beta3
// GetDiskStats, SetDiskState and GetDiskState.
//
//convgen:rename DiskStats=GetDiskStats SetAttachState=SetDiskState GetAttachState=GetDiskState

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

// toModelListDiskIDsResponse keys the identifiers by disk number; this
// version keys them by disk ID.
func toModelListDiskIDsResponse(in *pb.ListDiskIDsResponse) (*disk.ListDiskIDsResponse, error) {
	ids, err := diskid.ParseKeys(in.DiskIDs, toModelDiskIDs)
	if err != nil {
		return nil, err
	}
	out := autoToModelListDiskIDsResponse(in)
	out.DiskIDs = ids
	return out, nil
}

// toModelDiskIDs reads the identifiers map under the keys upstream filled,
// "page83" and "serialNumber" (upstream's v1beta3 made them fields). Other
// keys have no model field and are not read: upstream never sent any.
func toModelDiskIDs(in *pb.DiskIDs) *disk.DiskIDs {
	if in == nil {
		return nil
	}
	out := autoToModelDiskIDs(in)
	out.Page83 = in.Identifiers["page83"]
	out.SerialNumber = in.Identifiers["serialNumber"]
	return out
}

// fromModelDiskStatsRequest sends the disk number as diskID: DiskStats is
// upstream's v1beta3 GetDiskStats, whose disk_number is a uint32.
func fromModelDiskStatsRequest(in *disk.GetDiskStatsRequest) *pb.DiskStatsRequest {
	out := autoFromModelDiskStatsRequest(in)
	out.DiskID = diskid.Format(in.DiskNumber)
	return out
}

// toModelDiskStatsResponse: upstream's v1beta3 renamed diskSize to
// total_bytes.
func toModelDiskStatsResponse(in *pb.DiskStatsResponse) *disk.GetDiskStatsResponse {
	out := autoToModelDiskStatsResponse(in)
	out.TotalBytes = in.DiskSize
	return out
}

// fromModelSetAttachStateRequest sends the disk number as diskID:
// SetAttachState is upstream's v1beta3 SetDiskState.
func fromModelSetAttachStateRequest(in *disk.SetDiskStateRequest) *pb.SetAttachStateRequest {
	out := autoFromModelSetAttachStateRequest(in)
	out.DiskID = diskid.Format(in.DiskNumber)
	return out
}

// fromModelGetAttachStateRequest sends the disk number as diskID:
// GetAttachState is upstream's v1beta3 GetDiskState.
func fromModelGetAttachStateRequest(in *disk.GetDiskStateRequest) *pb.GetAttachStateRequest {
	out := autoFromModelGetAttachStateRequest(in)
	out.DiskID = diskid.Format(in.DiskNumber)
	return out
}
