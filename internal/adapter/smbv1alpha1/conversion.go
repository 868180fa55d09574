package smbv1alpha1 //nolint:revive // the package comment is in zz_generated.adapter.go, which lint skips

// Upstream never filled the responses' error string (failures are gRPC
// errors); v1beta2 dropped it.
//
//convgen:ignore Error
