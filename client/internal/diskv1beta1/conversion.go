package diskv1beta1 //nolint:revive // the package comment is in zz_generated.client.go, which lint skips

// DiskStats is upstream's v1beta3 GetDiskStats. Upstream's v1beta3 made
// diskID the uint32 disk_number, keyed disk_locations and diskIDs by it,
// made the identifiers map's keys "page83" and "serialNumber" the fields
// page83 and serial_number, and renamed diskSize to total_bytes.
// Other keys of identifiers are not read: upstream never sent any.
//
//convgen:rename DiskStats=GetDiskStats
//convgen:diskid DiskID=DiskNumber DiskLocations DiskIDs
//convgen:mapkeys Identifiers page83=Page83 serialNumber=SerialNumber
//convgen:field DiskSize=TotalBytes
