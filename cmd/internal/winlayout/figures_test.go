package winlayout

// figure is one Win32 figure the Windows code defines by hand.
type figure struct {
	// Go says where the figure is in the code (windows/amd64 build, test
	// files included); package names are those of goPackages:
	//	size pkg.Type                 unsafe.Sizeof of a Go mirror
	//	offset pkg.Type.Field[.Sub]   unsafe.Offsetof of one of its fields
	//	const pkg.name                a constant's value
	//	lit pkg.func N                the integer literal N in a parser or
	//	                              caller (func may be Type.Method)
	//	guid pkg.name                 a GUID variable or string constant
	//	params pkg.func               sizes of a declared function's
	//	                              parameters (//sys lines)
	//	callargs pkg.func proc        arguments of proc.Call(...) in func
	Go string
	// C is a C constant expression over the SDK's declarations, or
	// "guid header SYMBOL", or "params RET NAME(T1, T2, ...)" (asserted at
	// compile time to be the SDK's prototype of NAME).
	C string
	// Src is where the C side comes from: mingw-w64's header, or (DOC_
	// names) the Microsoft documentation transcribed in testdata/msdocs.h.
	Src string
}

// mingw and docs name the two kinds of source.
const (
	mingw = "mingw-w64 10 headers"
	docs  = "Microsoft documentation, testdata/msdocs.h"
)

// figures is the table. Every entry must find its Go figure and agree
// with the compiler.
var figures = concat(storageFigures, vhdFigures, iscsiFigures, otherFigures, errorCodeFigures)

func concat(lists ...[]figure) []figure {
	var out []figure
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// storageFigures: the Windows storage backend's IOCTLs and the buffers it
// parses by offset (internal/host/windows/storage/ioctl.go, storage.go,
// disk.go).
var storageFigures = []figure{
	{"const storage.ioctlStorageGetDeviceNumber", "IOCTL_STORAGE_GET_DEVICE_NUMBER", mingw},
	{"const storage.ioctlStorageQueryProperty", "IOCTL_STORAGE_QUERY_PROPERTY", mingw},
	{"const storage.ioctlSCSIGetAddress", "IOCTL_SCSI_GET_ADDRESS", mingw},
	{"const storage.ioctlDiskGetLengthInfo", "IOCTL_DISK_GET_LENGTH_INFO", mingw},
	{"const storage.ioctlDiskGetDriveLayoutEx", "IOCTL_DISK_GET_DRIVE_LAYOUT_EX", mingw},
	{"const storage.ioctlDiskGetDiskAttributes", "DOC_IOCTL_DISK_GET_DISK_ATTRIBUTES", docs},
	{"const storage.ioctlDiskIsWritable", "IOCTL_DISK_IS_WRITABLE", mingw},
	{"const storage.ioctlVolumeGetVolumeDiskExtents", "IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS", mingw},
	{"const storage.fsctlGetReparsePoint", "FSCTL_GET_REPARSE_POINT", mingw},
	{"const storage.storageDeviceProperty", "StorageDeviceProperty", mingw},
	{"const storage.storageDeviceIDProperty", "StorageDeviceIdProperty", mingw},
	{"const storage.fileDeviceDisk", "FILE_DEVICE_DISK", mingw},
	{"const storage.diskAttributeOffline", "DOC_DISK_ATTRIBUTE_OFFLINE", docs},
	{"const storage.diskAttributeReadOnly", "DOC_DISK_ATTRIBUTE_READ_ONLY", docs},
	{"const storage.fileAttributeDirectory", "FILE_ATTRIBUTE_DIRECTORY", mingw},
	{"const storage.fileAttributeReparsePoint", "FILE_ATTRIBUTE_REPARSE_POINT", mingw},
	{"const storage.reparseTagMountPoint", "IO_REPARSE_TAG_MOUNT_POINT", mingw},
	{"const storage.reparseTagSymlink", "IO_REPARSE_TAG_SYMLINK", mingw},
	{"const storage.symlinkFlagRelative", "DOC_SYMLINK_FLAG_RELATIVE", docs},
	{"const storage.maxReparseDataSize", "MAXIMUM_REPARSE_DATA_BUFFER_SIZE", mingw},
	{"const storage.partitionStyleMBR", "PARTITION_STYLE_MBR", mingw},
	{"const storage.partitionStyleGPT", "PARTITION_STYLE_GPT", mingw},
	{"const storage.partitionStyleRAW", "PARTITION_STYLE_RAW", mingw},
	{"const storage.codeSetBinary", "StorageIdCodeSetBinary", mingw},
	{"const storage.codeSetASCII", "StorageIdCodeSetAscii", mingw},
	{"const storage.associationDevice", "StorageIdAssocDevice", mingw},
	{"const storage.busTypeSCSI", "BusTypeScsi", mingw},
	{"const storage.busTypeNVMe", "BusTypeNvme", mingw},
	{"guid storage.gptBasicData", "guid diskguid.h PARTITION_BASIC_DATA_GUID", mingw},
	{"guid storage.gptMicrosoftReserved", "guid diskguid.h PARTITION_MSFT_RESERVED_GUID", mingw},
	{"guid storage.guidDevInterfaceDisk", "guid winioctl.h GUID_DEVINTERFACE_DISK", mingw},

	// STORAGE_PROPERTY_QUERY, built by hand.
	{"lit storage.storagePropertyQuery 12", "sizeof(STORAGE_PROPERTY_QUERY)", mingw},
	{"lit storage.storagePropertyQuery 4", "offsetof(STORAGE_PROPERTY_QUERY, QueryType)", mingw},
	// STORAGE_DEVICE_NUMBER: the output buffer and the parser.
	{"lit storage.Backend.deviceNumber 12", "sizeof(STORAGE_DEVICE_NUMBER)", mingw},
	{"lit storage.parseDeviceNumber 12", "sizeof(STORAGE_DEVICE_NUMBER)", mingw},
	{"lit storage.parseDeviceNumber 4", "offsetof(STORAGE_DEVICE_NUMBER, DeviceNumber)", mingw},
	{"lit storage.parseDeviceNumber 8", "offsetof(STORAGE_DEVICE_NUMBER, PartitionNumber)", mingw},
	{"size storage.deviceNumber", "sizeof(STORAGE_DEVICE_NUMBER)", mingw},
	// SCSI_ADDRESS.
	{"lit storage.diskHost.ListDiskLocations 8", "sizeof(SCSI_ADDRESS)", mingw},
	{"lit storage.parseSCSIAddress 8", "sizeof(SCSI_ADDRESS)", mingw},
	{"lit storage.parseSCSIAddress 4", "offsetof(SCSI_ADDRESS, PortNumber)", mingw},
	{"lit storage.parseSCSIAddress 5", "offsetof(SCSI_ADDRESS, PathId)", mingw},
	{"lit storage.parseSCSIAddress 6", "offsetof(SCSI_ADDRESS, TargetId)", mingw},
	{"lit storage.parseSCSIAddress 7", "offsetof(SCSI_ADDRESS, Lun)", mingw},
	// GET_LENGTH_INFORMATION.
	{"lit storage.diskHost.DiskSize 8", "sizeof(GET_LENGTH_INFORMATION)", mingw},
	{"lit storage.parseLengthInfo 8", "sizeof(GET_LENGTH_INFORMATION)", mingw},
	// GET_DISK_ATTRIBUTES (not in mingw).
	{"lit storage.Backend.diskAttributes 16", "sizeof(DOC_GET_DISK_ATTRIBUTES)", docs},
	{"lit storage.parseDiskAttributes 16", "sizeof(DOC_GET_DISK_ATTRIBUTES)", docs},
	{"lit storage.parseDiskAttributes 8", "offsetof(DOC_GET_DISK_ATTRIBUTES, Attributes)", docs},
	// STORAGE_DEVICE_DESCRIPTOR and its header.
	{"lit storage.descriptor 4", "offsetof(STORAGE_DESCRIPTOR_HEADER, Size)", mingw},
	{"lit storage.parseSerialNumber 24", "offsetof(STORAGE_DEVICE_DESCRIPTOR, SerialNumberOffset)", mingw},
	{"lit storage.parseSerialNumber 28", "offsetof(STORAGE_DEVICE_DESCRIPTOR, BusType)", mingw},
	{"lit storage.parseBusType 28", "offsetof(STORAGE_DEVICE_DESCRIPTOR, BusType)", mingw},
	{"lit storage.parseBusType 32", "offsetof(STORAGE_DEVICE_DESCRIPTOR, RawPropertiesLength)", mingw},
	// STORAGE_DEVICE_ID_DESCRIPTOR and STORAGE_IDENTIFIER.
	{"lit storage.parsePage83 12", "offsetof(STORAGE_DEVICE_ID_DESCRIPTOR, Identifiers)", mingw},
	{"lit storage.parsePage83 8", "offsetof(STORAGE_DEVICE_ID_DESCRIPTOR, NumberOfIdentifiers)", mingw},
	{"lit storage.parsePage83 16", "offsetof(STORAGE_IDENTIFIER, Identifier)", mingw},
	{"lit storage.parsePage83 10", "offsetof(STORAGE_IDENTIFIER, NextOffset)", mingw},
	// DISK_EXTENT and VOLUME_DISK_EXTENTS.
	{"size storage.diskExtent", "sizeof(DISK_EXTENT)", mingw},
	{"offset storage.diskExtent.StartingOffset", "offsetof(DISK_EXTENT, StartingOffset)", mingw},
	{"offset storage.diskExtent.ExtentLength", "offsetof(DISK_EXTENT, ExtentLength)", mingw},
	{"lit storage.parseDiskExtents 8", "offsetof(VOLUME_DISK_EXTENTS, Extents)", mingw},
	{"lit storage.parseDiskExtents 24", "sizeof(DISK_EXTENT)", mingw},
	{"lit storage.parseDiskExtents 16", "offsetof(DISK_EXTENT, ExtentLength)", mingw},
	// DRIVE_LAYOUT_INFORMATION_EX and PARTITION_INFORMATION_EX.
	{"lit storage.layoutSize 48", "offsetof(DRIVE_LAYOUT_INFORMATION_EX, PartitionEntry)", mingw},
	{"lit storage.layoutSize 144", "sizeof(PARTITION_INFORMATION_EX)", mingw},
	{"lit storage.parseDriveLayout 48", "offsetof(DRIVE_LAYOUT_INFORMATION_EX, PartitionEntry)", mingw},
	{"lit storage.parseDriveLayout 144", "sizeof(PARTITION_INFORMATION_EX)", mingw},
	{"lit storage.parseDriveLayout 4", "offsetof(DRIVE_LAYOUT_INFORMATION_EX, PartitionCount)", mingw},
	{"lit storage.parseDriveLayout 8", "offsetof(PARTITION_INFORMATION_EX, StartingOffset)", mingw},
	{"lit storage.parseDriveLayout 16", "offsetof(PARTITION_INFORMATION_EX, PartitionLength)", mingw},
	{"lit storage.parseDriveLayout 24", "offsetof(PARTITION_INFORMATION_EX, PartitionNumber)", mingw},
	{"lit storage.parseDriveLayout 32", "offsetof(PARTITION_INFORMATION_EX, Mbr.PartitionType)", mingw},
	{"lit storage.parseDriveLayout 32", "offsetof(PARTITION_INFORMATION_EX, Gpt.PartitionType)", mingw},
	// REPARSE_DATA_BUFFER (ntifs.h, not in mingw's user-mode headers).
	{"lit storage.parseReparsePoint 20", "offsetof(DOC_REPARSE_DATA_BUFFER, SymbolicLinkReparseBuffer.PathBuffer)", docs},
	{"lit storage.parseReparsePoint 16", "offsetof(DOC_REPARSE_DATA_BUFFER, SymbolicLinkReparseBuffer.Flags)", docs},
	{"lit storage.parseReparsePoint 16", "offsetof(DOC_REPARSE_DATA_BUFFER, MountPointReparseBuffer.PathBuffer)", docs},
	{"lit storage.parseReparsePoint 8", "offsetof(DOC_REPARSE_DATA_BUFFER, MountPointReparseBuffer.SubstituteNameOffset)", docs},
	{"lit storage.parseReparsePoint 10", "offsetof(DOC_REPARSE_DATA_BUFFER, MountPointReparseBuffer.SubstituteNameLength)", docs},
	{"lit storage.parseReparsePoint 12", "offsetof(DOC_REPARSE_DATA_BUFFER, SymbolicLinkReparseBuffer.PrintNameOffset)", docs},
	{"lit storage.parseReparsePoint 14", "offsetof(DOC_REPARSE_DATA_BUFFER, SymbolicLinkReparseBuffer.PrintNameLength)", docs},
}

// vhdFigures: the real-node kit's Virtual Disk API helper
// (internal/host/windows/storage/vhd_windows_test.go). mingw's
// virtdisk.h lacks ATTACH_VIRTUAL_DISK_PARAMETERS.Version2.
var vhdFigures = []figure{
	{"size storage.virtualStorageType", "sizeof(VIRTUAL_STORAGE_TYPE)", mingw},
	{"offset storage.virtualStorageType.VendorID", "offsetof(VIRTUAL_STORAGE_TYPE, VendorId)", mingw},
	{"offset storage.createVirtualDiskParameters.UniqueID", "offsetof(CREATE_VIRTUAL_DISK_PARAMETERS, Version1.UniqueId)", mingw},
	{"offset storage.createVirtualDiskParameters.MaximumSize", "offsetof(CREATE_VIRTUAL_DISK_PARAMETERS, Version1.MaximumSize)", mingw},
	{"offset storage.createVirtualDiskParameters.BlockSizeInBytes", "offsetof(CREATE_VIRTUAL_DISK_PARAMETERS, Version1.BlockSizeInBytes)", mingw},
	{"offset storage.createVirtualDiskParameters.SectorSizeInBytes", "offsetof(CREATE_VIRTUAL_DISK_PARAMETERS, Version1.SectorSizeInBytes)", mingw},
	{"offset storage.createVirtualDiskParameters.ParentPath", "offsetof(CREATE_VIRTUAL_DISK_PARAMETERS, Version1.ParentPath)", mingw},
	{"offset storage.createVirtualDiskParameters.SourcePath", "offsetof(CREATE_VIRTUAL_DISK_PARAMETERS, Version1.SourcePath)", mingw},
	{"size storage.attachVirtualDiskParameters", "sizeof(DOC_ATTACH_VIRTUAL_DISK_PARAMETERS)", docs},
	{"offset storage.attachVirtualDiskParameters.Reserved", "offsetof(DOC_ATTACH_VIRTUAL_DISK_PARAMETERS, Version1.Reserved)", docs},
	{"size storage.expandVirtualDiskParameters", "sizeof(EXPAND_VIRTUAL_DISK_PARAMETERS)", mingw},
	{"offset storage.expandVirtualDiskParameters.NewSize", "offsetof(EXPAND_VIRTUAL_DISK_PARAMETERS, Version1.NewSize)", mingw},
	{"const storage.virtualStorageTypeDeviceVHD", "VIRTUAL_STORAGE_TYPE_DEVICE_VHD", mingw},
	{"const storage.virtualDiskAccessAll", "VIRTUAL_DISK_ACCESS_ALL", mingw},
	{"const storage.createVirtualDiskFlagNone", "CREATE_VIRTUAL_DISK_FLAG_NONE", mingw},
	{"const storage.attachVirtualDiskFlagNoLetter", "ATTACH_VIRTUAL_DISK_FLAG_NO_DRIVE_LETTER", mingw},
	{"const storage.expandVirtualDiskVersion1", "EXPAND_VIRTUAL_DISK_VERSION_1", mingw},
	{"const storage.detachVirtualDiskFlagNone", "DETACH_VIRTUAL_DISK_FLAG_NONE", mingw},
	{"const storage.createVirtualDiskVersion1", "CREATE_VIRTUAL_DISK_VERSION_1", mingw},
	{"const storage.attachVirtualDiskVersion1", "ATTACH_VIRTUAL_DISK_VERSION_1", mingw},
	{"guid storage.virtualStorageVendorMicrosoft", "guid virtdisk.h VIRTUAL_STORAGE_TYPE_VENDOR_MICROSOFT", mingw},
	{"params storage.createVirtualDisk", "params DWORD CreateVirtualDisk(PVIRTUAL_STORAGE_TYPE, PCWSTR, VIRTUAL_DISK_ACCESS_MASK, PSECURITY_DESCRIPTOR, CREATE_VIRTUAL_DISK_FLAG, ULONG, PCREATE_VIRTUAL_DISK_PARAMETERS, LPOVERLAPPED, PHANDLE)", mingw},
	{"params storage.attachVirtualDisk", "params DWORD AttachVirtualDisk(HANDLE, PSECURITY_DESCRIPTOR, ATTACH_VIRTUAL_DISK_FLAG, ULONG, PATTACH_VIRTUAL_DISK_PARAMETERS, LPOVERLAPPED)", mingw},
	{"params storage.detachVirtualDisk", "params DWORD DetachVirtualDisk(HANDLE, DETACH_VIRTUAL_DISK_FLAG, ULONG)", mingw},
	{"params storage.getVirtualDiskPhysicalPath", "params DWORD GetVirtualDiskPhysicalPath(HANDLE, PULONG, PWSTR)", mingw},
	{"params storage.expandVirtualDisk", "params DWORD ExpandVirtualDisk(HANDLE, EXPAND_VIRTUAL_DISK_FLAG, PEXPAND_VIRTUAL_DISK_PARAMETERS, LPOVERLAPPED)", mingw},
}
