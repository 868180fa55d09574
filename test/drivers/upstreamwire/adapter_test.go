package upstreamwire

import (
	"context"

	diskv1 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1"
	fsv1 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v1"
	smbv1 "github.com/kubernetes-csi/csi-proxy/client/api/smb/v1"
	systemv1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/system/v1alpha1"
	volumev1 "github.com/kubernetes-csi/csi-proxy/client/api/volume/v1"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/test/drivers/flows"
)

// The adapters implement the flows' narrow group interfaces over
// upstream's v1 stubs: each call is one RPC with upstream's request type,
// and an error reaches the flow untouched, as the driver sees it
// ("rpc error: code = ... desc = ...").

type upDisk struct{ c diskv1.DiskClient }

func (d upDisk) ListDiskLocations(ctx context.Context, _ *disk.ListDiskLocationsRequest) (*disk.ListDiskLocationsResponse, error) {
	r, err := d.c.ListDiskLocations(ctx, &diskv1.ListDiskLocationsRequest{})
	if err != nil {
		return nil, err
	}
	out := &disk.ListDiskLocationsResponse{DiskLocations: map[uint32]*disk.DiskLocation{}}
	for n, l := range r.GetDiskLocations() {
		out.DiskLocations[n] = &disk.DiskLocation{Adapter: l.GetAdapter(), Bus: l.GetBus(), Target: l.GetTarget(), LUNID: l.GetLUNID()}
	}
	return out, nil
}

func (d upDisk) PartitionDisk(ctx context.Context, r *disk.PartitionDiskRequest) (*disk.PartitionDiskResponse, error) {
	if _, err := d.c.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: r.DiskNumber}); err != nil {
		return nil, err
	}
	return &disk.PartitionDiskResponse{}, nil
}

func (d upDisk) Rescan(ctx context.Context, _ *disk.RescanRequest) (*disk.RescanResponse, error) {
	if _, err := d.c.Rescan(ctx, &diskv1.RescanRequest{}); err != nil {
		return nil, err
	}
	return &disk.RescanResponse{}, nil
}

func (d upDisk) ListDiskIDs(ctx context.Context, _ *disk.ListDiskIDsRequest) (*disk.ListDiskIDsResponse, error) {
	r, err := d.c.ListDiskIDs(ctx, &diskv1.ListDiskIDsRequest{})
	if err != nil {
		return nil, err
	}
	out := &disk.ListDiskIDsResponse{DiskIDs: map[uint32]*disk.DiskIDs{}}
	for n, id := range r.GetDiskIDs() {
		out.DiskIDs[n] = &disk.DiskIDs{Page83: id.GetPage83(), SerialNumber: id.GetSerialNumber()}
	}
	return out, nil
}

func (d upDisk) GetDiskStats(ctx context.Context, r *disk.GetDiskStatsRequest) (*disk.GetDiskStatsResponse, error) {
	s, err := d.c.GetDiskStats(ctx, &diskv1.GetDiskStatsRequest{DiskNumber: r.DiskNumber})
	if err != nil {
		return nil, err
	}
	return &disk.GetDiskStatsResponse{TotalBytes: s.GetTotalBytes()}, nil
}

func (d upDisk) SetDiskState(ctx context.Context, r *disk.SetDiskStateRequest) (*disk.SetDiskStateResponse, error) {
	if _, err := d.c.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: r.DiskNumber, IsOnline: r.IsOnline}); err != nil {
		return nil, err
	}
	return &disk.SetDiskStateResponse{}, nil
}

func (d upDisk) GetDiskState(ctx context.Context, r *disk.GetDiskStateRequest) (*disk.GetDiskStateResponse, error) {
	s, err := d.c.GetDiskState(ctx, &diskv1.GetDiskStateRequest{DiskNumber: r.DiskNumber})
	if err != nil {
		return nil, err
	}
	return &disk.GetDiskStateResponse{IsOnline: s.GetIsOnline()}, nil
}

type upVolume struct{ c volumev1.VolumeClient }

func (v upVolume) ListVolumesOnDisk(ctx context.Context, r *volume.ListVolumesOnDiskRequest) (*volume.ListVolumesOnDiskResponse, error) {
	s, err := v.c.ListVolumesOnDisk(ctx, &volumev1.ListVolumesOnDiskRequest{DiskNumber: r.DiskNumber, PartitionNumber: r.PartitionNumber})
	if err != nil {
		return nil, err
	}
	return &volume.ListVolumesOnDiskResponse{VolumeIDs: s.GetVolumeIds()}, nil
}

func (v upVolume) MountVolume(ctx context.Context, r *volume.MountVolumeRequest) (*volume.MountVolumeResponse, error) {
	if _, err := v.c.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: r.VolumeID, TargetPath: r.TargetPath}); err != nil {
		return nil, err
	}
	return &volume.MountVolumeResponse{}, nil
}

func (v upVolume) UnmountVolume(ctx context.Context, r *volume.UnmountVolumeRequest) (*volume.UnmountVolumeResponse, error) {
	if _, err := v.c.UnmountVolume(ctx, &volumev1.UnmountVolumeRequest{VolumeId: r.VolumeID, TargetPath: r.TargetPath}); err != nil {
		return nil, err
	}
	return &volume.UnmountVolumeResponse{}, nil
}

func (v upVolume) IsVolumeFormatted(ctx context.Context, r *volume.IsVolumeFormattedRequest) (*volume.IsVolumeFormattedResponse, error) {
	s, err := v.c.IsVolumeFormatted(ctx, &volumev1.IsVolumeFormattedRequest{VolumeId: r.VolumeID})
	if err != nil {
		return nil, err
	}
	return &volume.IsVolumeFormattedResponse{Formatted: s.GetFormatted()}, nil
}

func (v upVolume) FormatVolume(ctx context.Context, r *volume.FormatVolumeRequest) (*volume.FormatVolumeResponse, error) {
	if _, err := v.c.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: r.VolumeID}); err != nil {
		return nil, err
	}
	return &volume.FormatVolumeResponse{}, nil
}

func (v upVolume) ResizeVolume(ctx context.Context, r *volume.ResizeVolumeRequest) (*volume.ResizeVolumeResponse, error) {
	if _, err := v.c.ResizeVolume(ctx, &volumev1.ResizeVolumeRequest{VolumeId: r.VolumeID, SizeBytes: r.SizeBytes}); err != nil {
		return nil, err
	}
	return &volume.ResizeVolumeResponse{}, nil
}

func (v upVolume) GetVolumeStats(ctx context.Context, r *volume.GetVolumeStatsRequest) (*volume.GetVolumeStatsResponse, error) {
	s, err := v.c.GetVolumeStats(ctx, &volumev1.GetVolumeStatsRequest{VolumeId: r.VolumeID})
	if err != nil {
		return nil, err
	}
	return &volume.GetVolumeStatsResponse{TotalBytes: s.GetTotalBytes(), UsedBytes: s.GetUsedBytes()}, nil
}

func (v upVolume) GetDiskNumberFromVolumeID(ctx context.Context, r *volume.GetDiskNumberFromVolumeIDRequest) (*volume.GetDiskNumberFromVolumeIDResponse, error) {
	s, err := v.c.GetDiskNumberFromVolumeID(ctx, &volumev1.GetDiskNumberFromVolumeIDRequest{VolumeId: r.VolumeID})
	if err != nil {
		return nil, err
	}
	return &volume.GetDiskNumberFromVolumeIDResponse{DiskNumber: s.GetDiskNumber()}, nil
}

func (v upVolume) GetVolumeIDFromTargetPath(ctx context.Context, r *volume.GetVolumeIDFromTargetPathRequest) (*volume.GetVolumeIDFromTargetPathResponse, error) {
	s, err := v.c.GetVolumeIDFromTargetPath(ctx, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: r.TargetPath})
	if err != nil {
		return nil, err
	}
	return &volume.GetVolumeIDFromTargetPathResponse{VolumeID: s.GetVolumeId()}, nil
}

func (v upVolume) WriteVolumeCache(ctx context.Context, r *volume.WriteVolumeCacheRequest) (*volume.WriteVolumeCacheResponse, error) {
	if _, err := v.c.WriteVolumeCache(ctx, &volumev1.WriteVolumeCacheRequest{VolumeId: r.VolumeID}); err != nil {
		return nil, err
	}
	return &volume.WriteVolumeCacheResponse{}, nil
}

type upFS struct{ c fsv1.FilesystemClient }

func (f upFS) PathExists(ctx context.Context, r *filesystem.PathExistsRequest) (*filesystem.PathExistsResponse, error) {
	s, err := f.c.PathExists(ctx, &fsv1.PathExistsRequest{Path: r.Path})
	if err != nil {
		return nil, err
	}
	return &filesystem.PathExistsResponse{Exists: s.GetExists()}, nil
}

func (f upFS) Mkdir(ctx context.Context, r *filesystem.MkdirRequest) (*filesystem.MkdirResponse, error) {
	if _, err := f.c.Mkdir(ctx, &fsv1.MkdirRequest{Path: r.Path}); err != nil {
		return nil, err
	}
	return &filesystem.MkdirResponse{}, nil
}

func (f upFS) Rmdir(ctx context.Context, r *filesystem.RmdirRequest) (*filesystem.RmdirResponse, error) {
	if _, err := f.c.Rmdir(ctx, &fsv1.RmdirRequest{Path: r.Path, Force: r.Force}); err != nil {
		return nil, err
	}
	return &filesystem.RmdirResponse{}, nil
}

func (f upFS) CreateSymlink(ctx context.Context, r *filesystem.CreateSymlinkRequest) (*filesystem.CreateSymlinkResponse, error) {
	if _, err := f.c.CreateSymlink(ctx, &fsv1.CreateSymlinkRequest{SourcePath: r.SourcePath, TargetPath: r.TargetPath}); err != nil {
		return nil, err
	}
	return &filesystem.CreateSymlinkResponse{}, nil
}

func (f upFS) IsSymlink(ctx context.Context, r *filesystem.IsSymlinkRequest) (*filesystem.IsSymlinkResponse, error) {
	s, err := f.c.IsSymlink(ctx, &fsv1.IsSymlinkRequest{Path: r.Path})
	if err != nil {
		return nil, err
	}
	return &filesystem.IsSymlinkResponse{IsSymlink: s.GetIsSymlink()}, nil
}

type upSMB struct{ c smbv1.SmbClient }

func (s upSMB) NewSmbGlobalMapping(ctx context.Context, r *smb.NewSmbGlobalMappingRequest) (*smb.NewSmbGlobalMappingResponse, error) {
	if _, err := s.c.NewSmbGlobalMapping(ctx, &smbv1.NewSmbGlobalMappingRequest{
		RemotePath: r.RemotePath, LocalPath: r.LocalPath, Username: r.Username, Password: r.Password,
	}); err != nil {
		return nil, err
	}
	return &smb.NewSmbGlobalMappingResponse{}, nil
}

func (s upSMB) RemoveSmbGlobalMapping(ctx context.Context, r *smb.RemoveSmbGlobalMappingRequest) (*smb.RemoveSmbGlobalMappingResponse, error) {
	if _, err := s.c.RemoveSmbGlobalMapping(ctx, &smbv1.RemoveSmbGlobalMappingRequest{RemotePath: r.RemotePath}); err != nil {
		return nil, err
	}
	return &smb.RemoveSmbGlobalMappingResponse{}, nil
}

type upSystem struct{ c systemv1alpha1.SystemClient }

func (s upSystem) GetBIOSSerialNumber(ctx context.Context, _ *system.GetBIOSSerialNumberRequest) (*system.GetBIOSSerialNumberResponse, error) {
	r, err := s.c.GetBIOSSerialNumber(ctx, &systemv1alpha1.GetBIOSSerialNumberRequest{})
	if err != nil {
		return nil, err
	}
	return &system.GetBIOSSerialNumberResponse{SerialNumber: r.GetSerialNumber()}, nil
}

// compile-time checks that the adapters satisfy the flows' interfaces.
var (
	_ flows.Disk       = upDisk{}
	_ flows.Volume     = upVolume{}
	_ flows.Filesystem = upFS{}
	_ flows.SMB        = upSMB{}
	_ flows.System     = upSystem{}
)
