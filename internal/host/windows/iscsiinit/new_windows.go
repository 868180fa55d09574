//go:build windows

package iscsiinit

// New returns the Windows iSCSI backend. It does no work: iscsidsc.dll is
// loaded by the first call, so a host without the iSCSI initiator fails
// that call (errdefs.ErrUnimplemented) instead of start-up. The calls need
// an administrator and a running Microsoft iSCSI Initiator Service
// (MSiSCSI).
func New() (*Host, error) { return newHost(winInitiator{}), nil }
