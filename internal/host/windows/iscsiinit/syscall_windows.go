//go:build windows

package iscsiinit

// iscsidsc.dll is not covered by golang.org/x/sys. Every function returns
// its ISDSC_STATUS directly (not through GetLastError): the single error
// result makes mkwinsyscall turn a non-zero return into a syscall.Errno.
// BOOLEAN parameters are declared bool (passed as 0/1 in a full register),
// ISCSI_SECURITY_FLAGS as uint64 (one register on 64-bit Windows).
//go:generate go run golang.org/x/sys/windows/mkwinsyscall -output zsyscall_windows.go syscall_windows.go

//sys	addIScsiSendTargetPortal(initiatorInstance *uint16, initiatorPortNumber uint32, loginOptions *loginOptions, securityFlags uint64, portal *targetPortalW) (status error) = iscsidsc.AddIScsiSendTargetPortalW
//sys	removeIScsiSendTargetPortal(initiatorInstance *uint16, initiatorPortNumber uint32, portal *targetPortalW) (status error) = iscsidsc.RemoveIScsiSendTargetPortalW
//sys	refreshIScsiSendTargetPortal(initiatorInstance *uint16, initiatorPortNumber uint32, portal *targetPortalW) (status error) = iscsidsc.RefreshIScsiSendTargetPortalW
//sys	reportIScsiSendTargetPortalsEx(portalCount *uint32, portalInfoSize *uint32, portalInfo *byte) (status error) = iscsidsc.ReportIScsiSendTargetPortalsExW
//sys	reportIScsiTargets(forceUpdate bool, bufferSize *uint32, buffer *uint16) (status error) = iscsidsc.ReportIScsiTargetsW
//sys	getIScsiTargetInformation(targetName *uint16, discoveryMechanism *uint16, infoClass uint32, bufferSize *uint32, buffer *uint16) (status error) = iscsidsc.GetIScsiTargetInformationW
//sys	loginIScsiTarget(targetName *uint16, isInformationalSession bool, initiatorInstance *uint16, initiatorPortNumber uint32, targetPortal *targetPortalW, securityFlags uint64, mappings *byte, loginOptions *loginOptions, keySize uint32, key *byte, isPersistent bool, uniqueSessionID *uniqueID, uniqueConnectionID *uniqueID) (status error) = iscsidsc.LoginIScsiTargetW
//sys	logoutIScsiTarget(uniqueSessionID *uniqueID) (status error) = iscsidsc.LogoutIScsiTarget
//sys	removeIScsiPersistentTarget(initiatorInstance *uint16, initiatorPortNumber uint32, targetName *uint16, portal *targetPortalW) (status error) = iscsidsc.RemoveIScsiPersistentTargetW
//sys	getIScsiSessionList(bufferSize *uint32, sessionCount *uint32, sessionInfo *byte) (status error) = iscsidsc.GetIScsiSessionListW
//sys	getDevicesForIScsiSession(uniqueSessionID *uniqueID, deviceCount *uint32, devices *byte) (status error) = iscsidsc.GetDevicesForIScsiSessionW
//sys	setIScsiInitiatorCHAPSharedSecret(sharedSecretLength uint32, sharedSecret *byte) (status error) = iscsidsc.SetIScsiInitiatorCHAPSharedSecret
