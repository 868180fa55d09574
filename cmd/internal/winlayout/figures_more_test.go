package winlayout

// iscsiFigures: iscsidsc.dll's structures, constants and functions
// (internal/host/windows/iscsiinit). mingw's iscsidsc.h does not compile,
// so every C figure is the documentation's.
var iscsiFigures = []figure{
	{"const iscsiinit.allInitiatorPorts", "DOC_ISCSI_ALL_INITIATOR_PORTS", docs},
	{"const iscsiinit.maxPortalNameLen", "DOC_MAX_ISCSI_PORTAL_NAME_LEN", docs},
	{"const iscsiinit.maxPortalAddressLen", "DOC_MAX_ISCSI_PORTAL_ADDRESS_LEN", docs},
	{"const iscsiinit.maxHBANameLen", "DOC_MAX_ISCSI_HBANAME_LEN", docs},
	{"const iscsiinit.maxISCSINameLen", "DOC_MAX_ISCSI_NAME_LEN", docs},
	{"const iscsiinit.authNone", "DOC_ISCSI_NO_AUTH_TYPE", docs},
	{"const iscsiinit.authCHAP", "DOC_ISCSI_CHAP_AUTH_TYPE", docs},
	{"const iscsiinit.authMutualCHAP", "DOC_ISCSI_MUTUAL_CHAP_AUTH_TYPE", docs},
	{"const iscsiinit.fileDeviceDisk", "FILE_DEVICE_DISK", mingw},
	{"const iscsiinit.loginOptionsVersion", "DOC_ISCSI_LOGIN_OPTIONS_VERSION", docs},
	{"const iscsiinit.infoUsername", "DOC_ISCSI_LOGIN_OPTIONS_USERNAME", docs},
	{"const iscsiinit.infoPassword", "DOC_ISCSI_LOGIN_OPTIONS_PASSWORD", docs},
	{"const iscsiinit.infoAuthType", "DOC_ISCSI_LOGIN_OPTIONS_AUTH_TYPE", docs},
	{"const iscsiinit.infoDiscoveryMechanisms", "DOC_DiscoveryMechanisms", docs},

	// The parsers' sizes and offsets (layout.go).
	{"const iscsiinit.portalInfoSize", "sizeof(DOC_ISCSI_TARGET_PORTAL_INFO_EXW)", docs},
	{"const iscsiinit.portalInfoInitiatorName", "offsetof(DOC_ISCSI_TARGET_PORTAL_INFO_EXW, InitiatorName)", docs},
	{"const iscsiinit.portalInfoInitiatorPort", "offsetof(DOC_ISCSI_TARGET_PORTAL_INFO_EXW, InitiatorPortNumber)", docs},
	{"const iscsiinit.portalInfoAddress", "offsetof(DOC_ISCSI_TARGET_PORTAL_INFO_EXW, Address)", docs},
	{"const iscsiinit.portalInfoSocket", "offsetof(DOC_ISCSI_TARGET_PORTAL_INFO_EXW, Socket)", docs},
	{"const iscsiinit.sessionInfoSize", "sizeof(DOC_ISCSI_SESSION_INFOW)", docs},
	{"const iscsiinit.sessionInitiatorName", "offsetof(DOC_ISCSI_SESSION_INFOW, InitiatorName)", docs},
	{"const iscsiinit.sessionTargetNodeName", "offsetof(DOC_ISCSI_SESSION_INFOW, TargetNodeName)", docs},
	{"const iscsiinit.sessionTargetName", "offsetof(DOC_ISCSI_SESSION_INFOW, TargetName)", docs},
	{"lit iscsiinit.parseSessions 8", "offsetof(DOC_ISCSI_UNIQUE_SESSION_ID, AdapterSpecific)", docs},
	{"const iscsiinit.deviceOnSessionSize", "sizeof(DOC_ISCSI_DEVICE_ON_SESSIONW)", docs},
	{"const iscsiinit.deviceType", "offsetof(DOC_ISCSI_DEVICE_ON_SESSIONW, StorageDeviceNumber.DeviceType)", docs},
	{"const iscsiinit.deviceNumber", "offsetof(DOC_ISCSI_DEVICE_ON_SESSIONW, StorageDeviceNumber.DeviceNumber)", docs},

	// The Go mirrors passed to the DLL (layout.go) or used to compute the
	// layouts (layout_test.go).
	{"size iscsiinit.targetPortalW", "sizeof(DOC_ISCSI_TARGET_PORTALW)", docs},
	{"offset iscsiinit.targetPortalW.Address", "offsetof(DOC_ISCSI_TARGET_PORTALW, Address)", docs},
	{"offset iscsiinit.targetPortalW.Socket", "offsetof(DOC_ISCSI_TARGET_PORTALW, Socket)", docs},
	{"size iscsiinit.loginOptions", "sizeof(DOC_ISCSI_LOGIN_OPTIONS)", docs},
	{"offset iscsiinit.loginOptions.InformationSpecified", "offsetof(DOC_ISCSI_LOGIN_OPTIONS, InformationSpecified)", docs},
	{"offset iscsiinit.loginOptions.AuthType", "offsetof(DOC_ISCSI_LOGIN_OPTIONS, AuthType)", docs},
	{"offset iscsiinit.loginOptions.UsernameLength", "offsetof(DOC_ISCSI_LOGIN_OPTIONS, UsernameLength)", docs},
	{"offset iscsiinit.loginOptions.PasswordLength", "offsetof(DOC_ISCSI_LOGIN_OPTIONS, PasswordLength)", docs},
	{"offset iscsiinit.loginOptions.Username", "offsetof(DOC_ISCSI_LOGIN_OPTIONS, Username)", docs},
	{"offset iscsiinit.loginOptions.Password", "offsetof(DOC_ISCSI_LOGIN_OPTIONS, Password)", docs},
	{"size iscsiinit.uniqueID", "sizeof(DOC_ISCSI_UNIQUE_SESSION_ID)", docs},
	{"size iscsiinit.portalInfoExW", "sizeof(DOC_ISCSI_TARGET_PORTAL_INFO_EXW)", docs},
	{"offset iscsiinit.portalInfoExW.SecurityFlags", "offsetof(DOC_ISCSI_TARGET_PORTAL_INFO_EXW, SecurityFlags)", docs},
	{"offset iscsiinit.portalInfoExW.LoginOptions", "offsetof(DOC_ISCSI_TARGET_PORTAL_INFO_EXW, LoginOptions)", docs},
	{"size iscsiinit.sessionInfoW", "sizeof(DOC_ISCSI_SESSION_INFOW)", docs},
	{"offset iscsiinit.sessionInfoW.ConnectionCount", "offsetof(DOC_ISCSI_SESSION_INFOW, ConnectionCount)", docs},
	{"offset iscsiinit.sessionInfoW.Connections", "offsetof(DOC_ISCSI_SESSION_INFOW, Connections)", docs},
	{"size iscsiinit.deviceOnSessionW", "sizeof(DOC_ISCSI_DEVICE_ON_SESSIONW)", docs},
	{"offset iscsiinit.deviceOnSessionW.ScsiAddress", "offsetof(DOC_ISCSI_DEVICE_ON_SESSIONW, ScsiAddress)", docs},
	{"offset iscsiinit.deviceOnSessionW.DeviceInterfaceType", "offsetof(DOC_ISCSI_DEVICE_ON_SESSIONW, DeviceInterfaceType)", docs},
	{"offset iscsiinit.deviceOnSessionW.DeviceInterfaceName", "offsetof(DOC_ISCSI_DEVICE_ON_SESSIONW, DeviceInterfaceName)", docs},
	{"offset iscsiinit.deviceOnSessionW.LegacyName", "offsetof(DOC_ISCSI_DEVICE_ON_SESSIONW, LegacyName)", docs},
	{"offset iscsiinit.deviceOnSessionW.DeviceInstance", "offsetof(DOC_ISCSI_DEVICE_ON_SESSIONW, DeviceInstance)", docs},
	{"size iscsiinit.scsiAddress", "sizeof(SCSI_ADDRESS)", mingw},
	{"size iscsiinit.guid", "sizeof(GUID)", mingw},
	{"size iscsiinit.storageDeviceNumber", "sizeof(STORAGE_DEVICE_NUMBER)", mingw},

	// ISDSC_STATUS codes acted on by name (errors.go).
	{"const iscsiinit.isdscAuthenticationFailure", "DOC_ISDSC_AUTHENTICATION_FAILURE", docs},
	{"const iscsiinit.isdscAuthorizationFailure", "DOC_ISDSC_AUTHORIZATION_FAILURE", docs},
	{"const iscsiinit.isdscSessionBusy", "DOC_ISDSC_SESSION_BUSY", docs},
	{"const iscsiinit.isdscInvalidSessionID", "DOC_ISDSC_INVALID_SESSION_ID", docs},
	{"const iscsiinit.isdscTargetPortalExists", "DOC_ISDSC_TARGET_PORTAL_ALREADY_EXISTS", docs},
	{"const iscsiinit.isdscTargetAlreadyLoggedIn", "DOC_ISDSC_TARGET_ALREADY_LOGGED_IN", docs},
	{"const iscsiinit.isdscDeviceBusyOnSession", "DOC_ISDSC_DEVICE_BUSY_ON_SESSION", docs},
	{"const iscsiinit.isdscPortalNotFound", "DOC_ISDSC_PORTAL_NOT_FOUND", docs},
	{"const iscsiinit.isdscTargetNotFound", "DOC_ISDSC_TARGET_NOT_FOUND", docs},
	{"const iscsiinit.isdscServiceNotRunning", "DOC_ISDSC_SERVICE_NOT_RUNNING", docs},
	{"const iscsiinit.errAccessDenied", "ERROR_ACCESS_DENIED", mingw},
	{"const iscsiinit.errInsufficientBuffer", "ERROR_INSUFFICIENT_BUFFER", mingw},
	{"const iscsiinit.errRPCUnavailable", "RPC_S_SERVER_UNAVAILABLE", mingw},

	// The //sys declarations (syscall_windows.go).
	{"params iscsiinit.addIScsiSendTargetPortal", "params DOC_ISDSC_STATUS DOC_AddIScsiSendTargetPortalW(PWSTR, ULONG, DOC_ISCSI_LOGIN_OPTIONS *, DOC_ISCSI_SECURITY_FLAGS, DOC_ISCSI_TARGET_PORTALW *)", docs},
	{"params iscsiinit.removeIScsiSendTargetPortal", "params DOC_ISDSC_STATUS DOC_RemoveIScsiSendTargetPortalW(PWSTR, ULONG, DOC_ISCSI_TARGET_PORTALW *)", docs},
	{"params iscsiinit.refreshIScsiSendTargetPortal", "params DOC_ISDSC_STATUS DOC_RefreshIScsiSendTargetPortalW(PWSTR, ULONG, DOC_ISCSI_TARGET_PORTALW *)", docs},
	{"params iscsiinit.reportIScsiSendTargetPortalsEx", "params DOC_ISDSC_STATUS DOC_ReportIScsiSendTargetPortalsExW(PULONG, PULONG, DOC_ISCSI_TARGET_PORTAL_INFO_EXW *)", docs},
	{"params iscsiinit.reportIScsiTargets", "params DOC_ISDSC_STATUS DOC_ReportIScsiTargetsW(BOOLEAN, PULONG, PWCHAR)", docs},
	{"params iscsiinit.getIScsiTargetInformation", "params DOC_ISDSC_STATUS DOC_GetIScsiTargetInformationW(PWSTR, PWSTR, DOC_TARGET_INFORMATION_CLASS, PULONG, PVOID)", docs},
	{"params iscsiinit.loginIScsiTarget", "params DOC_ISDSC_STATUS DOC_LoginIScsiTargetW(PWSTR, BOOLEAN, PWSTR, ULONG, DOC_ISCSI_TARGET_PORTALW *, DOC_ISCSI_SECURITY_FLAGS, void *, DOC_ISCSI_LOGIN_OPTIONS *, ULONG, PCHAR, BOOLEAN, DOC_ISCSI_UNIQUE_SESSION_ID *, DOC_ISCSI_UNIQUE_SESSION_ID *)", docs},
	{"params iscsiinit.logoutIScsiTarget", "params DOC_ISDSC_STATUS DOC_LogoutIScsiTarget(DOC_ISCSI_UNIQUE_SESSION_ID *)", docs},
	{"params iscsiinit.removeIScsiPersistentTarget", "params DOC_ISDSC_STATUS DOC_RemoveIScsiPersistentTargetW(PWSTR, ULONG, PWSTR, DOC_ISCSI_TARGET_PORTALW *)", docs},
	{"params iscsiinit.getIScsiSessionList", "params DOC_ISDSC_STATUS DOC_GetIScsiSessionListW(PULONG, PULONG, DOC_ISCSI_SESSION_INFOW *)", docs},
	{"params iscsiinit.getDevicesForIScsiSession", "params DOC_ISDSC_STATUS DOC_GetDevicesForIScsiSessionW(DOC_ISCSI_UNIQUE_SESSION_ID *, PULONG, DOC_ISCSI_DEVICE_ON_SESSIONW *)", docs},
	{"params iscsiinit.setIScsiInitiatorCHAPSharedSecret", "params DOC_ISDSC_STATUS DOC_SetIScsiInitiatorCHAPSharedSecret(ULONG, PUCHAR)", docs},
}

// otherFigures: services, files, wmi, smbmap and identity.
var otherFigures = []figure{
	{"params services.getSystemFirmwareTable", "params UINT GetSystemFirmwareTable(DWORD, DWORD, PVOID, DWORD)", mingw},
	{"const services.rsmb", "'RSMB'", "Learn \"GetSystemFirmwareTable function\" (provider 'RSMB'); a C multi-character constant"},
	{"const services.rawSMBIOSHeader", "offsetof(struct DOC_RawSMBIOSData, SMBIOSTableData)", docs},
	{"const services.serviceQueryConfig", "SERVICE_QUERY_CONFIG", mingw},
	{"const services.serviceQueryStatus", "SERVICE_QUERY_STATUS", mingw},
	{"const services.serviceEnumerateDependent", "SERVICE_ENUMERATE_DEPENDENTS", mingw},
	{"const services.serviceStart", "SERVICE_START", mingw},
	{"const services.serviceStop", "SERVICE_STOP", mingw},
	{"const services.servicePauseContinue", "SERVICE_PAUSE_CONTINUE", mingw},
	{"const services.scManagerConnect", "SC_MANAGER_CONNECT", mingw},

	{"const files.attrReadonly", "FILE_ATTRIBUTE_READONLY", mingw},
	{"const files.attrDirectory", "FILE_ATTRIBUTE_DIRECTORY", mingw},
	{"const files.attrNormal", "FILE_ATTRIBUTE_NORMAL", mingw},
	{"const files.attrReparsePoint", "FILE_ATTRIBUTE_REPARSE_POINT", mingw},
	{"const files.attrSettable", "FILE_ATTRIBUTE_READONLY | FILE_ATTRIBUTE_HIDDEN | FILE_ATTRIBUTE_SYSTEM | FILE_ATTRIBUTE_ARCHIVE | FILE_ATTRIBUTE_NORMAL | FILE_ATTRIBUTE_TEMPORARY | FILE_ATTRIBUTE_OFFLINE | FILE_ATTRIBUTE_NOT_CONTENT_INDEXED", mingw},
	{"const files.tagMountPoint", "IO_REPARSE_TAG_MOUNT_POINT", mingw},
	{"const files.tagSymlink", "IO_REPARSE_TAG_SYMLINK", mingw},
	{"const files.symlinkDirectory", "SYMBOLIC_LINK_FLAG_DIRECTORY", mingw},
	{"const files.symlinkAllowUnprivileged", "SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE", mingw},

	{"const wmi.hrSFalse", "(DWORD)S_FALSE", mingw},
	{"const wmi.hrRPCChangedMode", "(DWORD)RPC_E_CHANGED_MODE", mingw},
	{"const wmi.hrRPCTooLate", "(DWORD)RPC_E_TOO_LATE", mingw},
	{"const wmi.hrDispException", "(DWORD)DISP_E_EXCEPTION", mingw},
	{"const wmi.hrAccessDenied", "(DWORD)E_ACCESSDENIED", mingw},
	{"const wmi.hrClassString", "(DWORD)CO_E_CLASSSTRING", mingw},
	{"const wmi.hrRPCServerUnavailable", "(DWORD)HRESULT_FROM_WIN32(RPC_S_SERVER_UNAVAILABLE)", mingw},
	{"const wmi.wbemFailed", "(DWORD)WBEM_E_FAILED", mingw},
	{"const wmi.wbemNotFound", "(DWORD)WBEM_E_NOT_FOUND", mingw},
	{"const wmi.wbemAccessDenied", "(DWORD)WBEM_E_ACCESS_DENIED", mingw},
	{"const wmi.wbemProviderFailure", "(DWORD)WBEM_E_PROVIDER_FAILURE", mingw},
	{"const wmi.wbemTypeMismatch", "(DWORD)WBEM_E_TYPE_MISMATCH", mingw},
	{"const wmi.wbemInvalidParameter", "(DWORD)WBEM_E_INVALID_PARAMETER", mingw},
	{"const wmi.wbemNotAvailable", "(DWORD)WBEM_E_NOT_AVAILABLE", mingw},
	{"const wmi.wbemNotSupported", "(DWORD)WBEM_E_NOT_SUPPORTED", mingw},
	{"const wmi.wbemInvalidNamespace", "(DWORD)WBEM_E_INVALID_NAMESPACE", mingw},
	{"const wmi.wbemInvalidClass", "(DWORD)WBEM_E_INVALID_CLASS", mingw},
	{"const wmi.wbemProviderNotFound", "(DWORD)WBEM_E_PROVIDER_NOT_FOUND", mingw},
	{"const wmi.wbemTransportFailure", "(DWORD)WBEM_E_TRANSPORT_FAILURE", mingw},
	{"const wmi.wbemInvalidQuery", "(DWORD)WBEM_E_INVALID_QUERY", mingw},
	{"const wmi.wbemInvalidSyntax", "(DWORD)WBEM_E_INVALID_SYNTAX", mingw},
	{"const wmi.wbemProviderNotCapable", "(DWORD)WBEM_E_PROVIDER_NOT_CAPABLE", mingw},
	{"const wmi.wbemInvalidMethodParam", "(DWORD)WBEM_E_INVALID_METHOD_PARAMETERS", mingw},
	{"const wmi.wbemFlagReturnImmediately", "WBEM_FLAG_RETURN_IMMEDIATELY", mingw},
	{"const wmi.wbemFlagForwardOnly", "WBEM_FLAG_FORWARD_ONLY", mingw},
	{"const wmi.rpcCAuthnLevelPktPrivacy", "RPC_C_AUTHN_LEVEL_PKT_PRIVACY", mingw},
	{"const wmi.rpcCImpLevelImpersonate", "RPC_C_IMP_LEVEL_IMPERSONATE", mingw},

	{"const smbmap.hresultWin32Facility", "(DWORD)MAKE_HRESULT(SEVERITY_ERROR, FACILITY_WIN32, 0)", mingw},

	{"const identity.jobObjectQuery", "JOB_OBJECT_QUERY", mingw},
	{"const identity.objectNameInformation", "ObjectNameInformation", mingw},
	{"callargs identity.isProcessInJob procIsProcessInJob", "params BOOL IsProcessInJob(HANDLE, HANDLE, PBOOL)", mingw},
	{"callargs identity.objectName procNtQueryObject", "params NTSTATUS NtQueryObject(HANDLE, OBJECT_INFORMATION_CLASS, PVOID, ULONG, PULONG)", mingw},
	{"size identity.handleEntry", "sizeof(DOC_SYSTEM_HANDLE_TABLE_ENTRY_INFO_EX)", docs + " (undocumented; phnt)"},
	{"offset identity.handleEntry.UniqueProcessID", "offsetof(DOC_SYSTEM_HANDLE_TABLE_ENTRY_INFO_EX, UniqueProcessId)", docs + " (undocumented; phnt)"},
	{"offset identity.handleEntry.HandleValue", "offsetof(DOC_SYSTEM_HANDLE_TABLE_ENTRY_INFO_EX, HandleValue)", docs + " (undocumented; phnt)"},
	{"offset identity.handleEntry.ObjectTypeIndex", "offsetof(DOC_SYSTEM_HANDLE_TABLE_ENTRY_INFO_EX, ObjectTypeIndex)", docs + " (undocumented; phnt)"},
	{"size identity.handleInfoHeader", "offsetof(DOC_SYSTEM_HANDLE_INFORMATION_EX, Handles)", docs + " (undocumented; phnt)"},
}

// errorCodeFigures: the Win32 error codes the backends decide on
// (winerror.h).
var errorCodeFigures = append(winErrors("storage", map[string]string{
	"errInvalidFunction": "ERROR_INVALID_FUNCTION", "errFileNotFound": "ERROR_FILE_NOT_FOUND",
	"errPathNotFound": "ERROR_PATH_NOT_FOUND", "errAccessDenied": "ERROR_ACCESS_DENIED",
	"errInvalidHandle": "ERROR_INVALID_HANDLE", "errWriteProtect": "ERROR_WRITE_PROTECT",
	"errNotReady": "ERROR_NOT_READY", "errSharingViolation": "ERROR_SHARING_VIOLATION",
	"errLockViolation": "ERROR_LOCK_VIOLATION", "errNotSupported": "ERROR_NOT_SUPPORTED",
	"errInvalidParameter": "ERROR_INVALID_PARAMETER", "errInsufficientBuffer": "ERROR_INSUFFICIENT_BUFFER",
	"errDirNotEmpty": "ERROR_DIR_NOT_EMPTY", "errBusy": "ERROR_BUSY", "errMoreData": "ERROR_MORE_DATA",
	"errDirectory": "ERROR_DIRECTORY", "errDeviceNotConnected": "ERROR_DEVICE_NOT_CONNECTED",
	"errUnrecognizedVolume": "ERROR_UNRECOGNIZED_VOLUME", "errIODevice": "ERROR_IO_DEVICE",
	"errUnrecognizedMedia": "ERROR_UNRECOGNIZED_MEDIA", "errPrivilegeNotHeld": "ERROR_PRIVILEGE_NOT_HELD",
	"errNotAReparsePoint": "ERROR_NOT_A_REPARSE_POINT",
}), append(winErrors("files", map[string]string{
	"errFileNotFound": "ERROR_FILE_NOT_FOUND", "errPathNotFound": "ERROR_PATH_NOT_FOUND",
	"errAccessDenied": "ERROR_ACCESS_DENIED", "errNotReady": "ERROR_NOT_READY",
	"errSharingViolation": "ERROR_SHARING_VIOLATION", "errLockViolation": "ERROR_LOCK_VIOLATION",
	"errBadNetPath": "ERROR_BAD_NETPATH", "errBadNetName": "ERROR_BAD_NET_NAME", "errFileExists": "ERROR_FILE_EXISTS",
	"errInvalidParameter": "ERROR_INVALID_PARAMETER", "errInvalidName": "ERROR_INVALID_NAME",
	"errDirNotEmpty": "ERROR_DIR_NOT_EMPTY", "errBadPathname": "ERROR_BAD_PATHNAME",
	"errAlreadyExists": "ERROR_ALREADY_EXISTS", "errFilenameTooLong": "ERROR_FILENAME_EXCED_RANGE",
	"errDirectory": "ERROR_DIRECTORY", "errUnrecognizedVol": "ERROR_UNRECOGNIZED_VOLUME",
	"errPrivilegeNotHeld": "ERROR_PRIVILEGE_NOT_HELD", "errNotAReparsePoint": "ERROR_NOT_A_REPARSE_POINT",
	"errCantResolveName": "ERROR_CANT_RESOLVE_FILENAME", "errDeviceNotConnectd": "ERROR_DEVICE_NOT_CONNECTED",
}), figure{"const storage.errNoSuchDevice", "DOC_ERROR_NO_SUCH_DEVICE", docs})...)

// winErrors makes one entry per Go error-code constant of a package.
func winErrors(pkg string, names map[string]string) []figure {
	var out []figure
	for goName, cName := range names {
		out = append(out, figure{"const " + pkg + "." + goName, cName, mingw + " (winerror.h)"})
	}
	return out
}
