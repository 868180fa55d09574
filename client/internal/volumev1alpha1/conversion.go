package volumev1alpha1 //nolint:revive // the package comment is in zz_generated.client.go, which lint skips

// DismountVolume is upstream's v1beta3 UnmountVolume. Upstream's v1beta3
// made disk_id the uint32 disk_number and renamed path to target_path and
// size to size_bytes. These versions have no partition number: they list the volumes of
// every partition, which is what PartitionNumber 0 asks for, so 0 is
// carried exactly and any other is refused rather than widened to the
// whole disk.
//
//convgen:rename DismountVolume=UnmountVolume
//convgen:diskid DiskId=DiskNumber
//convgen:field Path=TargetPath Size=SizeBytes
//convgen:refuse ListVolumesOnDiskRequest.PartitionNumber lists every partition's volumes and cannot select one: leave it 0 or use a daemon that serves volume v1beta3 or later
