// Package nodeops is the node side of a block-volume CSI driver written
// once against groups.Node: the same functions run through the daemon
// (client.Dial) or in-process (inprocess.New). docs/driver-guide.md shows
// this file as it is; a test keeps the two equal.
package nodeops

import (
	"context"
	"errors"
	"fmt"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// NodeStageVolume finds the disk whose SCSI page 0x83 ID is page83, brings
// it online, partitions and formats it when it is new, and mounts its
// volume at stagingPath. Every step is idempotent, so kubelet may retry.
func NodeStageVolume(ctx context.Context, node groups.Node, page83, stagingPath string) (volumeID string, err error) {
	ids, err := node.Disk().ListDiskIDs(ctx, &disk.ListDiskIDsRequest{})
	if err != nil {
		return "", fmt.Errorf("list disks: %w", err)
	}
	n, found := uint32(0), false
	for number, id := range ids.DiskIDs {
		if id.Page83 == page83 {
			n, found = number, true
		}
	}
	if !found {
		// NotFound tells kubelet the disk is not attached (yet): CSI's
		// NOT_FOUND, retried once the attach completes.
		return "", errdefs.Errorf(errdefs.ErrNotFound, "no disk with page83 ID %s", page83)
	}
	if _, err := node.Disk().SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: true}); err != nil {
		return "", fmt.Errorf("online disk %d: %w", n, err)
	}
	if _, err := node.Disk().PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: n}); err != nil {
		return "", fmt.Errorf("partition disk %d: %w", n, err)
	}
	vols, err := node.Volume().ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: n})
	if err != nil {
		return "", fmt.Errorf("volumes of disk %d: %w", n, err)
	}
	if len(vols.VolumeIDs) == 0 {
		return "", errdefs.Errorf(errdefs.ErrFailedPrecondition, "disk %d has no volume", n)
	}
	volumeID = vols.VolumeIDs[0]
	formatted, err := node.Volume().IsVolumeFormatted(ctx, &volume.IsVolumeFormattedRequest{VolumeID: volumeID})
	if err != nil {
		return "", fmt.Errorf("volume %s: %w", volumeID, err)
	}
	if !formatted.Formatted {
		if _, err := node.Volume().FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: volumeID}); err != nil {
			return "", fmt.Errorf("format %s: %w", volumeID, err)
		}
	}
	if _, err := node.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: stagingPath}); err != nil {
		return "", fmt.Errorf("staging directory: %w", err)
	}
	if _, err := node.Volume().MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: volumeID, TargetPath: stagingPath}); err != nil {
		return "", fmt.Errorf("mount %s at %s: %w", volumeID, stagingPath, err)
	}
	return volumeID, nil
}

// NodePublishVolume makes the staged volume appear at targetPath, the pod's
// volume directory, as a symlink to stagingPath (what Windows drivers do;
// the link's parent must exist, kubelet creates it). A link that is there
// already is success.
func NodePublishVolume(ctx context.Context, node groups.Node, stagingPath, targetPath string) error {
	link, err := node.Filesystem().IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: targetPath})
	switch {
	case err == nil && link.IsSymlink:
		return nil
	case err != nil && !errors.Is(err, errdefs.ErrNotFound):
		return fmt.Errorf("check %s: %w", targetPath, err)
	}
	if _, err := node.Filesystem().CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{SourcePath: stagingPath, TargetPath: targetPath}); err != nil {
		return fmt.Errorf("link %s to %s: %w", targetPath, stagingPath, err)
	}
	return nil
}

// NodeGetVolumeStats returns the size and used bytes of the volume mounted
// at stagingPath.
func NodeGetVolumeStats(ctx context.Context, node groups.Node, stagingPath string) (total, used int64, err error) {
	id, err := node.Volume().GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: stagingPath})
	if err != nil {
		return 0, 0, fmt.Errorf("volume at %s: %w", stagingPath, err)
	}
	stats, err := node.Volume().GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id.VolumeID})
	if err != nil {
		return 0, 0, fmt.Errorf("stats of %s: %w", id.VolumeID, err)
	}
	return stats.TotalBytes, stats.UsedBytes, nil
}

// NodeUnpublishVolume removes the pod's link; the data behind it stays.
// A link already gone is success.
func NodeUnpublishVolume(ctx context.Context, node groups.Node, targetPath string) error {
	if _, err := node.Filesystem().Rmdir(ctx, &filesystem.RmdirRequest{Path: targetPath, Force: true}); err != nil {
		return fmt.Errorf("remove %s: %w", targetPath, err)
	}
	return nil
}

// NodeUnstageVolume flushes and unmounts the volume at stagingPath and
// removes the directory. Nothing mounted there is success, so a retry
// after a partial unstage finishes the job.
func NodeUnstageVolume(ctx context.Context, node groups.Node, stagingPath string) error {
	id, err := node.Volume().GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: stagingPath})
	switch {
	case errors.Is(err, errdefs.ErrNotFound):
		// Not mounted (any more): only the directory may be left.
	case err != nil:
		return fmt.Errorf("volume at %s: %w", stagingPath, err)
	default:
		if _, err := node.Volume().WriteVolumeCache(ctx, &volume.WriteVolumeCacheRequest{VolumeID: id.VolumeID}); err != nil {
			return fmt.Errorf("flush %s: %w", id.VolumeID, err)
		}
		if _, err := node.Volume().UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: id.VolumeID, TargetPath: stagingPath}); err != nil {
			return fmt.Errorf("unmount %s: %w", stagingPath, err)
		}
	}
	if _, err := node.Filesystem().Rmdir(ctx, &filesystem.RmdirRequest{Path: stagingPath, Force: true}); err != nil {
		return fmt.Errorf("remove %s: %w", stagingPath, err)
	}
	return nil
}
