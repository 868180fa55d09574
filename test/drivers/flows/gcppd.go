package flows

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// gcpPD is gcp-compute-persistent-disk-csi-driver's Windows node code, from
// kubernetes-sigs/gcp-compute-persistent-disk-csi-driver @ b560165c3508dcbca6c53a7b005eba185c301167:
// pkg/gce-pd-csi-driver/node.go (NodeStageVolume, NodeUnstageVolume,
// NodePublishVolume, NodeUnpublishVolume, NodeGetVolumeStats,
// NodeExpandVolume, isVolumePathMounted), pkg/gce-pd-csi-driver/utils_windows.go
// (getDevicePath, formatAndMount, preparePublishPath, cleanupPublishPath,
// cleanupStagePath, getBlockSizeBytes), pkg/mount-manager/safe-mounter-v1_windows.go
// (CSIProxyMounterV1), pkg/mount-manager/statter_windows.go (StatFSV1) and
// pkg/resizefs/resizefs_windows.go (resizeV1). It passes the kubelet's path
// raw to IsSymlink, MountVolume and GetVolumeIDFromTargetPath, and
// normalises it (mount-utils NormalizeWindowsPath) elsewhere.
//
// The disk is found by getDiskNumberLegacy: the GCE metadata server that
// the NVMe path asks first does not exist off GCE (the driver then falls
// back to the legacy match, as here): the last word of page 0x83 is the
// device name.
type gcpPD struct{ base }

// Name is the driver's name in test names.
func (gcpPD) Name() string { return "gcp-pd" }

// TakesDiskOffline tells whether the driver's NodeUnstageVolume takes the disk offline.
func (gcpPD) TakesDiskOffline() bool { return true }

// KnownStageFailure names a stage step the driver is known to fail once on upstream too ("" for none).
func (gcpPD) KnownStageFailure() string { return "" }

// LeftBehindUnstageFails is UnmountDevice fails on any error of
// GetVolumeIDFromTargetPath once the staging path exists.
func (gcpPD) LeftBehindUnstageFails() bool { return true }

func (d gcpPD) getDevicePath(ctx context.Context, v *Vol) (string, error) {
	resp, err := d.p.Disk.ListDiskIDs(ctx, &disk.ListDiskIDsRequest{})
	if err != nil {
		return "", fail("ListDiskIDs", err)
	}
	for n, id := range resp.DiskIDs {
		if id.Page83 == "" {
			continue
		}
		words := strings.Fields(id.Page83)
		if words[len(words)-1] == v.DeviceName {
			return strconv.FormatUint(uint64(n), 10), nil
		}
	}
	return "", fail("getDiskNumberLegacy", fmt.Errorf("could not find disk number for device %s", v.DeviceName))
}

// isVolumePathMounted: IsSymlink on the raw path; an error counts as "not
// mounted".
func (d gcpPD) isVolumePathMounted(ctx context.Context, path string) bool {
	r, err := d.p.Filesystem.IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: path})
	return err == nil && r.IsSymlink
}

// NodeStage is the driver's NodeStageVolume over csi-proxy.
func (d gcpPD) NodeStage(ctx context.Context, v *Vol) error {
	dev, err := d.getDevicePath(ctx, v)
	if err != nil {
		return err
	}
	if want := strconv.Itoa(int(v.Disk)); dev != want {
		return fail("getDiskNumberLegacy", fmt.Errorf("picked disk %s, the volume is disk %s", dev, want))
	}
	if d.isVolumePathMounted(ctx, v.Staging) {
		return nil
	}
	// prepareStagePath is a no-op on Windows. formatAndMount (NTFS only):
	n, err := diskNum(dev)
	if err != nil {
		return fail("parse disk number", err)
	}
	if err := partitionAndOnline(ctx, d.p, n); err != nil {
		return err
	}
	// The rest is formatAndMountFirstVolume's calls, but gcp-pd checks for
	// an empty list (its own text, where the others panic) and mounts at
	// the raw staging path: its copy stays.
	vols, err := d.p.Volume.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: n})
	if err != nil {
		return fail("ListVolumesOnDisk", err)
	}
	if len(vols.VolumeIDs) == 0 {
		return fail("ListVolumesOnDisk", errors.New("ListVolumesOnDisk does not return any volumes"))
	}
	id := vols.VolumeIDs[0]
	f, err := d.p.Volume.IsVolumeFormatted(ctx, &volume.IsVolumeFormattedRequest{VolumeID: id})
	if err != nil {
		return fail("IsVolumeFormatted", err)
	}
	if !f.Formatted {
		if _, err := d.p.Volume.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: id}); err != nil {
			return fail("FormatVolume", err)
		}
	}
	if _, err := d.p.Volume.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: v.Staging}); err != nil {
		return fail("MountVolume", err)
	}
	// Part 4 (not read-only): resizefs resizeV1 on the raw staging path.
	return resizeVolumeAt(ctx, d.p, v.Staging)
}

// NodePublish is the driver's NodePublishVolume over csi-proxy.
func (d gcpPD) NodePublish(ctx context.Context, v *Vol) error {
	if d.isVolumePathMounted(ctx, v.Publish) {
		return nil
	}
	target := d.env.normalize(v.Publish)
	if err := rmdirIfExists(ctx, d.p, target); err != nil { // preparePublishPath
		return err
	}
	// MountSensitive: os.MkdirAll of the parent on the node (the kubelet
	// made it already), then CreateSymlink.
	if _, err := d.p.Filesystem.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{
		SourcePath: d.env.normalize(v.Staging), TargetPath: target,
	}); err != nil {
		return fail("CreateSymlink", err)
	}
	return nil
}

// NodeGetVolumeStats is os.Lstat on the node, then StatFSV1 on the raw path.
func (d gcpPD) NodeGetVolumeStats(ctx context.Context, v *Vol) (Stats, error) {
	if exists, _, err := d.loc.Lstat(ctx, v.Publish); err != nil || !exists {
		return Stats{}, fail("local Lstat", fmt.Errorf("path %s does not exist (%w)", v.Publish, err))
	}
	return statFS(ctx, d.p, v.Publish)
}

// NodeExpand is the driver's NodeExpandVolume over csi-proxy.
func (d gcpPD) NodeExpand(ctx context.Context, v *Vol, required int64) (int64, error) {
	dev, err := d.getDevicePath(ctx, v)
	if err != nil {
		return 0, err
	}
	if err := resizeVolumeAt(ctx, d.p, v.Publish); err != nil { // resizefs resizeV1, raw path
		return 0, err
	}
	n, _ := diskNum(dev)
	ds, err := d.p.Disk.GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: n})
	if err != nil {
		return 0, fail("GetDiskStats", err)
	}
	if ds.TotalBytes < required {
		return 0, fail("GetDiskStats", fmt.Errorf("resize requested for %v but after resize volume was size %v", required, ds.TotalBytes))
	}
	return required, nil
}

// NodeUnpublish is the driver's NodeUnpublishVolume over csi-proxy.
func (d gcpPD) NodeUnpublish(ctx context.Context, v *Vol) error {
	if _, err := d.p.Filesystem.Rmdir(ctx, &filesystem.RmdirRequest{Path: d.env.normalize(v.Publish), Force: true}); err != nil {
		return fail("Rmdir", err)
	}
	return nil
}

// NodeUnstage is UnmountDevice: nothing to do when the staging path is gone.
func (d gcpPD) NodeUnstage(ctx context.Context, v *Vol) error {
	target := d.env.normalize(v.Staging)
	ex, err := d.p.Filesystem.PathExists(ctx, &filesystem.PathExistsRequest{Path: target})
	if err != nil {
		return fail("PathExists", err)
	}
	if !ex.Exists {
		return nil
	}
	return unmountAndOffline(ctx, d.p, target)
}
