package inprocess

import (
	"context"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// One guarded wrapper per group: each method sends its call through call
// (guard.go) to the group's Service. TestEveryMethodGuarded checks that
// every method of every group Interface is here and names itself.

// diskGuard is the disk group of a Node.
type diskGuard struct {
	g *guard
	s disk.Interface
}

var _ disk.Interface = diskGuard{}

// ListDiskLocations calls the disk Service's ListDiskLocations through the policy and audit log.
func (x diskGuard) ListDiskLocations(ctx context.Context, r *disk.ListDiskLocationsRequest) (*disk.ListDiskLocationsResponse, error) {
	return call(ctx, x.g, "ListDiskLocations", r, x.s.ListDiskLocations)
}

// PartitionDisk calls the disk Service's PartitionDisk through the policy and audit log.
func (x diskGuard) PartitionDisk(ctx context.Context, r *disk.PartitionDiskRequest) (*disk.PartitionDiskResponse, error) {
	return call(ctx, x.g, "PartitionDisk", r, x.s.PartitionDisk)
}

// Rescan calls the disk Service's Rescan through the policy and audit log.
func (x diskGuard) Rescan(ctx context.Context, r *disk.RescanRequest) (*disk.RescanResponse, error) {
	return call(ctx, x.g, "Rescan", r, x.s.Rescan)
}

// ListDiskIDs calls the disk Service's ListDiskIDs through the policy and audit log.
func (x diskGuard) ListDiskIDs(ctx context.Context, r *disk.ListDiskIDsRequest) (*disk.ListDiskIDsResponse, error) {
	return call(ctx, x.g, "ListDiskIDs", r, x.s.ListDiskIDs)
}

// GetDiskStats calls the disk Service's GetDiskStats through the policy and audit log.
func (x diskGuard) GetDiskStats(ctx context.Context, r *disk.GetDiskStatsRequest) (*disk.GetDiskStatsResponse, error) {
	return call(ctx, x.g, "GetDiskStats", r, x.s.GetDiskStats)
}

// SetDiskState calls the disk Service's SetDiskState through the policy and audit log.
func (x diskGuard) SetDiskState(ctx context.Context, r *disk.SetDiskStateRequest) (*disk.SetDiskStateResponse, error) {
	return call(ctx, x.g, "SetDiskState", r, x.s.SetDiskState)
}

// GetDiskState calls the disk Service's GetDiskState through the policy and audit log.
func (x diskGuard) GetDiskState(ctx context.Context, r *disk.GetDiskStateRequest) (*disk.GetDiskStateResponse, error) {
	return call(ctx, x.g, "GetDiskState", r, x.s.GetDiskState)
}

// volumeGuard is the volume group of a Node.
type volumeGuard struct {
	g *guard
	s volume.Interface
}

var _ volume.Interface = volumeGuard{}

// ListVolumesOnDisk calls the volume Service's ListVolumesOnDisk through the policy and audit log.
func (x volumeGuard) ListVolumesOnDisk(ctx context.Context, r *volume.ListVolumesOnDiskRequest) (*volume.ListVolumesOnDiskResponse, error) {
	return call(ctx, x.g, "ListVolumesOnDisk", r, x.s.ListVolumesOnDisk)
}

// MountVolume calls the volume Service's MountVolume through the policy and audit log.
func (x volumeGuard) MountVolume(ctx context.Context, r *volume.MountVolumeRequest) (*volume.MountVolumeResponse, error) {
	return call(ctx, x.g, "MountVolume", r, x.s.MountVolume)
}

// UnmountVolume calls the volume Service's UnmountVolume through the policy and audit log.
func (x volumeGuard) UnmountVolume(ctx context.Context, r *volume.UnmountVolumeRequest) (*volume.UnmountVolumeResponse, error) {
	return call(ctx, x.g, "UnmountVolume", r, x.s.UnmountVolume)
}

// IsVolumeFormatted calls the volume Service's IsVolumeFormatted through the policy and audit log.
func (x volumeGuard) IsVolumeFormatted(ctx context.Context, r *volume.IsVolumeFormattedRequest) (*volume.IsVolumeFormattedResponse, error) {
	return call(ctx, x.g, "IsVolumeFormatted", r, x.s.IsVolumeFormatted)
}

// FormatVolume calls the volume Service's FormatVolume through the policy and audit log.
func (x volumeGuard) FormatVolume(ctx context.Context, r *volume.FormatVolumeRequest) (*volume.FormatVolumeResponse, error) {
	return call(ctx, x.g, "FormatVolume", r, x.s.FormatVolume)
}

// ResizeVolume calls the volume Service's ResizeVolume through the policy and audit log.
func (x volumeGuard) ResizeVolume(ctx context.Context, r *volume.ResizeVolumeRequest) (*volume.ResizeVolumeResponse, error) {
	return call(ctx, x.g, "ResizeVolume", r, x.s.ResizeVolume)
}

// GetVolumeStats calls the volume Service's GetVolumeStats through the policy and audit log.
func (x volumeGuard) GetVolumeStats(ctx context.Context, r *volume.GetVolumeStatsRequest) (*volume.GetVolumeStatsResponse, error) {
	return call(ctx, x.g, "GetVolumeStats", r, x.s.GetVolumeStats)
}

// GetDiskNumberFromVolumeID calls the volume Service's GetDiskNumberFromVolumeID through the policy and audit log.
func (x volumeGuard) GetDiskNumberFromVolumeID(ctx context.Context, r *volume.GetDiskNumberFromVolumeIDRequest) (*volume.GetDiskNumberFromVolumeIDResponse, error) {
	return call(ctx, x.g, "GetDiskNumberFromVolumeID", r, x.s.GetDiskNumberFromVolumeID)
}

// GetVolumeIDFromTargetPath calls the volume Service's GetVolumeIDFromTargetPath through the policy and audit log.
func (x volumeGuard) GetVolumeIDFromTargetPath(ctx context.Context, r *volume.GetVolumeIDFromTargetPathRequest) (*volume.GetVolumeIDFromTargetPathResponse, error) {
	return call(ctx, x.g, "GetVolumeIDFromTargetPath", r, x.s.GetVolumeIDFromTargetPath)
}

// GetClosestVolumeIDFromTargetPath calls the volume Service's GetClosestVolumeIDFromTargetPath through the policy and audit log.
func (x volumeGuard) GetClosestVolumeIDFromTargetPath(ctx context.Context, r *volume.GetClosestVolumeIDFromTargetPathRequest) (*volume.GetClosestVolumeIDFromTargetPathResponse, error) {
	return call(ctx, x.g, "GetClosestVolumeIDFromTargetPath", r, x.s.GetClosestVolumeIDFromTargetPath)
}

// WriteVolumeCache calls the volume Service's WriteVolumeCache through the policy and audit log.
func (x volumeGuard) WriteVolumeCache(ctx context.Context, r *volume.WriteVolumeCacheRequest) (*volume.WriteVolumeCacheResponse, error) {
	return call(ctx, x.g, "WriteVolumeCache", r, x.s.WriteVolumeCache)
}

// filesystemGuard is the filesystem group of a Node.
type filesystemGuard struct {
	g *guard
	s filesystem.Interface
}

var _ filesystem.Interface = filesystemGuard{}

// PathExists calls the filesystem Service's PathExists through the policy and audit log.
func (x filesystemGuard) PathExists(ctx context.Context, r *filesystem.PathExistsRequest) (*filesystem.PathExistsResponse, error) {
	return call(ctx, x.g, "PathExists", r, x.s.PathExists)
}

// Mkdir calls the filesystem Service's Mkdir through the policy and audit log.
func (x filesystemGuard) Mkdir(ctx context.Context, r *filesystem.MkdirRequest) (*filesystem.MkdirResponse, error) {
	return call(ctx, x.g, "Mkdir", r, x.s.Mkdir)
}

// Rmdir calls the filesystem Service's Rmdir through the policy and audit log.
func (x filesystemGuard) Rmdir(ctx context.Context, r *filesystem.RmdirRequest) (*filesystem.RmdirResponse, error) {
	return call(ctx, x.g, "Rmdir", r, x.s.Rmdir)
}

// RmdirContents calls the filesystem Service's RmdirContents through the policy and audit log.
func (x filesystemGuard) RmdirContents(ctx context.Context, r *filesystem.RmdirContentsRequest) (*filesystem.RmdirContentsResponse, error) {
	return call(ctx, x.g, "RmdirContents", r, x.s.RmdirContents)
}

// CreateSymlink calls the filesystem Service's CreateSymlink through the policy and audit log.
func (x filesystemGuard) CreateSymlink(ctx context.Context, r *filesystem.CreateSymlinkRequest) (*filesystem.CreateSymlinkResponse, error) {
	return call(ctx, x.g, "CreateSymlink", r, x.s.CreateSymlink)
}

// IsSymlink calls the filesystem Service's IsSymlink through the policy and audit log.
func (x filesystemGuard) IsSymlink(ctx context.Context, r *filesystem.IsSymlinkRequest) (*filesystem.IsSymlinkResponse, error) {
	return call(ctx, x.g, "IsSymlink", r, x.s.IsSymlink)
}

// smbGuard is the smb group of a Node.
type smbGuard struct {
	g *guard
	s smb.Interface
}

var _ smb.Interface = smbGuard{}

// NewSmbGlobalMapping calls the smb Service's NewSmbGlobalMapping through the policy and audit log.
func (x smbGuard) NewSmbGlobalMapping(ctx context.Context, r *smb.NewSmbGlobalMappingRequest) (*smb.NewSmbGlobalMappingResponse, error) {
	return call(ctx, x.g, "NewSmbGlobalMapping", r, x.s.NewSmbGlobalMapping)
}

// RemoveSmbGlobalMapping calls the smb Service's RemoveSmbGlobalMapping through the policy and audit log.
func (x smbGuard) RemoveSmbGlobalMapping(ctx context.Context, r *smb.RemoveSmbGlobalMappingRequest) (*smb.RemoveSmbGlobalMappingResponse, error) {
	return call(ctx, x.g, "RemoveSmbGlobalMapping", r, x.s.RemoveSmbGlobalMapping)
}

// iscsiGuard is the iscsi group of a Node.
type iscsiGuard struct {
	g *guard
	s iscsi.Interface
}

var _ iscsi.Interface = iscsiGuard{}

// AddTargetPortal calls the iscsi Service's AddTargetPortal through the policy and audit log.
func (x iscsiGuard) AddTargetPortal(ctx context.Context, r *iscsi.AddTargetPortalRequest) (*iscsi.AddTargetPortalResponse, error) {
	return call(ctx, x.g, "AddTargetPortal", r, x.s.AddTargetPortal)
}

// DiscoverTargetPortal calls the iscsi Service's DiscoverTargetPortal through the policy and audit log.
func (x iscsiGuard) DiscoverTargetPortal(ctx context.Context, r *iscsi.DiscoverTargetPortalRequest) (*iscsi.DiscoverTargetPortalResponse, error) {
	return call(ctx, x.g, "DiscoverTargetPortal", r, x.s.DiscoverTargetPortal)
}

// RemoveTargetPortal calls the iscsi Service's RemoveTargetPortal through the policy and audit log.
func (x iscsiGuard) RemoveTargetPortal(ctx context.Context, r *iscsi.RemoveTargetPortalRequest) (*iscsi.RemoveTargetPortalResponse, error) {
	return call(ctx, x.g, "RemoveTargetPortal", r, x.s.RemoveTargetPortal)
}

// ListTargetPortals calls the iscsi Service's ListTargetPortals through the policy and audit log.
func (x iscsiGuard) ListTargetPortals(ctx context.Context, r *iscsi.ListTargetPortalsRequest) (*iscsi.ListTargetPortalsResponse, error) {
	return call(ctx, x.g, "ListTargetPortals", r, x.s.ListTargetPortals)
}

// ConnectTarget calls the iscsi Service's ConnectTarget through the policy and audit log.
func (x iscsiGuard) ConnectTarget(ctx context.Context, r *iscsi.ConnectTargetRequest) (*iscsi.ConnectTargetResponse, error) {
	return call(ctx, x.g, "ConnectTarget", r, x.s.ConnectTarget)
}

// DisconnectTarget calls the iscsi Service's DisconnectTarget through the policy and audit log.
func (x iscsiGuard) DisconnectTarget(ctx context.Context, r *iscsi.DisconnectTargetRequest) (*iscsi.DisconnectTargetResponse, error) {
	return call(ctx, x.g, "DisconnectTarget", r, x.s.DisconnectTarget)
}

// GetTargetDisks calls the iscsi Service's GetTargetDisks through the policy and audit log.
func (x iscsiGuard) GetTargetDisks(ctx context.Context, r *iscsi.GetTargetDisksRequest) (*iscsi.GetTargetDisksResponse, error) {
	return call(ctx, x.g, "GetTargetDisks", r, x.s.GetTargetDisks)
}

// SetMutualChapSecret calls the iscsi Service's SetMutualChapSecret through the policy and audit log.
func (x iscsiGuard) SetMutualChapSecret(ctx context.Context, r *iscsi.SetMutualChapSecretRequest) (*iscsi.SetMutualChapSecretResponse, error) {
	return call(ctx, x.g, "SetMutualChapSecret", r, x.s.SetMutualChapSecret)
}

// systemGuard is the system group of a Node.
type systemGuard struct {
	g *guard
	s system.Interface
}

var _ system.Interface = systemGuard{}

// GetBIOSSerialNumber calls the system Service's GetBIOSSerialNumber through the policy and audit log.
func (x systemGuard) GetBIOSSerialNumber(ctx context.Context, r *system.GetBIOSSerialNumberRequest) (*system.GetBIOSSerialNumberResponse, error) {
	return call(ctx, x.g, "GetBIOSSerialNumber", r, x.s.GetBIOSSerialNumber)
}

// StartService calls the system Service's StartService through the policy and audit log.
func (x systemGuard) StartService(ctx context.Context, r *system.StartServiceRequest) (*system.StartServiceResponse, error) {
	return call(ctx, x.g, "StartService", r, x.s.StartService)
}

// StopService calls the system Service's StopService through the policy and audit log.
func (x systemGuard) StopService(ctx context.Context, r *system.StopServiceRequest) (*system.StopServiceResponse, error) {
	return call(ctx, x.g, "StopService", r, x.s.StopService)
}

// GetService calls the system Service's GetService through the policy and audit log.
func (x systemGuard) GetService(ctx context.Context, r *system.GetServiceRequest) (*system.GetServiceResponse, error) {
	return call(ctx, x.g, "GetService", r, x.s.GetService)
}
