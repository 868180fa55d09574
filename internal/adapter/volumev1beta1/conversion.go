package volumev1beta1 //nolint:revive // the package comment is in zz_generated.adapter.go, which lint skips

// DismountVolume, VolumeStats, GetVolumeDiskNumber and GetVolumeIDFromMount
// are upstream's v1beta3 UnmountVolume, GetVolumeStats,
// GetDiskNumberFromVolumeID and GetVolumeIDFromTargetPath. Upstream's
// v1beta3 made disk_id the uint32 disk_number and diskNumber a uint32, and
// renamed path and mount to target_path, size to size_bytes, and
// volumeSize and volumeUsedSize to total_bytes and used_bytes.
// The partition number stays 0, every partition, which is what upstream
// did for these versions.
//
//convgen:rename DismountVolume=UnmountVolume VolumeStats=GetVolumeStats
//convgen:rename GetVolumeDiskNumber=GetDiskNumberFromVolumeID GetVolumeIDFromMount=GetVolumeIDFromTargetPath
//convgen:diskid DiskId=DiskNumber DiskNumber
//convgen:field Path=TargetPath Mount=TargetPath Size=SizeBytes VolumeSize=TotalBytes VolumeUsedSize=UsedBytes
