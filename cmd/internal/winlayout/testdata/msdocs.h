/*
 * Transcriptions of Microsoft's documentation for the declarations that
 * mingw-w64 10's headers get wrong or lack (docs/windows-layouts.md, fact
 * sheet windows-apis.md §E). Written for this project from the cited
 * pages; names carry a DOC_ prefix so that they never clash with mingw's.
 */
#ifndef CSI_NODE_PROXY_MSDOCS_H
#define CSI_NODE_PROXY_MSDOCS_H
#include <windows.h>
#include <winioctl.h>
#include <ntddscsi.h>

/* iscsidsc.h (Learn, "iscsidsc.h header"): mingw's does not compile and has
 * ISCSI_SESSION_INFOW's names wrong. */
#define DOC_MAX_ISCSI_HBANAME_LEN 256
#define DOC_MAX_ISCSI_NAME_LEN 223
#define DOC_MAX_ISCSI_PORTAL_NAME_LEN 256
#define DOC_MAX_ISCSI_PORTAL_ADDRESS_LEN 256
#define DOC_ISCSI_ALL_INITIATOR_PORTS ((ULONG)-1)
#define DOC_ISCSI_LOGIN_OPTIONS_VERSION 0
/* ISCSI_LOGIN_OPTIONS_INFO_SPECIFIED bits (Learn "ISCSI_LOGIN_OPTIONS"). */
#define DOC_ISCSI_LOGIN_OPTIONS_USERNAME 0x20
#define DOC_ISCSI_LOGIN_OPTIONS_PASSWORD 0x40
#define DOC_ISCSI_LOGIN_OPTIONS_AUTH_TYPE 0x80
typedef ULONG DOC_ISDSC_STATUS;
typedef ULONGLONG DOC_ISCSI_SECURITY_FLAGS;
/* Learn "ISCSI_AUTH_TYPES enumeration". */
typedef enum { DOC_ISCSI_NO_AUTH_TYPE = 0, DOC_ISCSI_CHAP_AUTH_TYPE = 1, DOC_ISCSI_MUTUAL_CHAP_AUTH_TYPE = 2 } DOC_ISCSI_AUTH_TYPES;
/* Learn "TARGET_INFORMATION_CLASS enumeration". */
typedef enum { DOC_ProtocolType, DOC_TargetAlias, DOC_DiscoveryMechanisms, DOC_PortalGroups, DOC_PersistentTargetMappings,
	DOC_InitiatorName, DOC_TargetFlags, DOC_LoginOptions } DOC_TARGET_INFORMATION_CLASS;
/* Learn "ISCSI_TARGET_PORTALW structure". */
typedef struct {
	WCHAR SymbolicName[DOC_MAX_ISCSI_PORTAL_NAME_LEN];
	WCHAR Address[DOC_MAX_ISCSI_PORTAL_ADDRESS_LEN];
	USHORT Socket;
} DOC_ISCSI_TARGET_PORTALW;
/* Learn "ISCSI_LOGIN_OPTIONS structure". */
typedef struct {
	ULONG Version;
	ULONG InformationSpecified;
	ULONG LoginFlags;
	DOC_ISCSI_AUTH_TYPES AuthType;
	ULONG HeaderDigest; /* ISCSI_DIGEST_TYPES */
	ULONG DataDigest;
	ULONG MaximumConnections;
	ULONG DefaultTime2Wait;
	ULONG DefaultTime2Retain;
	ULONG UsernameLength;
	ULONG PasswordLength;
	PUCHAR Username;
	PUCHAR Password;
} DOC_ISCSI_LOGIN_OPTIONS;
/* Learn "ISCSI_UNIQUE_SESSION_ID structure". */
typedef struct {
	ULONGLONG AdapterUnique;
	ULONGLONG AdapterSpecific;
} DOC_ISCSI_UNIQUE_SESSION_ID;
/* Learn "ISCSI_TARGET_PORTAL_INFO_EXW structure". */
typedef struct {
	WCHAR InitiatorName[DOC_MAX_ISCSI_HBANAME_LEN];
	ULONG InitiatorPortNumber;
	WCHAR SymbolicName[DOC_MAX_ISCSI_PORTAL_NAME_LEN];
	WCHAR Address[DOC_MAX_ISCSI_PORTAL_ADDRESS_LEN];
	USHORT Socket;
	DOC_ISCSI_SECURITY_FLAGS SecurityFlags;
	DOC_ISCSI_LOGIN_OPTIONS LoginOptions;
} DOC_ISCSI_TARGET_PORTAL_INFO_EXW;
/* Learn "ISCSI_SESSION_INFOW structure": the three names are pointers, in
 * the order InitiatorName, TargetNodeName, TargetName. */
typedef struct {
	DOC_ISCSI_UNIQUE_SESSION_ID SessionId;
	PWCHAR InitiatorName;
	PWCHAR TargetNodeName;
	PWCHAR TargetName;
	UCHAR ISID[6];
	UCHAR TSID[2];
	ULONG ConnectionCount;
	void *Connections; /* PISCSI_CONNECTION_INFOW */
} DOC_ISCSI_SESSION_INFOW;
/* Learn "ISCSI_DEVICE_ON_SESSIONW structure" (missing from mingw). */
typedef struct {
	WCHAR InitiatorName[DOC_MAX_ISCSI_HBANAME_LEN];
	WCHAR TargetName[DOC_MAX_ISCSI_NAME_LEN + 1];
	SCSI_ADDRESS ScsiAddress;
	GUID DeviceInterfaceType;
	WCHAR DeviceInterfaceName[MAX_PATH];
	WCHAR LegacyName[MAX_PATH];
	STORAGE_DEVICE_NUMBER StorageDeviceNumber;
	DWORD DeviceInstance;
} DOC_ISCSI_DEVICE_ON_SESSIONW;
/* The functions' prototypes (Learn, one page per function). */
DOC_ISDSC_STATUS WINAPI DOC_AddIScsiSendTargetPortalW(PWSTR, ULONG, DOC_ISCSI_LOGIN_OPTIONS *, DOC_ISCSI_SECURITY_FLAGS, DOC_ISCSI_TARGET_PORTALW *);
DOC_ISDSC_STATUS WINAPI DOC_RemoveIScsiSendTargetPortalW(PWSTR, ULONG, DOC_ISCSI_TARGET_PORTALW *);
DOC_ISDSC_STATUS WINAPI DOC_RefreshIScsiSendTargetPortalW(PWSTR, ULONG, DOC_ISCSI_TARGET_PORTALW *);
DOC_ISDSC_STATUS WINAPI DOC_ReportIScsiSendTargetPortalsExW(PULONG, PULONG, DOC_ISCSI_TARGET_PORTAL_INFO_EXW *);
DOC_ISDSC_STATUS WINAPI DOC_ReportIScsiTargetsW(BOOLEAN, PULONG, PWCHAR);
DOC_ISDSC_STATUS WINAPI DOC_GetIScsiTargetInformationW(PWSTR, PWSTR, DOC_TARGET_INFORMATION_CLASS, PULONG, PVOID);
DOC_ISDSC_STATUS WINAPI DOC_LoginIScsiTargetW(PWSTR, BOOLEAN, PWSTR, ULONG, DOC_ISCSI_TARGET_PORTALW *, DOC_ISCSI_SECURITY_FLAGS,
	void * /* PISCSI_TARGET_MAPPINGW */, DOC_ISCSI_LOGIN_OPTIONS *, ULONG, PCHAR, BOOLEAN, DOC_ISCSI_UNIQUE_SESSION_ID *,
	DOC_ISCSI_UNIQUE_SESSION_ID * /* PISCSI_UNIQUE_CONNECTION_ID, the same struct */);
DOC_ISDSC_STATUS WINAPI DOC_LogoutIScsiTarget(DOC_ISCSI_UNIQUE_SESSION_ID *);
DOC_ISDSC_STATUS WINAPI DOC_RemoveIScsiPersistentTargetW(PWSTR, ULONG, PWSTR, DOC_ISCSI_TARGET_PORTALW *);
DOC_ISDSC_STATUS WINAPI DOC_GetIScsiSessionListW(PULONG, PULONG, DOC_ISCSI_SESSION_INFOW *);
DOC_ISDSC_STATUS WINAPI DOC_GetDevicesForIScsiSessionW(DOC_ISCSI_UNIQUE_SESSION_ID *, PULONG, DOC_ISCSI_DEVICE_ON_SESSIONW *);
DOC_ISDSC_STATUS WINAPI DOC_SetIScsiInitiatorCHAPSharedSecret(ULONG, PUCHAR);

/* iscsierr.h (missing from mingw): Learn "ISCSI_STATUS_QUALIFIERS"
 * (MicrosoftDocs/windows-driver-docs, windows-driver-docs-pr/storage/
 * iscsi-status-qualifiers.md at 02b72a32). Only the codes the code uses. */
#define DOC_ISDSC_AUTHENTICATION_FAILURE 0xEFFF0009
#define DOC_ISDSC_AUTHORIZATION_FAILURE 0xEFFF000A
#define DOC_ISDSC_INVALID_SESSION_ID 0xEFFF001C
#define DOC_ISDSC_SESSION_BUSY 0xEFFF001F
#define DOC_ISDSC_TARGET_NOT_FOUND 0xEFFF0029
#define DOC_ISDSC_TARGET_PORTAL_ALREADY_EXISTS 0xEFFF0032
#define DOC_ISDSC_SERVICE_NOT_RUNNING 0xEFFF003E
#define DOC_ISDSC_TARGET_ALREADY_LOGGED_IN 0xEFFF003F
#define DOC_ISDSC_DEVICE_BUSY_ON_SESSION 0xEFFF0040
#define DOC_ISDSC_PORTAL_NOT_FOUND 0xEFFF0043

/* virtdisk.h: Learn "ATTACH_VIRTUAL_DISK_PARAMETERS structure" has a
 * Version2 arm of two ULONGLONGs (RestrictedOffset, RestrictedLength),
 * which mingw's lacks; the union is therefore 8-aligned and 16 bytes. */
typedef struct {
	int Version; /* ATTACH_VIRTUAL_DISK_VERSION */
	union {
		struct { ULONG Reserved; } Version1;
		struct { ULONGLONG RestrictedOffset; ULONGLONG RestrictedLength; } Version2;
	};
} DOC_ATTACH_VIRTUAL_DISK_PARAMETERS;

/* winioctl.h (missing from mingw): Learn "IOCTL_DISK_GET_DISK_ATTRIBUTES"
 * and "GET_DISK_ATTRIBUTES structure". */
#define DOC_IOCTL_DISK_GET_DISK_ATTRIBUTES CTL_CODE(IOCTL_DISK_BASE, 0x003c, METHOD_BUFFERED, FILE_ANY_ACCESS)
#define DOC_IOCTL_DISK_SET_DISK_ATTRIBUTES CTL_CODE(IOCTL_DISK_BASE, 0x003d, METHOD_BUFFERED, FILE_READ_ACCESS | FILE_WRITE_ACCESS)
#define DOC_DISK_ATTRIBUTE_OFFLINE 0x0000000000000001ULL
#define DOC_DISK_ATTRIBUTE_READ_ONLY 0x0000000000000002ULL
typedef struct {
	ULONG Version;
	ULONG Reserved1;
	ULONGLONG Attributes;
} DOC_GET_DISK_ATTRIBUTES;
/* Learn "SET_DISK_ATTRIBUTES structure". */
typedef struct {
	ULONG Version;
	BOOLEAN Persist;
	BYTE Reserved1[3];
	ULONGLONG Attributes;
	ULONGLONG AttributesMask;
	DWORD Reserved2[4];
} DOC_SET_DISK_ATTRIBUTES;

/* winerror.h: ERROR_NO_SUCH_DEVICE (Learn "System Error Codes (1-499)"),
 * missing from mingw 10. */
#define DOC_ERROR_NO_SUCH_DEVICE 433

/* ntifs.h (a driver header, not in mingw's user-mode set): Learn
 * "REPARSE_DATA_BUFFER structure (ntifs.h)". */
typedef struct {
	ULONG ReparseTag;
	USHORT ReparseDataLength;
	USHORT Reserved;
	union {
		struct {
			USHORT SubstituteNameOffset;
			USHORT SubstituteNameLength;
			USHORT PrintNameOffset;
			USHORT PrintNameLength;
			ULONG Flags;
			WCHAR PathBuffer[1];
		} SymbolicLinkReparseBuffer;
		struct {
			USHORT SubstituteNameOffset;
			USHORT SubstituteNameLength;
			USHORT PrintNameOffset;
			USHORT PrintNameLength;
			WCHAR PathBuffer[1];
		} MountPointReparseBuffer;
	};
} DOC_REPARSE_DATA_BUFFER;
#define DOC_SYMLINK_FLAG_RELATIVE 1

/* Learn "GetSystemFirmwareTable function": the 'RSMB' provider returns a
 * RawSMBIOSData, whose table data follows an 8-byte header. */
struct DOC_RawSMBIOSData {
	BYTE Used20CallingMethod;
	BYTE SMBIOSMajorVersion;
	BYTE SMBIOSMinorVersion;
	BYTE DmiRevision;
	DWORD Length;
	BYTE SMBIOSTableData[];
};

/* Undocumented by Microsoft: SYSTEM_HANDLE_TABLE_ENTRY_INFO_EX and
 * SYSTEM_HANDLE_INFORMATION_EX (NtQuerySystemInformation class 64) as the
 * community headers give them (winsiderss/phnt, ntexapi.h). */
typedef struct {
	PVOID Object;
	ULONG_PTR UniqueProcessId;
	ULONG_PTR HandleValue;
	ULONG GrantedAccess;
	USHORT CreatorBackTraceIndex;
	USHORT ObjectTypeIndex;
	ULONG HandleAttributes;
	ULONG Reserved;
} DOC_SYSTEM_HANDLE_TABLE_ENTRY_INFO_EX;
typedef struct {
	ULONG_PTR NumberOfHandles;
	ULONG_PTR Reserved;
	DOC_SYSTEM_HANDLE_TABLE_ENTRY_INFO_EX Handles[1];
} DOC_SYSTEM_HANDLE_INFORMATION_EX;
#endif
