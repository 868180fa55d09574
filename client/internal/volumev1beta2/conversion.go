package volumev1beta2 //nolint:revive // the package comment is in zz_generated.client.go, which lint skips

// v1beta2 is v1beta1 under another package.
//
//convgen:like v1beta1
