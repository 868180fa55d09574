package filesystemv1beta1 //nolint:revive // the package comment is in zz_generated.adapter.go, which lint skips

// v1beta1 is v1alpha1 under another package.
//
//convgen:like v1alpha1
