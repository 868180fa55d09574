package flows

import (
	"context"
	"errors"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// The csi-proxy steps below are written once because several drivers'
// mounters make them alike: the same calls in the same order, the same
// checks, the same errors handed back. Each names the drivers and the
// functions it stands for; a driver whose copy differs (another path
// spelling, a check of its own, its own error text) keeps its steps in its
// own file, which says so. A caller passes the path as its driver spells
// it there (normalised or the kubelet's raw path).

// formatAndMountFirstVolume is the tail the drivers' FormatAndMount share:
// take the first volume ListVolumesOnDisk lists (the drivers index [0]
// unchecked: an empty list would panic the driver), format it if
// IsVolumeFormatted says no, and mount it at target.
func formatAndMountFirstVolume(ctx context.Context, p Proxy, n uint32, target string) error {
	vols, err := p.Volume.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: n})
	if err != nil {
		return fail("ListVolumesOnDisk", err)
	}
	if len(vols.VolumeIDs) == 0 {
		return fail("ListVolumesOnDisk", errors.New("no volume listed: the driver indexes VolumeIds[0] and panics"))
	}
	id := vols.VolumeIDs[0]
	f, err := p.Volume.IsVolumeFormatted(ctx, &volume.IsVolumeFormattedRequest{VolumeID: id})
	if err != nil {
		return fail("IsVolumeFormatted", err)
	}
	if !f.Formatted {
		if _, err := p.Volume.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: id}); err != nil {
			return fail("FormatVolume", err)
		}
	}
	if _, err := p.Volume.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: target}); err != nil {
		return fail("MountVolume", err)
	}
	return nil
}

// unmountAndOffline is the unstage sequence aws-ebs (CSIProxyMounter.Unmount),
// gcp-pd (UnmountDevice) and vsphere (csiProxyMounter.Unmount) share:
// volume at target, UnmountVolume, Rmdir the staging dir, disk of the
// volume, SetDiskState(offline).
func unmountAndOffline(ctx context.Context, p Proxy, target string) error {
	id, err := p.Volume.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: target})
	if err != nil {
		return fail("GetVolumeIDFromTargetPath", err)
	}
	if _, err := p.Volume.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: id.VolumeID, TargetPath: target}); err != nil {
		return fail("UnmountVolume", err)
	}
	if _, err := p.Filesystem.Rmdir(ctx, &filesystem.RmdirRequest{Path: target, Force: true}); err != nil {
		return fail("Rmdir", err)
	}
	n, err := p.Volume.GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: id.VolumeID})
	if err != nil {
		return fail("GetDiskNumberFromVolumeID", err)
	}
	if _, err := p.Disk.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n.DiskNumber, IsOnline: false}); err != nil {
		return fail("SetDiskState(offline)", err)
	}
	return nil
}

// isLikelyMountPoint is csiProxyMounter.IsLikelyNotMountPoint (negated) as
// aws-ebs (pkg/mounter/mount_windows_proxyV1.go), azuredisk and
// csi-driver-smb (pkg/mounter/safe_mounter_windows.go) each wrote it:
// PathExists, then IsSymlink, both on the normalised path. A missing path
// is their os.ErrNotExist, which every caller (aws-ebs's isMounted, the
// other two's ensureMountPoint) reads as "not mounted". What the callers
// do beyond it differs and stays in their files.
func isLikelyMountPoint(ctx context.Context, p Proxy, path string) (bool, error) {
	ex, err := p.Filesystem.PathExists(ctx, &filesystem.PathExistsRequest{Path: path})
	if err != nil {
		return false, fail("PathExists", err)
	}
	if !ex.Exists {
		return false, nil
	}
	ln, err := p.Filesystem.IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: path})
	if err != nil {
		return false, fail("IsSymlink", err)
	}
	return ln.IsSymlink, nil
}

// rmdirIfExists is preparePublishPath as azuredisk
// (azure_common_windows.go) and gcp-pd (utils_windows.go) write it,
// csi-driver-smb's removeDir behind its prepareStagePath and
// preparePublishPath (smb_common_windows.go), and the first half of
// vsphere's PreparePublishPath (windows_os_utils.go): PathExists, then a
// forced Rmdir when the path is there, each error handed back as it came.
// aws-ebs's PreparePublishTarget makes the same calls but wraps the errors
// in texts of its own, so it keeps its copy.
func rmdirIfExists(ctx context.Context, p Proxy, path string) error {
	ex, err := p.Filesystem.PathExists(ctx, &filesystem.PathExistsRequest{Path: path})
	if err != nil {
		return fail("PathExists", err)
	}
	if ex.Exists {
		if _, err := p.Filesystem.Rmdir(ctx, &filesystem.RmdirRequest{Path: path, Force: true}); err != nil {
			return fail("Rmdir", err)
		}
	}
	return nil
}
