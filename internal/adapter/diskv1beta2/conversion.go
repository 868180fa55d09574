package diskv1beta2 //nolint:revive // the package comment is in zz_generated.adapter.go, which lint skips

import (
	pb "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1beta2"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter/diskid"
)

// DiskStats, SetAttachState and GetAttachState are upstream's v1beta3
// GetDiskStats, SetDiskState and GetDiskState.
//
//convgen:rename DiskStats=GetDiskStats SetAttachState=SetDiskState GetAttachState=GetDiskState

// toModelPartitionDiskRequest parses diskID, the disk number as a decimal
// string (upstream's v1beta3 made it the uint32 disk_number).
func toModelPartitionDiskRequest(in *pb.PartitionDiskRequest) (*disk.PartitionDiskRequest, error) {
	n, err := diskid.Parse(in.DiskID)
	if err != nil {
		return nil, err
	}
	out := autoToModelPartitionDiskRequest(in)
	out.DiskNumber = n
	return out, nil
}

// fromModelListDiskLocationsResponse keys disk_locations by disk ID
// (upstream's v1beta3 keyed them by uint32 disk number).
func fromModelListDiskLocationsResponse(in *disk.ListDiskLocationsResponse) *pb.ListDiskLocationsResponse {
	out := autoFromModelListDiskLocationsResponse(in)
	out.DiskLocations = diskid.FormatKeys(in.DiskLocations, fromModelDiskLocation)
	return out
}

// fromModelListDiskIDsResponse keys diskIDs by disk ID (upstream's v1beta3
// keyed them by uint32 disk number).
func fromModelListDiskIDsResponse(in *disk.ListDiskIDsResponse) *pb.ListDiskIDsResponse {
	out := autoFromModelListDiskIDsResponse(in)
	out.DiskIDs = diskid.FormatKeys(in.DiskIDs, fromModelDiskIDs)
	return out
}

// fromModelDiskIDs fills the identifiers map under the keys upstream used,
// "page83" and "serialNumber", always both (upstream's v1beta3 made them the
// fields page83 and serial_number).
func fromModelDiskIDs(in *disk.DiskIDs) *pb.DiskIDs {
	if in == nil {
		return nil
	}
	out := autoFromModelDiskIDs(in)
	out.Identifiers = map[string]string{"page83": in.Page83, "serialNumber": in.SerialNumber}
	return out
}

// toModelDiskStatsRequest parses diskID: DiskStats is upstream's v1beta3
// GetDiskStats, whose disk_number is a uint32.
func toModelDiskStatsRequest(in *pb.DiskStatsRequest) (*disk.GetDiskStatsRequest, error) {
	n, err := diskid.Parse(in.DiskID)
	if err != nil {
		return nil, err
	}
	out := autoToModelDiskStatsRequest(in)
	out.DiskNumber = n
	return out, nil
}

// fromModelDiskStatsResponse: upstream's v1beta3 renamed diskSize to
// total_bytes.
func fromModelDiskStatsResponse(in *disk.GetDiskStatsResponse) *pb.DiskStatsResponse {
	out := autoFromModelDiskStatsResponse(in)
	out.DiskSize = in.TotalBytes
	return out
}

// toModelSetAttachStateRequest parses diskID: SetAttachState is upstream's
// v1beta3 SetDiskState, whose disk_number is a uint32.
func toModelSetAttachStateRequest(in *pb.SetAttachStateRequest) (*disk.SetDiskStateRequest, error) {
	n, err := diskid.Parse(in.DiskID)
	if err != nil {
		return nil, err
	}
	out := autoToModelSetAttachStateRequest(in)
	out.DiskNumber = n
	return out, nil
}

// toModelGetAttachStateRequest parses diskID: GetAttachState is upstream's
// v1beta3 GetDiskState, whose disk_number is a uint32.
func toModelGetAttachStateRequest(in *pb.GetAttachStateRequest) (*disk.GetDiskStateRequest, error) {
	n, err := diskid.Parse(in.DiskID)
	if err != nil {
		return nil, err
	}
	out := autoToModelGetAttachStateRequest(in)
	out.DiskNumber = n
	return out, nil
}
