package hostmetrics

import (
	"context"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// The decorators. Each method starts a timer named after itself, calls
// the wrapped Host and reports the error it returned.

type diskHost struct {
	h disk.Host
	o Observer
}

var _ disk.Host = diskHost{}

// ListDiskLocations times the wrapped Host's ListDiskLocations.
func (w diskHost) ListDiskLocations(ctx context.Context) (map[uint32]disk.DiskLocation, error) {
	t := begin(w.o, GroupDisk, "ListDiskLocations")
	r, err := w.h.ListDiskLocations(ctx)
	t.done(err)
	return r, err
}

// ListDiskIDs times the wrapped Host's ListDiskIDs.
func (w diskHost) ListDiskIDs(ctx context.Context) (map[uint32]disk.DiskIDs, error) {
	t := begin(w.o, GroupDisk, "ListDiskIDs")
	r, err := w.h.ListDiskIDs(ctx)
	t.done(err)
	return r, err
}

// PartitionDisk times the wrapped Host's PartitionDisk.
func (w diskHost) PartitionDisk(ctx context.Context, n uint32) error {
	t := begin(w.o, GroupDisk, "PartitionDisk")
	err := w.h.PartitionDisk(ctx, n)
	t.done(err)
	return err
}

// Rescan times the wrapped Host's Rescan.
func (w diskHost) Rescan(ctx context.Context) error {
	t := begin(w.o, GroupDisk, "Rescan")
	err := w.h.Rescan(ctx)
	t.done(err)
	return err
}

// DiskSize times the wrapped Host's DiskSize.
func (w diskHost) DiskSize(ctx context.Context, n uint32) (int64, error) {
	t := begin(w.o, GroupDisk, "DiskSize")
	r, err := w.h.DiskSize(ctx, n)
	t.done(err)
	return r, err
}

// SetDiskOnline times the wrapped Host's SetDiskOnline.
func (w diskHost) SetDiskOnline(ctx context.Context, n uint32, online bool) error {
	t := begin(w.o, GroupDisk, "SetDiskOnline")
	err := w.h.SetDiskOnline(ctx, n, online)
	t.done(err)
	return err
}

// IsDiskOnline times the wrapped Host's IsDiskOnline.
func (w diskHost) IsDiskOnline(ctx context.Context, n uint32) (bool, error) {
	t := begin(w.o, GroupDisk, "IsDiskOnline")
	r, err := w.h.IsDiskOnline(ctx, n)
	t.done(err)
	return r, err
}

type volumeHost struct {
	h volume.Host
	o Observer
}

var _ volume.Host = volumeHost{}

// ListVolumesOnDisk times the wrapped Host's ListVolumesOnDisk.
func (w volumeHost) ListVolumesOnDisk(ctx context.Context, n, partition uint32) ([]string, error) {
	t := begin(w.o, GroupVolume, "ListVolumesOnDisk")
	r, err := w.h.ListVolumesOnDisk(ctx, n, partition)
	t.done(err)
	return r, err
}

// MountVolume times the wrapped Host's MountVolume.
func (w volumeHost) MountVolume(ctx context.Context, volumeID, target string) error {
	t := begin(w.o, GroupVolume, "MountVolume")
	err := w.h.MountVolume(ctx, volumeID, target)
	t.done(err)
	return err
}

// UnmountVolume times the wrapped Host's UnmountVolume.
func (w volumeHost) UnmountVolume(ctx context.Context, volumeID, target string) error {
	t := begin(w.o, GroupVolume, "UnmountVolume")
	err := w.h.UnmountVolume(ctx, volumeID, target)
	t.done(err)
	return err
}

// IsVolumeFormatted times the wrapped Host's IsVolumeFormatted.
func (w volumeHost) IsVolumeFormatted(ctx context.Context, volumeID string) (bool, error) {
	t := begin(w.o, GroupVolume, "IsVolumeFormatted")
	r, err := w.h.IsVolumeFormatted(ctx, volumeID)
	t.done(err)
	return r, err
}

// FormatVolume times the wrapped Host's FormatVolume.
func (w volumeHost) FormatVolume(ctx context.Context, volumeID string) error {
	t := begin(w.o, GroupVolume, "FormatVolume")
	err := w.h.FormatVolume(ctx, volumeID)
	t.done(err)
	return err
}

// VolumeSizes times the wrapped Host's VolumeSizes.
func (w volumeHost) VolumeSizes(ctx context.Context, volumeID string) (current, maximum int64, err error) {
	t := begin(w.o, GroupVolume, "VolumeSizes")
	current, maximum, err = w.h.VolumeSizes(ctx, volumeID)
	t.done(err)
	return current, maximum, err
}

// ResizeVolume times the wrapped Host's ResizeVolume.
func (w volumeHost) ResizeVolume(ctx context.Context, volumeID string, size int64) error {
	t := begin(w.o, GroupVolume, "ResizeVolume")
	err := w.h.ResizeVolume(ctx, volumeID, size)
	t.done(err)
	return err
}

// VolumeStats times the wrapped Host's VolumeStats.
func (w volumeHost) VolumeStats(ctx context.Context, volumeID string) (total, used int64, err error) {
	t := begin(w.o, GroupVolume, "VolumeStats")
	total, used, err = w.h.VolumeStats(ctx, volumeID)
	t.done(err)
	return total, used, err
}

// DiskNumber times the wrapped Host's DiskNumber.
func (w volumeHost) DiskNumber(ctx context.Context, volumeID string) (uint32, error) {
	t := begin(w.o, GroupVolume, "DiskNumber")
	r, err := w.h.DiskNumber(ctx, volumeID)
	t.done(err)
	return r, err
}

// VolumeAt times the wrapped Host's VolumeAt.
func (w volumeHost) VolumeAt(ctx context.Context, path string) (string, error) {
	t := begin(w.o, GroupVolume, "VolumeAt")
	r, err := w.h.VolumeAt(ctx, path)
	t.done(err)
	return r, err
}

// ClosestVolume times the wrapped Host's ClosestVolume.
func (w volumeHost) ClosestVolume(ctx context.Context, path string) (string, error) {
	t := begin(w.o, GroupVolume, "ClosestVolume")
	r, err := w.h.ClosestVolume(ctx, path)
	t.done(err)
	return r, err
}

// FlushVolume times the wrapped Host's FlushVolume.
func (w volumeHost) FlushVolume(ctx context.Context, volumeID string) error {
	t := begin(w.o, GroupVolume, "FlushVolume")
	err := w.h.FlushVolume(ctx, volumeID)
	t.done(err)
	return err
}

type filesystemHost struct {
	h filesystem.Host
	o Observer
}

var _ filesystem.Host = filesystemHost{}

// PathExists times the wrapped Host's PathExists.
func (w filesystemHost) PathExists(ctx context.Context, path string) (bool, error) {
	t := begin(w.o, GroupFilesystem, "PathExists")
	r, err := w.h.PathExists(ctx, path)
	t.done(err)
	return r, err
}

// Mkdir times the wrapped Host's Mkdir.
func (w filesystemHost) Mkdir(ctx context.Context, path string) error {
	t := begin(w.o, GroupFilesystem, "Mkdir")
	err := w.h.Mkdir(ctx, path)
	t.done(err)
	return err
}

// Rmdir times the wrapped Host's Rmdir.
func (w filesystemHost) Rmdir(ctx context.Context, path string, force bool) error {
	t := begin(w.o, GroupFilesystem, "Rmdir")
	err := w.h.Rmdir(ctx, path, force)
	t.done(err)
	return err
}

// RmdirContents times the wrapped Host's RmdirContents.
func (w filesystemHost) RmdirContents(ctx context.Context, path string) error {
	t := begin(w.o, GroupFilesystem, "RmdirContents")
	err := w.h.RmdirContents(ctx, path)
	t.done(err)
	return err
}

// CreateSymlink times the wrapped Host's CreateSymlink.
func (w filesystemHost) CreateSymlink(ctx context.Context, source, link string) error {
	t := begin(w.o, GroupFilesystem, "CreateSymlink")
	err := w.h.CreateSymlink(ctx, source, link)
	t.done(err)
	return err
}

// IsSymlink times the wrapped Host's IsSymlink.
func (w filesystemHost) IsSymlink(ctx context.Context, path string) (bool, error) {
	t := begin(w.o, GroupFilesystem, "IsSymlink")
	r, err := w.h.IsSymlink(ctx, path)
	t.done(err)
	return r, err
}

type smbHost struct {
	h smb.Host
	o Observer
}

var _ smb.Host = smbHost{}

// NewSmbGlobalMapping times the wrapped Host's NewSmbGlobalMapping.
func (w smbHost) NewSmbGlobalMapping(ctx context.Context, m smb.Mapping) error {
	t := begin(w.o, GroupSMB, "NewSmbGlobalMapping")
	err := w.h.NewSmbGlobalMapping(ctx, m)
	t.done(err)
	return err
}

// RemoveSmbGlobalMapping times the wrapped Host's RemoveSmbGlobalMapping.
func (w smbHost) RemoveSmbGlobalMapping(ctx context.Context, share string) error {
	t := begin(w.o, GroupSMB, "RemoveSmbGlobalMapping")
	err := w.h.RemoveSmbGlobalMapping(ctx, share)
	t.done(err)
	return err
}

type iscsiHost struct {
	h iscsi.Host
	o Observer
}

var _ iscsi.Host = iscsiHost{}

// AddTargetPortal times the wrapped Host's AddTargetPortal.
func (w iscsiHost) AddTargetPortal(ctx context.Context, p iscsi.Portal) error {
	t := begin(w.o, GroupISCSI, "AddTargetPortal")
	err := w.h.AddTargetPortal(ctx, p)
	t.done(err)
	return err
}

// DiscoverTargetPortal times the wrapped Host's DiscoverTargetPortal.
func (w iscsiHost) DiscoverTargetPortal(ctx context.Context, p iscsi.Portal) ([]string, error) {
	t := begin(w.o, GroupISCSI, "DiscoverTargetPortal")
	r, err := w.h.DiscoverTargetPortal(ctx, p)
	t.done(err)
	return r, err
}

// RemoveTargetPortal times the wrapped Host's RemoveTargetPortal.
func (w iscsiHost) RemoveTargetPortal(ctx context.Context, p iscsi.Portal) error {
	t := begin(w.o, GroupISCSI, "RemoveTargetPortal")
	err := w.h.RemoveTargetPortal(ctx, p)
	t.done(err)
	return err
}

// ListTargetPortals times the wrapped Host's ListTargetPortals.
func (w iscsiHost) ListTargetPortals(ctx context.Context) ([]iscsi.Portal, error) {
	t := begin(w.o, GroupISCSI, "ListTargetPortals")
	r, err := w.h.ListTargetPortals(ctx)
	t.done(err)
	return r, err
}

// ConnectTarget times the wrapped Host's ConnectTarget.
func (w iscsiHost) ConnectTarget(ctx context.Context, l iscsi.Login) error {
	t := begin(w.o, GroupISCSI, "ConnectTarget")
	err := w.h.ConnectTarget(ctx, l)
	t.done(err)
	return err
}

// DisconnectTarget times the wrapped Host's DisconnectTarget.
func (w iscsiHost) DisconnectTarget(ctx context.Context, p iscsi.Portal, iqn string) error {
	t := begin(w.o, GroupISCSI, "DisconnectTarget")
	err := w.h.DisconnectTarget(ctx, p, iqn)
	t.done(err)
	return err
}

// TargetDisks times the wrapped Host's TargetDisks.
func (w iscsiHost) TargetDisks(ctx context.Context, p iscsi.Portal, iqn string) ([]uint32, error) {
	t := begin(w.o, GroupISCSI, "TargetDisks")
	r, err := w.h.TargetDisks(ctx, p, iqn)
	t.done(err)
	return r, err
}

// SetMutualChapSecret times the wrapped Host's SetMutualChapSecret.
func (w iscsiHost) SetMutualChapSecret(ctx context.Context, secret string) error {
	t := begin(w.o, GroupISCSI, "SetMutualChapSecret")
	err := w.h.SetMutualChapSecret(ctx, secret)
	t.done(err)
	return err
}

type systemHost struct {
	h system.Host
	o Observer
}

var _ system.Host = systemHost{}

// BIOSSerialNumber times the wrapped Host's BIOSSerialNumber.
func (w systemHost) BIOSSerialNumber(ctx context.Context) (string, error) {
	t := begin(w.o, GroupSystem, "BIOSSerialNumber")
	r, err := w.h.BIOSSerialNumber(ctx)
	t.done(err)
	return r, err
}

// StartService times the wrapped Host's StartService.
func (w systemHost) StartService(ctx context.Context, name string) error {
	t := begin(w.o, GroupSystem, "StartService")
	err := w.h.StartService(ctx, name)
	t.done(err)
	return err
}

// StopService times the wrapped Host's StopService.
func (w systemHost) StopService(ctx context.Context, name string, force bool) error {
	t := begin(w.o, GroupSystem, "StopService")
	err := w.h.StopService(ctx, name, force)
	t.done(err)
	return err
}

// GetService times the wrapped Host's GetService.
func (w systemHost) GetService(ctx context.Context, name string) (system.ServiceInfo, error) {
	t := begin(w.o, GroupSystem, "GetService")
	r, err := w.h.GetService(ctx, name)
	t.done(err)
	return r, err
}
