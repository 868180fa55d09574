package iscsiinit

// loginAuth is the authentication of a login. Secret is a secret.
type loginAuth struct {
	Type   uint32 // authNone, authCHAP or authMutualCHAP
	User   string
	Secret string
}

// initiatorAPI is the seam to iscsidsc.dll: one method per call, with the
// buffer-size retry loops done inside. Errors are the ISDSC_STATUS (or
// Win32 code) as a syscall.Errno, unwrapped; list results come back as the
// raw buffers, which the platform-neutral parsers in layout.go decode.
type initiatorAPI interface {
	// AddSendTargetPortal registers p for SendTargets discovery, for any
	// initiator and port, without discovery credentials
	// (AddIScsiSendTargetPortalW).
	AddSendTargetPortal(p portalSpec) error
	// RemoveSendTargetPortal unregisters p for the initiator instance
	// ("" for any) and port (RemoveIScsiSendTargetPortalW).
	RemoveSendTargetPortal(initiator string, initiatorPort uint32, p portalSpec) error
	// SendTargetPortals returns the ISCSI_TARGET_PORTAL_INFO_EXW array
	// and its length (ReportIScsiSendTargetPortalsExW).
	SendTargetPortals() (buf []byte, count uint32, err error)
	// RefreshSendTargetPortal runs SendTargets discovery on p again
	// (RefreshIScsiSendTargetPortalW).
	RefreshSendTargetPortal(p portalSpec) error
	// Targets returns the MULTI_SZ of every discovered target
	// (ReportIScsiTargetsW, without forcing discovery on every portal).
	Targets() ([]uint16, error)
	// DiscoveryMechanisms returns the MULTI_SZ naming how target was
	// discovered (GetIScsiTargetInformationW(DiscoveryMechanisms)).
	DiscoveryMechanisms(target string) ([]uint16, error)
	// Login logs in to target through p, non-persistently, reporting
	// its LUNs to Plug and Play (LoginIScsiTargetW).
	Login(target string, p portalSpec, auth loginAuth) error
	// Sessions returns the ISCSI_SESSION_INFOW buffer, the address it
	// had when filled, and the number of sessions (GetIScsiSessionListW).
	Sessions() (buf []byte, base uintptr, count uint32, err error)
	// Logout ends a session (LogoutIScsiTarget).
	Logout(id uniqueID) error
	// RemovePersistentTarget removes the persistent logins of target on
	// every portal (RemoveIScsiPersistentTargetW).
	RemovePersistentTarget(target string) error
	// Devices returns the ISCSI_DEVICE_ON_SESSIONW array of a session
	// and its length (GetDevicesForIScsiSessionW).
	Devices(id uniqueID) (buf []byte, count uint32, err error)
	// SetInitiatorCHAPSecret sets the initiator's mutual CHAP secret
	// (SetIScsiInitiatorCHAPSharedSecret).
	SetInitiatorCHAPSecret(secret []byte) error
}
