package flows

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// vSphere is vsphere-csi-driver's Windows node code over csi-proxy v1, from
// kubernetes-sigs/vsphere-csi-driver @ e1c1bc59 (the last commit before its
// move to the csi-proxy v2 library): pkg/csi/service/node.go
// (NodeStageVolume, NodeUnstageVolume, NodePublishVolume,
// NodeUnpublishVolume, NodeGetVolumeStats, NodeExpandVolume, NodeGetInfo),
// pkg/csi/service/osutils/windows_os_utils.go (NodeStageBlockVolume,
// haveMountPoint, CleanupStagePath, PublishMountVol, PreparePublishPath,
// GetMetrics, ResizeVolume, GetDevice, GetSystemUUID, ConvertUUID) and
// pkg/csi/service/mounter/mounter_windows.go (csiProxyMounter).
type vSphere struct{ base }

// Name is the driver's name in test names.
func (vSphere) Name() string { return "vsphere" }

// TakesDiskOffline tells whether the driver's NodeUnstageVolume takes the disk offline.
func (vSphere) TakesDiskOffline() bool { return true }

// KnownStageFailure names a stage step the driver is known to fail once on upstream too ("" for none).
func (vSphere) KnownStageFailure() string { return "" }

// LeftBehindUnstageFails is IsTargetInMounts is always true on Windows and
// Unmount fails on any error of GetVolumeIDFromTargetPath once the staging
// path exists.
func (vSphere) LeftBehindUnstageFails() bool { return true }

func (d vSphere) exists(ctx context.Context, path string) (bool, error) {
	ex, err := d.p.Filesystem.PathExists(ctx, &filesystem.PathExistsRequest{Path: d.env.normalize(path)})
	if err != nil {
		return false, fail("PathExists", err)
	}
	return ex.Exists, nil
}

// NodeStage is the driver's NodeStageVolume over csi-proxy.
func (d vSphere) NodeStage(ctx context.Context, v *Vol) error {
	// VerifyTargetDir(staging, must exist): kubelet made it.
	ex, err := d.exists(ctx, v.Staging)
	if err != nil {
		return err
	}
	if !ex {
		return fail("VerifyTargetDir", fmt.Errorf("target: %s not pre-created", v.Staging))
	}
	// GetDiskNumber: page 0x83 equal to the disk UUID.
	ids, err := d.p.Disk.ListDiskIDs(ctx, &disk.ListDiskIDsRequest{})
	if err != nil {
		return fail("ListDiskIDs", err)
	}
	dev := ""
	for n, id := range ids.DiskIDs {
		if id.Page83 != "" && id.Page83 == v.DiskUUID {
			dev = strconv.FormatUint(uint64(n), 10)
		}
	}
	if dev == "" {
		return fail("GetDiskNumber", errors.New("no matching disks found"))
	}
	if want := strconv.Itoa(int(v.Disk)); dev != want {
		return fail("GetDiskNumber", fmt.Errorf("picked disk %s, the volume is disk %s", dev, want))
	}
	// haveMountPoint: os.Lstat on the node; a link is then read.
	exists, link, err := d.loc.Lstat(ctx, v.Staging)
	if err != nil {
		return fail("local Lstat", err)
	}
	if exists && link {
		return nil
	}
	n, _ := diskNum(dev)
	if err := partitionAndOnline(ctx, d.p, n); err != nil {
		return err
	}
	return formatAndMountFirstVolume(ctx, d.p, n, d.env.normalize(v.Staging))
}

// NodePublish is the driver's NodePublishVolume over csi-proxy.
func (d vSphere) NodePublish(ctx context.Context, v *Vol) error {
	// PreparePublishPath: remove what is there, then make the parent,
	// which the kubelet made already.
	if err := rmdirIfExists(ctx, d.p, d.env.normalize(v.Publish)); err != nil {
		return err
	}
	if _, err := d.p.Filesystem.Mkdir(ctx, &filesystem.MkdirRequest{Path: d.env.normalize(d.env.parent(v.Publish))}); err != nil {
		return fail("Mkdir(parent)", err)
	}
	if _, err := d.p.Filesystem.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{
		SourcePath: d.env.normalize(v.Staging), TargetPath: d.env.normalize(v.Publish),
	}); err != nil {
		return fail("CreateSymlink", err)
	}
	return nil
}

// NodeGetVolumeStats is GetMetrics -> StatFS on the raw path.
func (d vSphere) NodeGetVolumeStats(ctx context.Context, v *Vol) (Stats, error) {
	return statFS(ctx, d.p, v.Publish)
}

// NodeExpand is GetDevFromMount (volume ID at the normalised path), the
// OnlineVolumeExtend rescan when the volume is smaller than asked, then
// osUtils.ResizeVolume: skip when the disk is within 1 MiB of the request,
// else online the disk and ResizeVolume to the maximum.
func (d vSphere) NodeExpand(ctx context.Context, v *Vol, required int64) (int64, error) {
	id, err := d.p.Volume.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: d.env.normalize(v.Publish)})
	if err != nil {
		return 0, fail("GetVolumeIDFromTargetPath", err)
	}
	dev := id.VolumeID
	vs, err := d.p.Volume.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: dev})
	if err != nil {
		return 0, fail("GetVolumeStats", err)
	}
	if vs.TotalBytes < required {
		if _, err := d.p.Disk.Rescan(ctx, &disk.RescanRequest{}); err != nil {
			return 0, fail("Rescan", err)
		}
	}
	n, err := d.p.Volume.GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: dev})
	if err != nil {
		return 0, fail("GetDiskNumberFromVolumeID", err)
	}
	ds, err := d.p.Disk.GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: n.DiskNumber})
	if err != nil {
		return 0, fail("GetDiskStats", err)
	}
	if required-ds.TotalBytes >= 1<<20 {
		if _, err := d.p.Volume.GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: dev}); err != nil {
			return 0, fail("GetDiskNumberFromVolumeID", err)
		}
		if _, err := d.p.Disk.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n.DiskNumber, IsOnline: true}); err != nil {
			return 0, fail("SetDiskState(online)", err)
		}
		if _, err := d.p.Volume.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: dev}); err != nil {
			return 0, fail("ResizeVolume", err)
		}
	}
	return required, nil
}

// NodeUnpublish is the driver's NodeUnpublishVolume over csi-proxy.
func (d vSphere) NodeUnpublish(ctx context.Context, v *Vol) error {
	if _, err := d.p.Filesystem.Rmdir(ctx, &filesystem.RmdirRequest{Path: d.env.normalize(v.Publish), Force: true}); err != nil {
		return fail("Rmdir", err)
	}
	return nil
}

// NodeUnstage is VerifyTargetDir (gone: done), then csiProxyMounter.Unmount,
// which checks existence again.
func (d vSphere) NodeUnstage(ctx context.Context, v *Vol) error {
	for range 2 {
		ex, err := d.exists(ctx, v.Staging)
		if err != nil {
			return err
		}
		if !ex {
			return nil
		}
	}
	return unmountAndOffline(ctx, d.p, d.env.normalize(v.Staging))
}

// nodeUUID is NodeGetInfo's GetSystemUUID: the BIOS serial
// ("VMware-42 1c ... -..") turned into the VM UUID the driver looks the
// node up by.
func (d vSphere) nodeUUID(ctx context.Context) (string, error) {
	sn, err := d.p.System.GetBIOSSerialNumber(ctx, &system.GetBIOSSerialNumberRequest{})
	if err != nil {
		return "", fail("GetBIOSSerialNumber", err)
	}
	u := strings.TrimSpace(sn.SerialNumber)
	const prefix = "VMware-"
	if !strings.HasPrefix(u, prefix) {
		return "", fail("ConvertUUID", fmt.Errorf("failed to match Prefix, UUID read is %v", u))
	}
	u = strings.NewReplacer(" ", "", "-", "").Replace(u[len(prefix):])
	if len(u) != 32 {
		return "", fail("ConvertUUID", fmt.Errorf("length check failed, UUID read is %v", u))
	}
	return u[0:8] + "-" + u[8:12] + "-" + u[12:16] + "-" + u[16:20] + "-" + u[20:32], nil
}
