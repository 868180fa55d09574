package driver

import (
	"context"
	"errors"
	"os"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/csi-node-proxy/csi-node-proxy/client/mounter"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// NodeGetCapabilities implements csi.NodeServer: staging, volume stats
// and expansion.
func (d *Driver) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	rpc := func(t csi.NodeServiceCapability_RPC_Type) *csi.NodeServiceCapability {
		return &csi.NodeServiceCapability{Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{Type: t}}}
	}
	return &csi.NodeGetCapabilitiesResponse{Capabilities: []*csi.NodeServiceCapability{
		rpc(csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME),
		rpc(csi.NodeServiceCapability_RPC_GET_VOLUME_STATS),
		rpc(csi.NodeServiceCapability_RPC_EXPAND_VOLUME),
	}}, nil
}

// NodeGetInfo implements csi.NodeServer.
func (d *Driver) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: d.cfg.NodeID, AccessibleTopology: d.topology()}, nil
}

// findDisk returns the proxy's disk number of volume id's disk, found by
// its serial number; after a miss the node rescans once (a disk just
// attached may not be listed yet).
func (d *Driver) findDisk(ctx context.Context, disk Disk) (uint32, error) {
	n, err := d.m.FindDiskBySerial(ctx, disk.Serial)
	if errors.Is(err, errdefs.ErrNotFound) {
		if err := d.m.Rescan(ctx); err != nil {
			return 0, toStatus(err, "volume %s", disk.ID)
		}
		n, err = d.m.FindDiskBySerial(ctx, disk.Serial)
	}
	return n, toStatus(err, "find the disk of volume %s", disk.ID)
}

// NodeStageVolume implements csi.NodeServer: the volume's disk found by
// serial, then partitioned, formatted and mounted at the staging path by
// the mounter's FormatAndMount, each step idempotent.
func (d *Driver) NodeStageVolume(ctx context.Context, req *csi.NodeStageVolumeRequest) (*csi.NodeStageVolumeResponse, error) {
	if err := required(arg{req.GetVolumeId(), "volume ID"}, arg{req.GetStagingTargetPath(), "staging target path"}); err != nil {
		return nil, err
	}
	if err := checkCapability(req.GetVolumeCapability(), true); err != nil {
		return nil, err
	}
	defer d.lock(req.GetVolumeId())()
	disk, err := d.disk(ctx, req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	n, err := d.findDisk(ctx, disk)
	if err != nil {
		return nil, err
	}
	vol, err := d.m.FormatAndMount(ctx, n, req.GetStagingTargetPath())
	if err != nil {
		return nil, toStatus(err, "stage volume %s", disk.ID)
	}
	d.log.V(2).Info("staged", "volume", disk.ID, "disk", n, "proxyVolume", vol, "path", req.GetStagingTargetPath())
	return &csi.NodeStageVolumeResponse{}, nil
}

// NodeUnstageVolume implements csi.NodeServer: the mounter unmounts the
// volume (the proxy flushes it first) and removes the staging directory;
// nothing staged there is success.
func (d *Driver) NodeUnstageVolume(ctx context.Context, req *csi.NodeUnstageVolumeRequest) (*csi.NodeUnstageVolumeResponse, error) {
	err := d.unmount(req.GetVolumeId(), arg{req.GetStagingTargetPath(), "staging target path"}, "unstage", "unstaged", "path", func() error {
		return d.m.UnmountDevice(ctx, req.GetStagingTargetPath(), mounter.UnmountDeviceOptions{})
	})
	if err != nil {
		return nil, err
	}
	return &csi.NodeUnstageVolumeResponse{}, nil
}

// NodePublishVolume implements csi.NodeServer: the mounter makes the
// staged volume appear at the target (on Linux a second mount of it, so
// kubelet's fsGroup walk reaches it; on Windows a link, as Windows drivers
// publish); a target that is a mount already is success.
func (d *Driver) NodePublishVolume(ctx context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	if err := required(arg{req.GetVolumeId(), "volume ID"}, arg{req.GetTargetPath(), "target path"}); err != nil {
		return nil, err
	}
	switch {
	case req.GetVolumeCapability() == nil:
		return nil, status.Error(codes.InvalidArgument, "no volume capability")
	case req.GetStagingTargetPath() == "":
		return nil, status.Error(codes.FailedPrecondition, "no staging target path: this driver stages volumes (STAGE_UNSTAGE_VOLUME)")
	case req.GetReadonly():
		return nil, status.Error(codes.InvalidArgument, "read-only publishing is not supported: the mounter publishes the staged volume as it is mounted")
	}
	if err := checkCapability(req.GetVolumeCapability(), true); err != nil {
		return nil, err
	}
	defer d.lock(req.GetVolumeId())()
	disk, err := d.mountedDisk(ctx, req.GetVolumeId(), req.GetStagingTargetPath(), codes.FailedPrecondition)
	if err != nil {
		return nil, err
	}
	target := req.GetTargetPath()
	notMnt, err := d.m.IsLikelyNotMountPoint(target)
	switch {
	case err == nil && !notMnt:
		return &csi.NodePublishVolumeResponse{}, nil
	case err != nil && !os.IsNotExist(err):
		return nil, toStatus(err, "check %s", target)
	}
	if err := d.m.Mount(req.GetStagingTargetPath(), target, "", nil); err != nil {
		return nil, toStatus(err, "publish volume %s", disk.ID)
	}
	d.log.V(2).Info("published", "volume", disk.ID, "target", target)
	return &csi.NodePublishVolumeResponse{}, nil
}

// NodeUnpublishVolume implements csi.NodeServer: the mounter flushes the
// volume and removes the link, never the data; a target already gone is
// success (kubelet retries, and cleans up after a deleted volume).
func (d *Driver) NodeUnpublishVolume(ctx context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	err := d.unmount(req.GetVolumeId(), arg{req.GetTargetPath(), "target path"}, "unpublish", "unpublished", "target", func() error {
		return d.m.Unmount(req.GetTargetPath())
	})
	if err != nil {
		return nil, err
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

// arg is one string a request must carry, and its name in the error when
// it does not.
type arg struct{ value, name string }

// required returns InvalidArgument naming the first of args that is
// empty, or nil: the checks every node call makes before it reads a
// volume, in the order CSI's sanity suite sends the gaps.
func required(args ...arg) error {
	for _, a := range args {
		if a.value == "" {
			return status.Error(codes.InvalidArgument, "no "+a.name)
		}
	}
	return nil
}

// checkCapability returns InvalidArgument when c cannot be served (see
// checkCapabilities), or when it is missing and needed; an optional
// capability (NodeExpandVolume's, ControllerExpandVolume's) may be nil.
func checkCapability(c *csi.VolumeCapability, needed bool) error {
	switch {
	case c == nil && needed:
		return status.Error(codes.InvalidArgument, "no volume capability")
	case c == nil:
		return nil
	}
	if why := checkCapabilities([]*csi.VolumeCapability{c}); why != "" {
		return status.Error(codes.InvalidArgument, why)
	}
	return nil
}

// unmount checks that the request names volume id and the path at, then
// runs undo under the volume's lock: NodeUnstageVolume and
// NodeUnpublishVolume, which differ only in what they unmount. verb names
// the call in the error, done in the log line, logKey the path in the log.
func (d *Driver) unmount(id string, at arg, verb, done, logKey string, undo func() error) error {
	if err := required(arg{id, "volume ID"}, at); err != nil {
		return err
	}
	defer d.lock(id)()
	if err := undo(); err != nil {
		return toStatus(err, "%s volume %s", verb, id)
	}
	d.log.V(2).Info(done, "volume", id, logKey, at.value)
	return nil
}

// mountedDisk returns the disk of volume id once path holds its volume
// (checkMounted; code is the error's when it does not).
func (d *Driver) mountedDisk(ctx context.Context, id, path string, code codes.Code) (Disk, error) {
	disk, err := d.disk(ctx, id)
	if err != nil {
		return Disk{}, err
	}
	return disk, d.checkMounted(ctx, disk, path, code)
}

// checkMounted returns an error with code unless path (a staging path or
// a publish link) holds the volume of disk. A path that holds no volume,
// or that the proxy refuses (relative, outside the kubelet's
// directories), holds not this volume either.
func (d *Driver) checkMounted(ctx context.Context, disk Disk, path string, code codes.Code) error {
	at, err := d.m.DiskNumberFromMount(ctx, path)
	if errors.Is(err, errdefs.ErrNotFound) || errors.Is(err, errdefs.ErrInvalidArgument) || errors.Is(err, errdefs.ErrPermissionDenied) {
		return status.Errorf(code, "volume %s is not mounted at %s: %v", disk.ID, path, err)
	} else if err != nil {
		return toStatus(err, "find the volume at %s", path)
	}
	want, err := d.findDisk(ctx, disk)
	if err != nil {
		return err
	}
	if at != want {
		return status.Errorf(code, "%s holds a volume of disk %d, not volume %s (disk %d)", path, at, disk.ID, want)
	}
	return nil
}

// NodeGetVolumeStats implements csi.NodeServer: the bytes of the volume at
// the path, from the proxy (statfs on Linux, the volume's size and free
// space on Windows).
func (d *Driver) NodeGetVolumeStats(ctx context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	if err := required(arg{req.GetVolumeId(), "volume ID"}, arg{req.GetVolumePath(), "volume path"}); err != nil {
		return nil, err
	}
	disk, err := d.mountedDisk(ctx, req.GetVolumeId(), req.GetVolumePath(), codes.NotFound)
	if err != nil {
		return nil, err
	}
	s, err := d.m.VolumeStats(ctx, req.GetVolumePath())
	if err != nil {
		return nil, toStatus(err, "stats of volume %s", disk.ID)
	}
	return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{{
		Unit: csi.VolumeUsage_BYTES, Total: s.Total, Used: s.Used, Available: s.Available,
	}}}, nil
}

// NodeExpandVolume implements csi.NodeServer: after the controller grew
// the disk, the mounter rescans and grows the partition and filesystem
// to fill it (online: XFS on Linux, NTFS on Windows; ext4 on Linux needs
// CAP_SYS_RESOURCE, see docs/linux.md).
func (d *Driver) NodeExpandVolume(ctx context.Context, req *csi.NodeExpandVolumeRequest) (*csi.NodeExpandVolumeResponse, error) {
	if err := required(arg{req.GetVolumeId(), "volume ID"}, arg{req.GetVolumePath(), "volume path"}); err != nil {
		return nil, err
	}
	if err := checkCapability(req.GetVolumeCapability(), false); err != nil {
		return nil, err
	}
	defer d.lock(req.GetVolumeId())()
	disk, err := d.mountedDisk(ctx, req.GetVolumeId(), req.GetVolumePath(), codes.NotFound)
	if err != nil {
		return nil, err
	}
	// What the filesystem reports afterwards: less than the disk by the
	// partition table and the filesystem's own metadata (an XFS log).
	n, err := d.m.ResizeToFill(ctx, req.GetVolumePath())
	if err != nil {
		return nil, toStatus(err, "expand volume %s", disk.ID)
	}
	d.log.V(2).Info("expanded", "volume", disk.ID, "bytes", n)
	return &csi.NodeExpandVolumeResponse{CapacityBytes: n}, nil
}
