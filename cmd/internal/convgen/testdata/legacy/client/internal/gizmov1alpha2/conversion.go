package gizmov1alpha2

// v1alpha2 is v1alpha1 under another package.
//
//convgen:like v1alpha1
