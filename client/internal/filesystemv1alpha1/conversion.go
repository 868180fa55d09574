package filesystemv1alpha1 //nolint:revive // the package comment is in zz_generated.client.go, which lint skips

// LinkPath and IsMountPoint are upstream's v1beta2 CreateSymlink and
// IsSymlink, which renamed is_mount_point to is_symlink. The requests'
// PathContext stays PLUGIN (0): upstream ignored it and so does the
// daemon, so there is nothing for the model to set. The responses' error
// string is not read: upstream never filled it and the daemon never does
// (failures are gRPC errors); v1beta2 dropped both.
//
//convgen:rename LinkPath=CreateSymlink IsMountPoint=IsSymlink
//convgen:ignore Context Error
//convgen:field IsMountPoint=IsSymlink
