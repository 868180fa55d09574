package volumev1beta1 //nolint:revive // the package comment is in zz_generated.client.go, which lint skips

// DismountVolume, VolumeStats, GetVolumeDiskNumber and GetVolumeIDFromMount
// are upstream's v1beta3 UnmountVolume, GetVolumeStats,
// GetDiskNumberFromVolumeID and GetVolumeIDFromTargetPath. Upstream's
// v1beta3 made disk_id the uint32 disk_number and diskNumber a uint32, and
// renamed path and mount to target_path, size to size_bytes, and
// volumeSize and volumeUsedSize to total_bytes and used_bytes.
// These versions have no partition number: they list the volumes of
// every partition, which is what PartitionNumber 0 asks for, so 0 is
// carried exactly and any other is refused rather than widened to the
// whole disk.
//
//convgen:rename DismountVolume=UnmountVolume VolumeStats=GetVolumeStats
//convgen:rename GetVolumeDiskNumber=GetDiskNumberFromVolumeID GetVolumeIDFromMount=GetVolumeIDFromTargetPath
//convgen:diskid DiskId=DiskNumber DiskNumber
//convgen:field Path=TargetPath Mount=TargetPath Size=SizeBytes VolumeSize=TotalBytes VolumeUsedSize=UsedBytes
//convgen:refuse ListVolumesOnDiskRequest.PartitionNumber lists every partition's volumes and cannot select one: leave it 0 or use a daemon that serves volume v1beta3 or later
