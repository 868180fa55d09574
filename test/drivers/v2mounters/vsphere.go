package v2mounters

// vsphere-csi-driver's Windows mounter over upstream's v2 library, from
// kubernetes-sigs/vsphere-csi-driver @ bf809025,
// pkg/csi/service/mounter/mounter_windows.go (csiProxyMounter,
// newCSIProxyMounter): the same upstream identifiers, constructors
// (fs.New(fsclient.New()), systemApi.New(systemClient.New()), ...) and call
// shapes, written here for the test, without the driver's logging. Only
// the import prefix differs from the driver's. ClearDiskReadOnly is not
// the driver's: it is what vsphere-csi-driver#1631 asks for, with upstream
// PR #438's calls (kubernetes-csi/csi-proxy 874f535).

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	disk "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/disk"
	diskclient "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/disk/hostapi"
	fs "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/filesystem"
	fsclient "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/filesystem/hostapi"
	systemApi "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/system"
	systemClient "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/system/hostapi"
	volume "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/volume"
	volumeclient "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/volume/hostapi"
)

// VSphereMounter is vsphere's csiProxyMounter.
type VSphereMounter struct {
	Ctx          context.Context
	FsClient     fs.Interface
	DiskClient   disk.Interface
	VolumeClient volume.Interface
	SystemClient systemApi.Interface
}

// NewVSphereMounter builds the groups as newCSIProxyMounter does.
func NewVSphereMounter(ctx context.Context) (*VSphereMounter, error) {
	fsClient, err := fs.New(fsclient.New())
	if err != nil {
		return nil, err
	}
	diskClient, err := disk.New(diskclient.New())
	if err != nil {
		return nil, err
	}
	volumeClient, err := volume.New(volumeclient.New())
	if err != nil {
		return nil, err
	}
	systemClient, err := systemApi.New(systemClient.New())
	if err != nil {
		return nil, err
	}
	return &VSphereMounter{FsClient: fsClient, DiskClient: diskClient, VolumeClient: volumeClient, SystemClient: systemClient, Ctx: ctx}, nil
}

// vsphereNormalize is vsphere's normalizeWindowsPath.
func vsphereNormalize(path string) string {
	p := strings.ReplaceAll(path, "/", `\`)
	if strings.HasPrefix(p, `\`) {
		p = "c:" + p
	}
	return p
}

// ExistsPath tells whether path exists.
func (m *VSphereMounter) ExistsPath(ctx context.Context, path string) (bool, error) {
	resp, err := m.FsClient.PathExists(ctx, &fs.PathExistsRequest{Path: vsphereNormalize(path)})
	if err != nil {
		return false, err
	}
	return resp.Exists, err
}

// Rmdir removes a directory tree or a link.
func (m *VSphereMounter) Rmdir(_ context.Context, path string) error {
	_, err := m.FsClient.Rmdir(context.Background(), &fs.RmdirRequest{Path: vsphereNormalize(path), Force: true})
	return err
}

// MakeDir creates a directory.
func (m *VSphereMounter) MakeDir(ctx context.Context, pathname string) error {
	_, err := m.FsClient.Mkdir(ctx, &fs.MkdirRequest{Path: vsphereNormalize(pathname)})
	return err
}

// GetDiskNumber finds the disk whose page 0x83 ID is diskID.
func (m *VSphereMounter) GetDiskNumber(ctx context.Context, diskID string) (string, error) {
	resp, err := m.DiskClient.ListDiskIDs(ctx, &disk.ListDiskIDsRequest{})
	if err != nil {
		return "", err
	}
	for diskNum, diskInfo := range resp.DiskIDs {
		if diskInfo.Page83 != "" && diskInfo.Page83 == diskID {
			return strconv.FormatUint(uint64(diskNum), 10), nil
		}
	}
	return "", errors.New("no matching disks found")
}

// FormatAndMount partitions, onlines, formats when RAW and mounts.
func (m *VSphereMounter) FormatAndMount(ctx context.Context, source, target string) error {
	diskNum, err := strconv.Atoi(source)
	if err != nil {
		return fmt.Errorf("parse %s failed with error: %w", source, err)
	}
	if _, err := m.DiskClient.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: uint32(diskNum)}); err != nil {
		return err
	}
	if _, err := m.DiskClient.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: uint32(diskNum), IsOnline: true}); err != nil {
		return err
	}
	vols, err := m.VolumeClient.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: uint32(diskNum)})
	if err != nil {
		return err
	}
	volumeID := vols.VolumeIDs[0]
	f, err := m.VolumeClient.IsVolumeFormatted(ctx, &volume.IsVolumeFormattedRequest{VolumeID: volumeID})
	if err != nil {
		return err
	}
	if !f.Formatted {
		if _, err := m.VolumeClient.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: volumeID}); err != nil {
			return err
		}
	}
	_, err = m.VolumeClient.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: volumeID, TargetPath: vsphereNormalize(target)})
	return err
}

// Unmount unmounts the volume at target, removes target and takes the
// disk offline; a target that does not exist is done.
func (m *VSphereMounter) Unmount(target string) error {
	target = vsphereNormalize(target)
	if exists, err := m.ExistsPath(m.Ctx, target); !exists {
		return err
	}
	id, err := m.VolumeClient.GetVolumeIDFromTargetPath(m.Ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: target})
	if err != nil {
		return err
	}
	if _, err := m.VolumeClient.UnmountVolume(m.Ctx, &volume.UnmountVolumeRequest{TargetPath: target, VolumeID: id.VolumeID}); err != nil {
		return err
	}
	if err := m.Rmdir(m.Ctx, target); err != nil {
		return err
	}
	n, err := m.VolumeClient.GetDiskNumberFromVolumeID(m.Ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: id.VolumeID})
	if err != nil {
		return err
	}
	_, err = m.DiskClient.SetDiskState(m.Ctx, &disk.SetDiskStateRequest{DiskNumber: n.DiskNumber, IsOnline: false})
	return err
}

// Mount links target to source (NodePublish).
func (m *VSphereMounter) Mount(source, target, _ string, _ []string) error {
	_, err := m.FsClient.CreateSymlink(m.Ctx, &fs.CreateSymlinkRequest{
		SourcePath: vsphereNormalize(source),
		TargetPath: vsphereNormalize(target),
	})
	return err
}

// GetDeviceNameFromMount returns the volume ID at mountPath.
func (m *VSphereMounter) GetDeviceNameFromMount(ctx context.Context, mountPath string) (string, error) {
	resp, err := m.VolumeClient.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: vsphereNormalize(mountPath)})
	if err != nil {
		return "", err
	}
	return resp.VolumeID, nil
}

// ResizeVolume brings the volume's disk online and grows the volume to
// fill it; devicePath is the volume ID.
func (m *VSphereMounter) ResizeVolume(ctx context.Context, devicePath string, _ int64) error {
	n, err := m.VolumeClient.GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: devicePath})
	if err != nil {
		return err
	}
	if _, err := m.DiskClient.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n.DiskNumber, IsOnline: true}); err != nil {
		return err
	}
	_, err = m.VolumeClient.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: devicePath, SizeBytes: 0})
	return err
}

// GetVolumeSizeInBytes returns the size of volume volumeID.
func (m *VSphereMounter) GetVolumeSizeInBytes(ctx context.Context, volumeID string) (int64, error) {
	resp, err := m.VolumeClient.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: volumeID})
	if err != nil {
		return -1, err
	}
	return resp.TotalBytes, nil
}

// Rescan refreshes the host's view of disks.
func (m *VSphereMounter) Rescan(ctx context.Context) error {
	_, err := m.DiskClient.Rescan(ctx, &disk.RescanRequest{})
	return err
}

// GetDiskTotalBytes returns the size of the disk holding volume volumeID.
func (m *VSphereMounter) GetDiskTotalBytes(ctx context.Context, volumeID string) (int64, error) {
	n, err := m.VolumeClient.GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: volumeID})
	if err != nil {
		return -1, err
	}
	stats, err := m.DiskClient.GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: n.DiskNumber})
	if err != nil {
		return -1, err
	}
	return stats.TotalBytes, err
}

// StatFS returns the available, total and used bytes of the volume at path.
func (m *VSphereMounter) StatFS(ctx context.Context, path string) (available, capacity, used int64, err error) {
	id, err := m.VolumeClient.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: path})
	if err != nil {
		return 0, 0, 0, err
	}
	resp, err := m.VolumeClient.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id.VolumeID})
	if err != nil {
		return 0, 0, 0, err
	}
	return resp.TotalBytes - resp.UsedBytes, resp.TotalBytes, resp.UsedBytes, nil
}

// GetBIOSSerialNumber returns the node's BIOS serial (NodeGetInfo).
func (m *VSphereMounter) GetBIOSSerialNumber(ctx context.Context) (string, error) {
	resp, err := m.SystemClient.GetBIOSSerialNumber(ctx, &systemApi.GetBIOSSerialNumberRequest{})
	if err != nil {
		return "", err
	}
	return resp.SerialNumber, err
}

// ClearDiskReadOnly clears a re-attached disk's read-only attribute when
// it is set (vsphere-csi-driver#1631), with upstream PR #438's calls. It
// tells whether the disk was read-only.
func (m *VSphereMounter) ClearDiskReadOnly(ctx context.Context, diskNumber uint32) (bool, error) {
	ro, err := m.DiskClient.GetDiskReadOnly(ctx, &disk.GetDiskReadOnlyRequest{DiskNumber: diskNumber})
	if err != nil {
		return false, err
	}
	if !ro.IsReadOnly {
		return false, nil
	}
	_, err = m.DiskClient.SetDiskReadOnly(ctx, &disk.SetDiskReadOnlyRequest{DiskNumber: diskNumber, IsReadOnly: false})
	return true, err
}
