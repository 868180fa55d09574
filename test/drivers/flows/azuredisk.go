package flows

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// azureDisk is azuredisk-csi-driver's Windows node code in csi-proxy v1
// mode (useCSIProxyGAInterface, not HostProcess), from
// kubernetes-sigs/azuredisk-csi-driver @ d983d613b6dd04af5bcc886d309b8de6ea5637b6:
// pkg/azuredisk/nodeserver.go (NodeStageVolume, NodeUnstageVolume,
// NodePublishVolume, NodeUnpublishVolume, NodeGetVolumeStats,
// NodeExpandVolume, ensureMountPoint, getDevicePathWithLUN,
// validateBlockDeviceSize), pkg/azuredisk/azure_common_windows.go
// (findDiskByLun, preparePublishPath, CleanupMountPoint, needResizeVolume,
// resizeVolume, GetVolumeStats) and pkg/mounter/safe_mounter_windows.go
// (csiProxyMounter). It normalises paths for PathExists, IsSymlink, Mkdir,
// Rmdir, CreateSymlink and MountVolume, but passes the kubelet's path raw
// to GetVolumeIDFromTargetPath in Unmount (NodeUnstage) and GetVolumeStats.
type azureDisk struct {
	base
	// flush holds the outcome of the last unstage's flush, which the
	// driver only logs.
	flush *error
}

// Name is the driver's name in test names.
func (azureDisk) Name() string { return "azuredisk" }

// TakesDiskOffline tells whether the driver's NodeUnstageVolume takes the disk offline.
func (azureDisk) TakesDiskOffline() bool { return false }

// KnownStageFailure is on Windows needResizeVolume always says yes and
// resizeVolume hands csi-proxy the *disk number* as the volume ID
// (ResizeVolume{VolumeId: "7"}); upstream finds no volume with that
// UniqueId and fails, so the first NodeStage of every volume fails there.
// The volume is mounted by then, and kubelet's retry finds it mounted
// (ensureMountPoint) and succeeds.
func (azureDisk) KnownStageFailure() string { return "ResizeVolume(disk number as volume ID)" }

// LeftBehindUnstageFails tells whether the driver fails NodeUnstageVolume on a staging dir left behind unmounted.
func (azureDisk) LeftBehindUnstageFails() bool { return false }

// findDiskByLun is csiProxyMounter.FindDiskByLun: the disk whose LUNID
// equals the LUN without case. Map order is random in the driver, so a
// second disk reporting the same LUN would make the pick random: that is
// reported as a failure here.
func (d azureDisk) findDiskByLun(ctx context.Context, lun string) (string, error) {
	_, _ = d.p.Disk.Rescan(ctx, &disk.RescanRequest{}) // scsiHostRescan: failure only logged
	locs, err := d.p.Disk.ListDiskLocations(ctx, &disk.ListDiskLocationsRequest{})
	if err != nil {
		return "", fail("ListDiskLocations", err)
	}
	var found []string
	for n, l := range locs.DiskLocations {
		if strings.EqualFold(l.LUNID, lun) {
			found = append(found, strconv.Itoa(int(n)))
		}
	}
	switch len(found) {
	case 0:
		return "", fail("FindDiskByLun", fmt.Errorf("could not find disk id for lun: %s", lun))
	case 1:
		return found[0], nil
	}
	return "", fail("FindDiskByLun", fmt.Errorf("disks %v all report LUN %s: the driver would pick one at random", found, lun))
}

// ensureMountPoint is Driver.ensureMountPoint on Windows: PathExists and
// IsSymlink through csi-proxy; a link is then opened and read on the node
// (os.Open + ReadDir), which Local models.
func (d azureDisk) ensureMountPoint(ctx context.Context, target string) (bool, error) {
	mounted, err := isLikelyMountPoint(ctx, d.p, d.env.normalize(target))
	if err != nil || !mounted {
		return false, err
	}
	if exists, _, err := d.loc.Lstat(ctx, target); err != nil || !exists {
		return false, fail("local ReadDir", fmt.Errorf("cannot read %s: %w", target, err))
	}
	return true, nil
}

// NodeStage is the driver's NodeStageVolume over csi-proxy.
func (d azureDisk) NodeStage(ctx context.Context, v *Vol) error {
	source, err := d.findDiskByLun(ctx, v.LUN)
	if err != nil {
		return err
	}
	if want := strconv.Itoa(int(v.Disk)); source != want {
		return fail("FindDiskByLun", fmt.Errorf("LUN %s picked disk %s, the volume is disk %s", v.LUN, source, want))
	}
	mounted, err := d.ensureMountPoint(ctx, v.Staging)
	if err != nil {
		return err
	}
	if mounted {
		return nil
	}
	// csiProxyMounter.FormatAndMount: no SetDiskState at all.
	n, err := diskNum(source)
	if err != nil {
		return fail("parse disk number", err)
	}
	if _, err := d.p.Disk.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: n}); err != nil {
		return fail("PartitionDisk", err)
	}
	if err := formatAndMountFirstVolume(ctx, d.p, n, d.env.normalize(v.Staging)); err != nil {
		return err
	}
	// needResizeVolume is always true on Windows; resizeVolume(source).
	if _, err := d.p.Volume.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: source}); err != nil {
		return fail("ResizeVolume(disk number as volume ID)", err)
	}
	return nil
}

// NodePublish is the driver's NodePublishVolume over csi-proxy.
func (d azureDisk) NodePublish(ctx context.Context, v *Vol) error {
	target := d.env.normalize(v.Publish)
	if err := rmdirIfExists(ctx, d.p, target); err != nil { // preparePublishPath
		return err
	}
	mounted, err := d.ensureMountPoint(ctx, v.Publish)
	if err != nil {
		return err
	}
	if mounted {
		return nil
	}
	if _, err := d.p.Filesystem.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{
		SourcePath: d.env.normalize(v.Staging), TargetPath: target,
	}); err != nil {
		return fail("CreateSymlink", err)
	}
	return nil
}

// NodeGetVolumeStats is csiProxyMounter.GetVolumeStats on the publish path,
// passed raw (the stats cache is left out: it only skips calls). Its calls
// are statFS's, but the driver wraps both errors in texts of its own (the
// response it also prints is left out: nil on an error).
func (d azureDisk) NodeGetVolumeStats(ctx context.Context, v *Vol) (Stats, error) {
	id, err := d.p.Volume.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: v.Publish})
	if err != nil {
		return Stats{}, fail("GetVolumeIDFromTargetPath", fmt.Errorf("GetVolumeIDFromMount(%s) failed with error: %w", v.Publish, err))
	}
	vs, err := d.p.Volume.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id.VolumeID})
	if err != nil {
		return Stats{}, fail("GetVolumeStats", fmt.Errorf("GetVolumeStats(%s) failed with error: %w", id.VolumeID, err))
	}
	return Stats{Total: vs.TotalBytes, Used: vs.UsedBytes, Available: vs.TotalBytes - vs.UsedBytes}, nil
}

// NodeExpand is the volume behind the publish path (GetDeviceNameFromMount,
// normalised), its size checked against the request in GiB before and
// after ResizeVolume.
func (d azureDisk) NodeExpand(ctx context.Context, v *Vol, required int64) (int64, error) {
	id, err := d.p.Volume.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: d.env.normalize(v.Publish)})
	if err != nil {
		return 0, fail("GetVolumeIDFromTargetPath", err)
	}
	dev := id.VolumeID
	check := func(when string) (int64, error) {
		vs, err := d.p.Volume.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: dev})
		if err != nil {
			return 0, fail("GetVolumeStats", err)
		}
		if got, want := roundUpGiB(vs.TotalBytes), roundUpGiB(required); got < want {
			return 0, fail("validateBlockDeviceSize "+when, fmt.Errorf("current %d GiB < requested %d GiB", got, want))
		}
		return vs.TotalBytes, nil
	}
	if _, err := check("before resize"); err != nil {
		return 0, err
	}
	if _, err := d.p.Volume.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: dev}); err != nil {
		return 0, fail("ResizeVolume", err)
	}
	return check("after resize")
}

// NodeUnpublish is CleanupMountPoint without unmountVolume on Windows
// (extensiveMountPointCheck is false there): Rmdir only.
func (d azureDisk) NodeUnpublish(ctx context.Context, v *Vol) error {
	if _, err := d.p.Filesystem.Rmdir(ctx, &filesystem.RmdirRequest{Path: d.env.normalize(v.Publish), Force: true}); err != nil {
		return fail("Rmdir", err)
	}
	return nil
}

// NodeUnstage is csiProxyMounter.Unmount: flush the volume found at the raw
// staging path (a failure is only logged: the flush is lost silently, so
// the flow reports it), then Rmdir. It never calls UnmountVolume: the
// forced Rmdir of the mount point is the unmount.
func (d azureDisk) NodeUnstage(ctx context.Context, v *Vol) error {
	return d.unmount(ctx, v.Staging, d.flush)
}

// SilentFailure returns the error the last NodeUnstage only logged (a
// lost flush), or nil.
func (d azureDisk) SilentFailure() error { return *d.flush }

// unmount runs Unmount; lost receives the flush failure the driver only
// logs.
func (d azureDisk) unmount(ctx context.Context, target string, lost *error) error {
	id, err := d.p.Volume.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: target})
	if err == nil {
		_, err = d.p.Volume.WriteVolumeCache(ctx, &volume.WriteVolumeCacheRequest{VolumeID: id.VolumeID})
	}
	if lost != nil {
		*lost = err
	}
	if _, err := d.p.Filesystem.Rmdir(ctx, &filesystem.RmdirRequest{Path: d.env.normalize(target), Force: true}); err != nil {
		return fail("Rmdir", err)
	}
	return nil
}
