package v2mounters

// aws-ebs-csi-driver's Windows mounter over upstream's v2 library, from
// kubernetes-sigs/aws-ebs-csi-driver @ 429e202e, pkg/mounter/mount_windows_proxyV2.go
// (CSIProxyMounterV2, NewSafeMounterV2): the same upstream identifiers,
// constructors and call shapes (diskv2.New(diskapiv2.New()), the request
// literals, the response fields read), written here for the test. The
// mount-utils plumbing around it (SafeFormatAndMount, the methods that
// only return "not implemented") is left out: it calls nothing of
// csi-proxy. Only the import prefix differs from the driver's:
// github.com/kubernetes-csi/csi-proxy/v2 -> .../upstreamv2.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	diskv2 "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/disk"
	diskapiv2 "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/disk/hostapi"
	fsv2 "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/filesystem"
	fsapiv2 "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/filesystem/hostapi"
	volumev2 "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/volume"
	volumeapiv2 "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/volume/hostapi"
)

// CSIProxyMounterV2 is aws-ebs's mounter: its three v2 group clients.
type CSIProxyMounterV2 struct {
	FsClient     fsv2.Interface
	DiskClient   diskv2.Interface
	VolumeClient volumev2.Interface
}

// NewCSIProxyMounterV2 builds the groups as NewSafeMounterV2 does.
func NewCSIProxyMounterV2() (*CSIProxyMounterV2, error) {
	fs, err := fsv2.New(fsapiv2.New())
	if err != nil {
		return nil, err
	}
	disk, err := diskv2.New(diskapiv2.New())
	if err != nil {
		return nil, err
	}
	volume, err := volumev2.New(volumeapiv2.New())
	if err != nil {
		return nil, err
	}
	return &CSIProxyMounterV2{FsClient: fs, DiskClient: disk, VolumeClient: volume}, nil
}

// normalizeWindowsPath is aws-ebs's util.NormalizeWindowsPath: slashes to
// backslashes, a drive-less rooted path on c:.
func normalizeWindowsPath(path string) string {
	p := strings.ReplaceAll(path, "/", `\`)
	if strings.HasPrefix(p, `\`) {
		p = "c:" + p
	}
	return p
}

// Mount links target to source (NodePublish).
func (m *CSIProxyMounterV2) Mount(source, target, _ string, _ []string) error {
	_, err := m.FsClient.CreateSymlink(context.Background(), &fsv2.CreateSymlinkRequest{
		SourcePath: normalizeWindowsPath(source),
		TargetPath: normalizeWindowsPath(target),
	})
	return err
}

// Unmount unmounts the staged volume, removes the staging path and takes
// the disk offline (NodeUnstage).
func (m *CSIProxyMounterV2) Unmount(target string) error {
	idResp, err := m.VolumeClient.GetVolumeIDFromTargetPath(context.Background(),
		&volumev2.GetVolumeIDFromTargetPathRequest{TargetPath: normalizeWindowsPath(target)})
	if err != nil {
		return err
	}
	if _, err := m.VolumeClient.UnmountVolume(context.Background(), &volumev2.UnmountVolumeRequest{
		VolumeID:   idResp.VolumeID,
		TargetPath: normalizeWindowsPath(target),
	}); err != nil {
		return err
	}
	if err := m.Rmdir(target); err != nil {
		return err
	}
	numResp, err := m.VolumeClient.GetDiskNumberFromVolumeID(context.Background(),
		&volumev2.GetDiskNumberFromVolumeIDRequest{VolumeID: idResp.VolumeID})
	if err != nil {
		return err
	}
	_, err = m.DiskClient.SetDiskState(context.Background(), &diskv2.SetDiskStateRequest{
		DiskNumber: numResp.DiskNumber,
		IsOnline:   false,
	})
	return err
}

// Rmdir removes a directory tree or a link.
func (m *CSIProxyMounterV2) Rmdir(path string) error {
	_, err := m.FsClient.Rmdir(context.Background(), &fsv2.RmdirRequest{Path: normalizeWindowsPath(path), Force: true})
	return err
}

// WriteVolumeCache flushes the volume mounted at target; failures are
// only logged by the driver, so they are returned here for the test.
func (m *CSIProxyMounterV2) WriteVolumeCache(target string) error {
	resp, err := m.VolumeClient.GetVolumeIDFromTargetPath(context.Background(),
		&volumev2.GetVolumeIDFromTargetPathRequest{TargetPath: normalizeWindowsPath(target)})
	if err != nil || resp == nil {
		return fmt.Errorf("GetVolumeIDFromTargetPath: %w", err)
	}
	_, err = m.VolumeClient.WriteVolumeCache(context.Background(), &volumev2.WriteVolumeCacheRequest{VolumeID: resp.VolumeID})
	return err
}

// IsLikelyNotMountPoint tells whether path is not a mount point: a link is one.
func (m *CSIProxyMounterV2) IsLikelyNotMountPoint(path string) (bool, error) {
	exists, err := m.ExistsPath(path)
	if err != nil {
		return true, err
	}
	if !exists {
		return true, errors.New("path does not exist") // the driver returns os.ErrNotExist
	}
	resp, err := m.FsClient.IsSymlink(context.Background(), &fsv2.IsSymlinkRequest{Path: normalizeWindowsPath(path)})
	if err != nil {
		return true, err
	}
	return !resp.IsSymlink, nil
}

// GetDeviceNameFromMount returns the disk number of the volume at mountPath.
func (m *CSIProxyMounterV2) GetDeviceNameFromMount(mountPath string) (string, error) {
	resp, err := m.VolumeClient.GetVolumeIDFromTargetPath(context.Background(),
		&volumev2.GetVolumeIDFromTargetPathRequest{TargetPath: normalizeWindowsPath(mountPath)})
	if err != nil {
		return "", err
	}
	numResp, err := m.VolumeClient.GetDiskNumberFromVolumeID(context.Background(),
		&volumev2.GetDiskNumberFromVolumeIDRequest{VolumeID: resp.VolumeID})
	if err != nil {
		return "", err
	}
	return fmt.Sprint(numResp.DiskNumber), nil
}

// MakeDir creates a directory.
func (m *CSIProxyMounterV2) MakeDir(path string) error {
	_, err := m.FsClient.Mkdir(context.Background(), &fsv2.MkdirRequest{Path: normalizeWindowsPath(path)})
	return err
}

// ExistsPath tells whether path exists.
func (m *CSIProxyMounterV2) ExistsPath(path string) (bool, error) {
	resp, err := m.FsClient.PathExists(context.Background(), &fsv2.PathExistsRequest{Path: normalizeWindowsPath(path)})
	if err != nil {
		return false, err
	}
	return resp.Exists, err
}

// Rescan refreshes the host's view of disks.
func (m *CSIProxyMounterV2) Rescan() error {
	_, err := m.DiskClient.Rescan(context.Background(), &diskv2.RescanRequest{})
	return err
}

// FindDiskByLun returns the number of the disk at LUN lun.
func (m *CSIProxyMounterV2) FindDiskByLun(lun string) (string, error) {
	resp, err := m.DiskClient.ListDiskLocations(context.Background(), &diskv2.ListDiskLocationsRequest{})
	if err != nil {
		return "", err
	}
	for diskID, location := range resp.DiskLocations {
		if strings.EqualFold(location.LUNID, lun) {
			return strconv.Itoa(int(diskID)), nil
		}
	}
	return "", fmt.Errorf("could not find disk id for lun: %s", lun)
}

// FormatAndMount partitions, onlines, formats when RAW and mounts disk
// source at target (NodeStage).
func (m *CSIProxyMounterV2) FormatAndMount(source, target string) error {
	diskNumber, err := strconv.Atoi(source)
	if err != nil {
		return err
	}
	if _, err := m.DiskClient.PartitionDisk(context.Background(), &diskv2.PartitionDiskRequest{DiskNumber: uint32(diskNumber)}); err != nil {
		return err
	}
	if _, err := m.DiskClient.SetDiskState(context.Background(), &diskv2.SetDiskStateRequest{DiskNumber: uint32(diskNumber), IsOnline: true}); err != nil {
		return err
	}
	volResp, err := m.VolumeClient.ListVolumesOnDisk(context.Background(), &volumev2.ListVolumesOnDiskRequest{DiskNumber: uint32(diskNumber)})
	if err != nil {
		return err
	}
	volumeID := volResp.VolumeIDs[0]
	fmtResp, err := m.VolumeClient.IsVolumeFormatted(context.Background(), &volumev2.IsVolumeFormattedRequest{VolumeID: volumeID})
	if err != nil {
		return err
	}
	if !fmtResp.Formatted {
		if _, err := m.VolumeClient.FormatVolume(context.Background(), &volumev2.FormatVolumeRequest{VolumeID: volumeID}); err != nil {
			return err
		}
	}
	_, err = m.VolumeClient.MountVolume(context.Background(), &volumev2.MountVolumeRequest{
		VolumeID:   volumeID,
		TargetPath: normalizeWindowsPath(target),
	})
	return err
}

// ResizeVolume grows the volume mounted at deviceMountPath to fill its disk.
func (m *CSIProxyMounterV2) ResizeVolume(deviceMountPath string) (bool, error) {
	idResp, err := m.VolumeClient.GetVolumeIDFromTargetPath(context.Background(),
		&volumev2.GetVolumeIDFromTargetPathRequest{TargetPath: normalizeWindowsPath(deviceMountPath)})
	if err != nil {
		return false, err
	}
	if _, err := m.VolumeClient.ResizeVolume(context.Background(), &volumev2.ResizeVolumeRequest{VolumeID: idResp.VolumeID}); err != nil {
		return false, err
	}
	return true, nil
}

// GetVolumeSizeInBytes returns the size of the volume mounted at deviceMountPath.
func (m *CSIProxyMounterV2) GetVolumeSizeInBytes(deviceMountPath string) (int64, error) {
	idResp, err := m.VolumeClient.GetVolumeIDFromTargetPath(context.Background(),
		&volumev2.GetVolumeIDFromTargetPathRequest{TargetPath: normalizeWindowsPath(deviceMountPath)})
	if err != nil {
		return -1, err
	}
	resp, err := m.VolumeClient.GetVolumeStats(context.Background(), &volumev2.GetVolumeStatsRequest{VolumeID: idResp.VolumeID})
	if err != nil {
		return -1, err
	}
	return resp.TotalBytes, nil
}

// GetDeviceSize returns the size of disk devicePath.
func (m *CSIProxyMounterV2) GetDeviceSize(devicePath string) (int64, error) {
	diskNumber, err := strconv.Atoi(devicePath)
	if err != nil {
		return -1, err
	}
	resp, err := m.DiskClient.GetDiskStats(context.Background(), &diskv2.GetDiskStatsRequest{DiskNumber: uint32(diskNumber)})
	if err != nil {
		return -1, err
	}
	return resp.TotalBytes, nil
}

// FindDevicePath finds the disk whose serial number holds the EBS volume
// ID without dashes.
func (m *CSIProxyMounterV2) FindDevicePath(devicePath, volumeID string) (string, error) {
	resp, err := m.DiskClient.ListDiskIDs(context.TODO(), &diskv2.ListDiskIDsRequest{})
	if err != nil {
		return "", fmt.Errorf("error listing disk ids: %w", err)
	}
	clean := strings.ReplaceAll(volumeID, "-", "")
	for diskNumber, diskID := range resp.DiskIDs {
		if strings.Contains(diskID.SerialNumber, clean) {
			return strconv.Itoa(int(diskNumber)), nil
		}
	}
	return "", fmt.Errorf("disk number for device path %q volume id %q not found", devicePath, volumeID)
}
