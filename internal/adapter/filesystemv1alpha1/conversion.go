package filesystemv1alpha1 //nolint:revive // the package comment is in zz_generated.adapter.go, which lint skips

// LinkPath and IsMountPoint are upstream's v1beta2 CreateSymlink and
// IsSymlink, which renamed is_mount_point to is_symlink. Upstream ignored
// the requests' PathContext (every path may lie in any working directory)
// and never filled the responses' error string (failures are gRPC errors);
// v1beta2 dropped both fields.
//
//convgen:rename LinkPath=CreateSymlink IsMountPoint=IsSymlink
//convgen:ignore Context Error
//convgen:field IsMountPoint=IsSymlink
