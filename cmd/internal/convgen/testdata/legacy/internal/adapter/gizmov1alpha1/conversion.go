package gizmov1alpha1

// v1alpha1 names and types some fields otherwise than the model: every
// difference is a directive, so there is no function to write.
//
//convgen:field Path=TargetPath StatResponse.Size=TotalBytes
//convgen:diskid DiskId=DiskNumber DiskNumber Disks
//convgen:mapkeys Identifiers page83=Page83 serialNumber=SerialNumber
