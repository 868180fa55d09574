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

// statFS is the volume statistics of the volume mounted at path as gcp-pd
// (pkg/mount-manager/statter_windows.go StatFSV1) and vsphere
// (mounter_windows.go StatFS) read them: GetVolumeIDFromTargetPath on the
// path as given, GetVolumeStats, available = total - used, errors handed
// back as they came. azuredisk's GetVolumeStats makes the same calls but
// wraps the errors in texts of its own, so it keeps its copy.
func statFS(ctx context.Context, p Proxy, path string) (Stats, error) {
	id, err := p.Volume.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: path})
	if err != nil {
		return Stats{}, fail("GetVolumeIDFromTargetPath", err)
	}
	vs, err := p.Volume.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id.VolumeID})
	if err != nil {
		return Stats{}, fail("GetVolumeStats", err)
	}
	return Stats{Total: vs.TotalBytes, Used: vs.UsedBytes, Available: vs.TotalBytes - vs.UsedBytes}, nil
}

// resizeVolumeAt grows the volume mounted at path to its maximum as aws-ebs
// (CSIProxyMounter.ResizeVolume, which normalises the path) and gcp-pd
// (pkg/resizefs resizeV1, the path as given) do it:
// GetVolumeIDFromTargetPath, then ResizeVolume with no size, errors handed
// back as they came. The callers' steps around it (aws-ebs's Rescan first)
// stay in their files.
func resizeVolumeAt(ctx context.Context, p Proxy, path string) error {
	id, err := p.Volume.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: path})
	if err != nil {
		return fail("GetVolumeIDFromTargetPath", err)
	}
	if _, err := p.Volume.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: id.VolumeID}); err != nil {
		return fail("ResizeVolume", err)
	}
	return nil
}

// partitionAndOnline is the head of FormatAndMount in aws-ebs (since its PR
// #1189), gcp-pd and vsphere: PartitionDisk, then SetDiskState(online),
// errors handed back as they came (docs: driver-flows.md, "PartitionDisk
// before online"). azuredisk's FormatAndMount partitions and never sets
// the disk online, so it does not use it.
func partitionAndOnline(ctx context.Context, p Proxy, n uint32) error {
	if _, err := p.Disk.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: n}); err != nil {
		return fail("PartitionDisk", err)
	}
	if _, err := p.Disk.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: true}); err != nil {
		return fail("SetDiskState(online)", err)
	}
	return nil
}
