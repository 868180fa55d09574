package flows

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// awsEBS is aws-ebs-csi-driver's Windows node code in csi-proxy v1 mode,
// from kubernetes-sigs/aws-ebs-csi-driver @ 429e202e589798e55c0f8ddcc81b2850b7f000d0:
// pkg/driver/node.go (NodeStageVolume, NodeUnstageVolume,
// nodePublishVolumeForFileSystem, isMounted, NodeUnpublishVolume,
// NodeGetVolumeStats, NodeExpandVolume), pkg/mounter/mount_windows.go
// (NodeMounter: GetDeviceNameFromMount, handleGetDeviceNameFromMountError,
// PreparePublishTarget, NeedResize, Resize, Unpublish, Unstage) and
// pkg/mounter/mount_windows_proxyV1.go (CSIProxyMounter). Every path it
// hands csi-proxy goes through util.NormalizeWindowsPath first.
type awsEBS struct{ base }

// Name is the driver's name in test names.
func (awsEBS) Name() string { return "aws-ebs" }

// TakesDiskOffline tells whether the driver's NodeUnstageVolume takes the disk offline.
func (awsEBS) TakesDiskOffline() bool { return true }

// KnownStageFailure names a stage step the driver is known to fail once on upstream too ("" for none).
func (awsEBS) KnownStageFailure() string { return "" }

// LeftBehindUnstageFails tells whether the driver fails NodeUnstageVolume on a staging dir left behind unmounted.
func (awsEBS) LeftBehindUnstageFails() bool { return false }

// awsNotMounted is handleGetDeviceNameFromMountError's pattern: an error
// whose text matches means "nothing is mounted there" (refcount 0). The
// texts are those of the PowerShell-era csi-proxy (v1.2.x).
var awsNotMounted = regexp.MustCompile(`(Get-Item -Path \S+).Target, output: , error: <nil>|because it does not exist`)

// AWSTreatsAsNotMounted applies aws-ebs's rule to an error text: whether
// the driver reads it as "not mounted" rather than as a failure.
func AWSTreatsAsNotMounted(errText string) bool { return awsNotMounted.MatchString(errText) }

// findDevicePath is CSIProxyMounter.FindDevicePath: the first disk whose
// serial number contains the volume ID without dashes.
func (d awsEBS) findDevicePath(ctx context.Context, v *Vol) (string, error) {
	resp, err := d.p.Disk.ListDiskIDs(ctx, &disk.ListDiskIDsRequest{})
	if err != nil {
		return "", fail("ListDiskIDs", fmt.Errorf("error listing disk ids: %w", err))
	}
	clean := strings.ReplaceAll(v.VolumeID, "-", "")
	for n, id := range resp.DiskIDs {
		if strings.Contains(id.SerialNumber, clean) {
			return strconv.Itoa(int(n)), nil
		}
	}
	return "", fail("FindDevicePath", fmt.Errorf("disk number for volume id %q not found", v.VolumeID))
}

// getDeviceNameFromMount is NodeMounter.GetDeviceNameFromMount: the disk
// number behind a mount path, refcount 1; an error matching awsNotMounted
// is ("", 0, nil).
func (d awsEBS) getDeviceNameFromMount(ctx context.Context, path string) (string, int, error) {
	id, err := d.p.Volume.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: d.env.normalize(path)})
	if err == nil {
		var n *volume.GetDiskNumberFromVolumeIDResponse
		n, err = d.p.Volume.GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: id.VolumeID})
		if err == nil {
			return strconv.Itoa(int(n.DiskNumber)), 1, nil
		}
		return "", 0, fail("GetDiskNumberFromVolumeID", err)
	}
	if AWSTreatsAsNotMounted(err.Error()) {
		return "", 0, nil
	}
	return "", 0, fail("GetVolumeIDFromTargetPath (aws-ebs reads as not mounted only what matches its pattern)",
		fmt.Errorf("error getting device name from mount: %w", err))
}

// NodeStage is the driver's NodeStageVolume over csi-proxy.
func (d awsEBS) NodeStage(ctx context.Context, v *Vol) error {
	source, err := d.findDevicePath(ctx, v)
	if err != nil {
		return err
	}
	if want := strconv.Itoa(int(v.Disk)); source != want {
		return fail("FindDevicePath", fmt.Errorf("picked disk %s, the volume is disk %s", source, want))
	}
	target := d.env.normalize(v.Staging)
	ex, err := d.p.Filesystem.PathExists(ctx, &filesystem.PathExistsRequest{Path: target})
	if err != nil {
		return fail("PathExists", err)
	}
	if !ex.Exists {
		if _, err := d.p.Filesystem.Mkdir(ctx, &filesystem.MkdirRequest{Path: target}); err != nil {
			return fail("Mkdir", err)
		}
	}
	device, _, err := d.getDeviceNameFromMount(ctx, v.Staging)
	if err != nil {
		return err
	}
	if device == source {
		return nil // already staged
	}
	if err := d.formatAndMount(ctx, source, v.Staging); err != nil {
		return err
	}
	need, err := d.needResize(ctx, source, v.Staging)
	if err != nil {
		return err
	}
	if need {
		return d.resize(ctx, v.Staging)
	}
	return nil
}

// formatAndMount is CSIProxyMounter.FormatAndMountSensitiveWithFormatOptions:
// PartitionDisk before SetDiskState(online) (since aws-ebs PR #1189).
func (d awsEBS) formatAndMount(ctx context.Context, source, target string) error {
	n, err := diskNum(source)
	if err != nil {
		return fail("parse disk number", err)
	}
	if err := partitionAndOnline(ctx, d.p, n); err != nil {
		return err
	}
	return formatAndMountFirstVolume(ctx, d.p, n, d.env.normalize(target))
}

// needResize is NodeMounter.NeedResize: Rescan (failure only logged), the
// disk's size and the staged volume's size; "need" when the disk is at most
// one 4 KiB block bigger than the file system (the driver's comparison, as
// written).
func (d awsEBS) needResize(ctx context.Context, source, staging string) (bool, error) {
	_, _ = d.p.Disk.Rescan(ctx, &disk.RescanRequest{})
	n, err := diskNum(source)
	if err != nil {
		return false, fail("parse disk number", err)
	}
	ds, err := d.p.Disk.GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: n})
	if err != nil {
		return false, fail("GetDiskStats", fmt.Errorf("failed to get device size: %w", err))
	}
	id, err := d.p.Volume.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: d.env.normalize(staging)})
	if err != nil {
		return false, fail("GetVolumeIDFromTargetPath", fmt.Errorf("failed to get filesystem size: %w", err))
	}
	vs, err := d.p.Volume.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id.VolumeID})
	if err != nil {
		return false, fail("GetVolumeStats", fmt.Errorf("failed to get filesystem size: %w", err))
	}
	return ds.TotalBytes <= 4096+vs.TotalBytes, nil
}

// resize is NodeMounter.Resize: Rescan (logged), then ResizeVolume of the
// volume mounted at path to its maximum.
func (d awsEBS) resize(ctx context.Context, path string) error {
	_, _ = d.p.Disk.Rescan(ctx, &disk.RescanRequest{})
	return resizeVolumeAt(ctx, d.p, d.env.normalize(path))
}

// NodePublish is the driver's NodePublishVolume over csi-proxy.
func (d awsEBS) NodePublish(ctx context.Context, v *Vol) error {
	target := d.env.normalize(v.Publish)
	// PreparePublishTarget: remove a directory a pre-1.20 kubelet made.
	// The calls are rmdirIfExists's; the error texts are aws-ebs's own.
	ex, err := d.p.Filesystem.PathExists(ctx, &filesystem.PathExistsRequest{Path: target})
	if err != nil {
		return fail("PathExists", fmt.Errorf("error checking path %q exists: %w", v.Publish, err))
	}
	if ex.Exists {
		if _, err := d.p.Filesystem.Rmdir(ctx, &filesystem.RmdirRequest{Path: target, Force: true}); err != nil {
			return fail("Rmdir", fmt.Errorf("error Rmdir target %q: %w", v.Publish, err))
		}
	}
	// isMounted -> IsLikelyNotMountPoint.
	mounted, err := isLikelyMountPoint(ctx, d.p, target)
	if err != nil {
		return err
	}
	if mounted {
		return nil // already mounted
	}
	if _, err := d.p.Filesystem.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{
		SourcePath: d.env.normalize(v.Staging), TargetPath: target,
	}); err != nil {
		return fail("CreateSymlink", err)
	}
	return nil
}

// NodeGetVolumeStats is PathExists over csi-proxy, then the driver's own
// windows.GetDiskFreeSpaceEx on the node, which is not a csi-proxy call.
func (d awsEBS) NodeGetVolumeStats(ctx context.Context, v *Vol) (Stats, error) {
	ex, err := d.p.Filesystem.PathExists(ctx, &filesystem.PathExistsRequest{Path: d.env.normalize(v.Publish)})
	if err != nil {
		return Stats{}, fail("PathExists", err)
	}
	if !ex.Exists {
		return Stats{}, fail("PathExists", fmt.Errorf("path %s does not exist: %w", v.Publish, os.ErrNotExist))
	}
	return Stats{OnlyExistence: true}, nil
}

// NodeExpand is the driver's NodeExpandVolume over csi-proxy.
func (d awsEBS) NodeExpand(ctx context.Context, v *Vol, required int64) (int64, error) {
	deviceName, _, err := d.getDeviceNameFromMount(ctx, v.Publish)
	if err != nil {
		return 0, err
	}
	devicePath, err := d.findDevicePath(ctx, v)
	if err != nil {
		return 0, err
	}
	if deviceName != devicePath {
		return 0, fail("GetDeviceNameFromMount (the publish path must lead to the volume's disk)", fmt.Errorf("the publish path leads to disk %q, the volume is disk %s", deviceName, devicePath))
	}
	if err := d.resize(ctx, v.Publish); err != nil {
		return 0, err
	}
	n, _ := diskNum(devicePath)
	ds, err := d.p.Disk.GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: n})
	if err != nil {
		return 0, fail("GetDiskStats", err)
	}
	return ds.TotalBytes, nil
}

// NodeUnpublish is the driver's NodeUnpublishVolume over csi-proxy.
func (d awsEBS) NodeUnpublish(ctx context.Context, v *Vol) error {
	if _, err := d.p.Filesystem.Rmdir(ctx, &filesystem.RmdirRequest{Path: d.env.normalize(v.Publish), Force: true}); err != nil {
		return fail("Rmdir", fmt.Errorf("failed to remove directory: %w", err))
	}
	return nil
}

// NodeUnstage is the driver's NodeUnstageVolume over csi-proxy.
func (d awsEBS) NodeUnstage(ctx context.Context, v *Vol) error {
	_, refs, err := d.getDeviceNameFromMount(ctx, v.Staging)
	if err != nil {
		return err
	}
	if refs == 0 {
		return nil // not staged: success, as the spec wants
	}
	return unmountAndOffline(ctx, d.p, d.env.normalize(v.Staging))
}
