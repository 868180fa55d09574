package callgate

// Methods are the method names of each API group, over every version the
// daemon serves (the older versions' names included, such as disk's
// GetDiskNumberByName), each once: the names a policy rule may list
// (read only). The daemon and library mode both take them from here;
// library mode links no wire code, so they are written out, and a test
// of package server (TestGateMethodsMatchWire) holds them to the wire
// descriptors.
var Methods = map[string][]string{
	"disk":       {"ListDiskLocations", "PartitionDisk", "Rescan", "GetDiskNumberByName", "ListDiskIDs", "DiskStats", "SetAttachState", "GetAttachState", "GetDiskStats", "SetDiskState", "GetDiskState"},
	"filesystem": {"PathExists", "Mkdir", "Rmdir", "LinkPath", "IsMountPoint", "CreateSymlink", "IsSymlink", "RmdirContents"},
	"iscsi":      {"AddTargetPortal", "DiscoverTargetPortal", "RemoveTargetPortal", "ListTargetPortals", "ConnectTarget", "DisconnectTarget", "GetTargetDisks", "SetMutualChapSecret"},
	"smb":        {"NewSmbGlobalMapping", "RemoveSmbGlobalMapping"},
	"system":     {"GetBIOSSerialNumber", "StartService", "StopService", "GetService"},
	"volume":     {"ListVolumesOnDisk", "MountVolume", "DismountVolume", "IsVolumeFormatted", "FormatVolume", "ResizeVolume", "VolumeStats", "GetVolumeDiskNumber", "GetVolumeIDFromMount", "WriteVolumeCache", "UnmountVolume", "GetVolumeStats", "GetDiskNumberFromVolumeID", "GetVolumeIDFromTargetPath", "GetClosestVolumeIDFromTargetPath"},
}
