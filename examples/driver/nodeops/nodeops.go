// Package nodeops is the node side of a block-volume CSI driver, written
// on the shared mounter (client/mounter) over groups.Node: the same
// functions run through the daemon (client.Dial) or in-process
// (inprocess.New). docs/driver-guide.md shows this file as it is; a test
// keeps the two equal.
package nodeops

import (
	"context"
	"fmt"
	"os"

	"github.com/csi-node-proxy/csi-node-proxy/client/mounter"
)

// NodeStageVolume finds the disk whose SCSI page 0x83 ID is page83 and
// stages it at stagingPath: online, partitioned and formatted when new,
// its volume mounted. Every step is idempotent, so kubelet may retry.
func NodeStageVolume(ctx context.Context, m *mounter.Mounter, page83, stagingPath string) (volumeID string, err error) {
	n, err := m.FindDiskByPage83(ctx, page83)
	if err != nil {
		// errdefs.ErrNotFound: the disk is not attached (yet), CSI's
		// NOT_FOUND, retried once the attach completes. Two disks with
		// that ID: ErrFailedPrecondition, never a guess.
		return "", fmt.Errorf("find the disk: %w", err)
	}
	return m.FormatAndMount(ctx, n, stagingPath)
}

// NodePublishVolume makes the staged volume appear at targetPath, the pod's
// volume directory: on Windows a link to stagingPath (what Windows drivers
// do), on Linux a second mount of the volume (what Linux drivers' bind
// mount does), so that kubelet's fsGroup change reaches the volume's root
// (see mounter.PublishMode). A target that is mounted already is success.
func NodePublishVolume(m *mounter.Mounter, stagingPath, targetPath string) error {
	notMnt, err := m.IsLikelyNotMountPoint(targetPath)
	switch {
	case err == nil && !notMnt:
		return nil
	case err != nil && !os.IsNotExist(err):
		return fmt.Errorf("check %s: %w", targetPath, err)
	}
	return m.Mount(stagingPath, targetPath, "", nil)
}

// NodeGetVolumeStats returns the capacity and use of the volume at path,
// the staging path or the publish path.
func NodeGetVolumeStats(ctx context.Context, m *mounter.Mounter, path string) (mounter.Stats, error) {
	return m.VolumeStats(ctx, path)
}

// NodeExpandVolume grows the volume at path to fill its disk, which the
// controller has grown, and returns its new size.
func NodeExpandVolume(ctx context.Context, m *mounter.Mounter, path string) (int64, error) {
	return m.ResizeToFill(ctx, path)
}

// NodeUnpublishVolume flushes the volume and removes the pod's link or
// publish mount; the data and the staging mount stay. A target already
// gone is success.
func NodeUnpublishVolume(m *mounter.Mounter, targetPath string) error {
	return m.Unmount(targetPath)
}

// NodeUnstageVolume unmounts the volume at stagingPath (the proxy flushes
// it first) and removes the directory. Nothing mounted there is success,
// so a retry after a partial unstage finishes the job.
func NodeUnstageVolume(ctx context.Context, m *mounter.Mounter, stagingPath string) error {
	return m.UnmountDevice(ctx, stagingPath, mounter.UnmountDeviceOptions{})
}
