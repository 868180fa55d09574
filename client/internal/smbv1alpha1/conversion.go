package smbv1alpha1 //nolint:revive // the package comment is in zz_generated.client.go, which lint skips

// The responses' error string is not read: upstream never filled it and
// the daemon never does (failures are gRPC errors); v1beta2 dropped it.
//
//convgen:ignore Error
