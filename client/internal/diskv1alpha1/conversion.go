package diskv1alpha1 //nolint:revive // the package comment is in zz_generated.client.go, which lint skips

// GetDiskNumberByName, which upstream dropped in v1beta1, has no method in
// disk.Interface: a driver finds a disk by its page 0x83 ID with
// ListDiskIDs, which this version lacks (the client then reports
// errdefs.ErrUnimplemented for it). Upstream's v1beta3 made diskID the
// uint32 disk_number and keyed disk_locations by it.
//
//convgen:skip GetDiskNumberByName
//convgen:diskid DiskID=DiskNumber DiskLocations
