package volumev1alpha1 //nolint:revive // the package comment is in zz_generated.adapter.go, which lint skips

// DismountVolume is upstream's v1beta3 UnmountVolume. Upstream's v1beta3
// made disk_id the uint32 disk_number and renamed path to target_path and
// size to size_bytes. The partition number stays 0, every partition, which is what upstream
// did for these versions.
//
//convgen:rename DismountVolume=UnmountVolume
//convgen:diskid DiskId=DiskNumber
//convgen:field Path=TargetPath Size=SizeBytes
