package gizmov1alpha1

// The client's side of v1alpha1: the adapter's directives, and a reason
// for refusing the partition number the version cannot carry.
//
//convgen:field Path=TargetPath StatResponse.Size=TotalBytes
//convgen:diskid DiskId=DiskNumber DiskNumber Disks
//convgen:mapkeys Identifiers page83=Page83 serialNumber=SerialNumber
//convgen:refuse StatRequest.PartitionNumber stats the whole disk and cannot select a partition: leave it 0
