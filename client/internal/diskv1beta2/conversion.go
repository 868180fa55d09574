package diskv1beta2 //nolint:revive // the package comment is in zz_generated.client.go, which lint skips

// v1beta2 is v1beta1 plus SetAttachState and GetAttachState, upstream's
// v1beta3 SetDiskState and GetDiskState.
//
//convgen:like v1beta1
//convgen:rename SetAttachState=SetDiskState GetAttachState=GetDiskState
