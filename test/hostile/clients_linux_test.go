package hostile

import (
	"context"
	"testing"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	diskv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1alpha1"
	diskv1beta1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1beta1"
	diskv1beta2 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1beta2"
	diskv1beta3 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1beta3"
	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	filesystemv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1alpha1"
	filesystemv1beta1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1beta1"
	filesystemv1beta2 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1beta2"
	filesystemv2alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v2alpha1"
	iscsiv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/iscsi/v1alpha1"
	iscsiv1alpha2 "github.com/csi-node-proxy/csi-node-proxy/api/iscsi/v1alpha2"
	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
	smbv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1alpha1"
	smbv1beta1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1beta1"
	smbv1beta2 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1beta2"
	systemv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/system/v1alpha1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	volumev1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1alpha1"
	volumev1beta1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1beta1"
	volumev1beta2 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1beta2"
	volumev1beta3 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1beta3"
	volumev2alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v2alpha1"
)

// The generated client stubs of every served version, behind one shape per
// group so the table can send one input to every method that takes it.
// Responses are dropped: the suite judges the status code.

type ctx = context.Context

// e drops a response.
func e[T any](_ T, err error) error { return err }

// fsVersion is a filesystem group-version. rmdirContents is nil where the
// version lacks it; the old versions name CreateSymlink LinkPath and
// IsSymlink IsMountPoint.
type fsVersion struct {
	api                  string
	linkName, isLinkName string
	pathExists, mkdir    func(ctx, string) error
	isLink               func(ctx, string) error
	rmdir                func(ctx, string, bool) error
	rmdirContents        func(ctx, string) error
	link                 func(ctx, string, string) error
}

func fsVersions(t *testing.T, d *daemon) []fsVersion {
	a1 := filesystemv1alpha1.NewFilesystemClient(d.conn(t, "csi-proxy-filesystem-v1alpha1"))
	b1 := filesystemv1beta1.NewFilesystemClient(d.conn(t, "csi-proxy-filesystem-v1beta1"))
	b2 := filesystemv1beta2.NewFilesystemClient(d.conn(t, "csi-proxy-filesystem-v1beta2"))
	v1 := filesystemv1.NewFilesystemClient(d.conn(t, "csi-proxy-filesystem-v1"))
	v2 := filesystemv2alpha1.NewFilesystemClient(d.conn(t, "csi-proxy-filesystem-v2alpha1"))
	return []fsVersion{
		{
			api: "csi-proxy-filesystem-v1alpha1", linkName: "LinkPath", isLinkName: "IsMountPoint",
			pathExists: func(c ctx, p string) error {
				return e(a1.PathExists(c, &filesystemv1alpha1.PathExistsRequest{Path: p}))
			},
			mkdir: func(c ctx, p string) error { return e(a1.Mkdir(c, &filesystemv1alpha1.MkdirRequest{Path: p})) },
			isLink: func(c ctx, p string) error {
				return e(a1.IsMountPoint(c, &filesystemv1alpha1.IsMountPointRequest{Path: p}))
			},
			rmdir: func(c ctx, p string, f bool) error {
				return e(a1.Rmdir(c, &filesystemv1alpha1.RmdirRequest{Path: p, Force: f}))
			},
			link: func(c ctx, s, l string) error {
				return e(a1.LinkPath(c, &filesystemv1alpha1.LinkPathRequest{SourcePath: s, TargetPath: l}))
			},
		},
		{
			api: "csi-proxy-filesystem-v1beta1", linkName: "LinkPath", isLinkName: "IsMountPoint",
			pathExists: func(c ctx, p string) error { return e(b1.PathExists(c, &filesystemv1beta1.PathExistsRequest{Path: p})) },
			mkdir:      func(c ctx, p string) error { return e(b1.Mkdir(c, &filesystemv1beta1.MkdirRequest{Path: p})) },
			isLink: func(c ctx, p string) error {
				return e(b1.IsMountPoint(c, &filesystemv1beta1.IsMountPointRequest{Path: p}))
			},
			rmdir: func(c ctx, p string, f bool) error {
				return e(b1.Rmdir(c, &filesystemv1beta1.RmdirRequest{Path: p, Force: f}))
			},
			link: func(c ctx, s, l string) error {
				return e(b1.LinkPath(c, &filesystemv1beta1.LinkPathRequest{SourcePath: s, TargetPath: l}))
			},
		},
		{
			api: "csi-proxy-filesystem-v1beta2", linkName: "CreateSymlink", isLinkName: "IsSymlink",
			pathExists: func(c ctx, p string) error { return e(b2.PathExists(c, &filesystemv1beta2.PathExistsRequest{Path: p})) },
			mkdir:      func(c ctx, p string) error { return e(b2.Mkdir(c, &filesystemv1beta2.MkdirRequest{Path: p})) },
			isLink:     func(c ctx, p string) error { return e(b2.IsSymlink(c, &filesystemv1beta2.IsSymlinkRequest{Path: p})) },
			rmdir: func(c ctx, p string, f bool) error {
				return e(b2.Rmdir(c, &filesystemv1beta2.RmdirRequest{Path: p, Force: f}))
			},
			link: func(c ctx, s, l string) error {
				return e(b2.CreateSymlink(c, &filesystemv1beta2.CreateSymlinkRequest{SourcePath: s, TargetPath: l}))
			},
		},
		{
			api: "csi-proxy-filesystem-v1", linkName: "CreateSymlink", isLinkName: "IsSymlink",
			pathExists: func(c ctx, p string) error { return e(v1.PathExists(c, &filesystemv1.PathExistsRequest{Path: p})) },
			mkdir:      func(c ctx, p string) error { return e(v1.Mkdir(c, &filesystemv1.MkdirRequest{Path: p})) },
			isLink:     func(c ctx, p string) error { return e(v1.IsSymlink(c, &filesystemv1.IsSymlinkRequest{Path: p})) },
			rmdir: func(c ctx, p string, f bool) error {
				return e(v1.Rmdir(c, &filesystemv1.RmdirRequest{Path: p, Force: f}))
			},
			link: func(c ctx, s, l string) error {
				return e(v1.CreateSymlink(c, &filesystemv1.CreateSymlinkRequest{SourcePath: s, TargetPath: l}))
			},
		},
		{
			api: "csi-proxy-filesystem-v2alpha1", linkName: "CreateSymlink", isLinkName: "IsSymlink",
			pathExists: func(c ctx, p string) error {
				return e(v2.PathExists(c, &filesystemv2alpha1.PathExistsRequest{Path: p}))
			},
			mkdir:  func(c ctx, p string) error { return e(v2.Mkdir(c, &filesystemv2alpha1.MkdirRequest{Path: p})) },
			isLink: func(c ctx, p string) error { return e(v2.IsSymlink(c, &filesystemv2alpha1.IsSymlinkRequest{Path: p})) },
			rmdir: func(c ctx, p string, f bool) error {
				return e(v2.Rmdir(c, &filesystemv2alpha1.RmdirRequest{Path: p, Force: f}))
			},
			rmdirContents: func(c ctx, p string) error {
				return e(v2.RmdirContents(c, &filesystemv2alpha1.RmdirContentsRequest{Path: p}))
			},
			link: func(c ctx, s, l string) error {
				return e(v2.CreateSymlink(c, &filesystemv2alpha1.CreateSymlinkRequest{SourcePath: s, TargetPath: l}))
			},
		},
	}
}

// volVersion is a volume group-version. Methods a version lacks are nil;
// the versions before v1beta3 name disks by string IDs (listByID), the
// later ones by number (listByNumber). pathField names the mount target
// field (path before v1beta3), idPathField the field of idFromPath (mount
// before v1beta3).
type volVersion struct {
	api                                                        string
	mountName, unmountName, statsName, diskNumName, idPathName string
	pathField, idPathField                                     string
	mount, unmount                                             func(ctx, string, string) error
	isFormatted, format                                        func(ctx, string) error
	resize                                                     func(ctx, string, int64) error
	stats, diskNum, flush                                      func(ctx, string) error
	idFromPath, closest                                        func(ctx, string) error
	listByNumber                                               func(ctx, uint32, uint32) error
	listByID                                                   func(ctx, string) error
}

func volVersions(t *testing.T, d *daemon) []volVersion {
	a1 := volumev1alpha1.NewVolumeClient(d.conn(t, "csi-proxy-volume-v1alpha1"))
	b1 := volumev1beta1.NewVolumeClient(d.conn(t, "csi-proxy-volume-v1beta1"))
	b2 := volumev1beta2.NewVolumeClient(d.conn(t, "csi-proxy-volume-v1beta2"))
	b3 := volumev1beta3.NewVolumeClient(d.conn(t, "csi-proxy-volume-v1beta3"))
	v1 := volumev1.NewVolumeClient(d.conn(t, "csi-proxy-volume-v1"))
	v2 := volumev2alpha1.NewVolumeClient(d.conn(t, "csi-proxy-volume-v2alpha1"))
	old := func(api string) volVersion {
		return volVersion{api: api, mountName: "MountVolume", unmountName: "DismountVolume", statsName: "VolumeStats",
			diskNumName: "GetVolumeDiskNumber", idPathName: "GetVolumeIDFromMount", pathField: "path", idPathField: "mount"}
	}
	cur := func(api string) volVersion {
		return volVersion{api: api, mountName: "MountVolume", unmountName: "UnmountVolume", statsName: "GetVolumeStats",
			diskNumName: "GetDiskNumberFromVolumeID", idPathName: "GetVolumeIDFromTargetPath", pathField: "target_path", idPathField: "target_path"}
	}

	va1 := old("csi-proxy-volume-v1alpha1")
	va1.mount = func(c ctx, id, p string) error {
		return e(a1.MountVolume(c, &volumev1alpha1.MountVolumeRequest{VolumeId: id, Path: p}))
	}
	va1.unmount = func(c ctx, id, p string) error {
		return e(a1.DismountVolume(c, &volumev1alpha1.DismountVolumeRequest{VolumeId: id, Path: p}))
	}
	va1.isFormatted = func(c ctx, id string) error {
		return e(a1.IsVolumeFormatted(c, &volumev1alpha1.IsVolumeFormattedRequest{VolumeId: id}))
	}
	va1.format = func(c ctx, id string) error {
		return e(a1.FormatVolume(c, &volumev1alpha1.FormatVolumeRequest{VolumeId: id}))
	}
	va1.resize = func(c ctx, id string, n int64) error {
		return e(a1.ResizeVolume(c, &volumev1alpha1.ResizeVolumeRequest{VolumeId: id, Size: n}))
	}
	va1.listByID = func(c ctx, id string) error {
		return e(a1.ListVolumesOnDisk(c, &volumev1alpha1.ListVolumesOnDiskRequest{DiskId: id}))
	}

	vb1 := old("csi-proxy-volume-v1beta1")
	vb1.mount = func(c ctx, id, p string) error {
		return e(b1.MountVolume(c, &volumev1beta1.MountVolumeRequest{VolumeId: id, Path: p}))
	}
	vb1.unmount = func(c ctx, id, p string) error {
		return e(b1.DismountVolume(c, &volumev1beta1.DismountVolumeRequest{VolumeId: id, Path: p}))
	}
	vb1.isFormatted = func(c ctx, id string) error {
		return e(b1.IsVolumeFormatted(c, &volumev1beta1.IsVolumeFormattedRequest{VolumeId: id}))
	}
	vb1.format = func(c ctx, id string) error {
		return e(b1.FormatVolume(c, &volumev1beta1.FormatVolumeRequest{VolumeId: id}))
	}
	vb1.resize = func(c ctx, id string, n int64) error {
		return e(b1.ResizeVolume(c, &volumev1beta1.ResizeVolumeRequest{VolumeId: id, Size: n}))
	}
	vb1.stats = func(c ctx, id string) error {
		return e(b1.VolumeStats(c, &volumev1beta1.VolumeStatsRequest{VolumeId: id}))
	}
	vb1.diskNum = func(c ctx, id string) error {
		return e(b1.GetVolumeDiskNumber(c, &volumev1beta1.VolumeDiskNumberRequest{VolumeId: id}))
	}
	vb1.idFromPath = func(c ctx, p string) error {
		return e(b1.GetVolumeIDFromMount(c, &volumev1beta1.VolumeIDFromMountRequest{Mount: p}))
	}
	vb1.listByID = func(c ctx, id string) error {
		return e(b1.ListVolumesOnDisk(c, &volumev1beta1.ListVolumesOnDiskRequest{DiskId: id}))
	}

	vb2 := old("csi-proxy-volume-v1beta2")
	vb2.mount = func(c ctx, id, p string) error {
		return e(b2.MountVolume(c, &volumev1beta2.MountVolumeRequest{VolumeId: id, Path: p}))
	}
	vb2.unmount = func(c ctx, id, p string) error {
		return e(b2.DismountVolume(c, &volumev1beta2.DismountVolumeRequest{VolumeId: id, Path: p}))
	}
	vb2.isFormatted = func(c ctx, id string) error {
		return e(b2.IsVolumeFormatted(c, &volumev1beta2.IsVolumeFormattedRequest{VolumeId: id}))
	}
	vb2.format = func(c ctx, id string) error {
		return e(b2.FormatVolume(c, &volumev1beta2.FormatVolumeRequest{VolumeId: id}))
	}
	vb2.resize = func(c ctx, id string, n int64) error {
		return e(b2.ResizeVolume(c, &volumev1beta2.ResizeVolumeRequest{VolumeId: id, Size: n}))
	}
	vb2.stats = func(c ctx, id string) error {
		return e(b2.VolumeStats(c, &volumev1beta2.VolumeStatsRequest{VolumeId: id}))
	}
	vb2.diskNum = func(c ctx, id string) error {
		return e(b2.GetVolumeDiskNumber(c, &volumev1beta2.VolumeDiskNumberRequest{VolumeId: id}))
	}
	vb2.idFromPath = func(c ctx, p string) error {
		return e(b2.GetVolumeIDFromMount(c, &volumev1beta2.VolumeIDFromMountRequest{Mount: p}))
	}
	vb2.flush = func(c ctx, id string) error {
		return e(b2.WriteVolumeCache(c, &volumev1beta2.WriteVolumeCacheRequest{VolumeId: id}))
	}
	vb2.listByID = func(c ctx, id string) error {
		return e(b2.ListVolumesOnDisk(c, &volumev1beta2.ListVolumesOnDiskRequest{DiskId: id}))
	}

	vb3 := cur("csi-proxy-volume-v1beta3")
	vb3.mount = func(c ctx, id, p string) error {
		return e(b3.MountVolume(c, &volumev1beta3.MountVolumeRequest{VolumeId: id, TargetPath: p}))
	}
	vb3.unmount = func(c ctx, id, p string) error {
		return e(b3.UnmountVolume(c, &volumev1beta3.UnmountVolumeRequest{VolumeId: id, TargetPath: p}))
	}
	vb3.isFormatted = func(c ctx, id string) error {
		return e(b3.IsVolumeFormatted(c, &volumev1beta3.IsVolumeFormattedRequest{VolumeId: id}))
	}
	vb3.format = func(c ctx, id string) error {
		return e(b3.FormatVolume(c, &volumev1beta3.FormatVolumeRequest{VolumeId: id}))
	}
	vb3.resize = func(c ctx, id string, n int64) error {
		return e(b3.ResizeVolume(c, &volumev1beta3.ResizeVolumeRequest{VolumeId: id, SizeBytes: n}))
	}
	vb3.stats = func(c ctx, id string) error {
		return e(b3.GetVolumeStats(c, &volumev1beta3.GetVolumeStatsRequest{VolumeId: id}))
	}
	vb3.diskNum = func(c ctx, id string) error {
		return e(b3.GetDiskNumberFromVolumeID(c, &volumev1beta3.GetDiskNumberFromVolumeIDRequest{VolumeId: id}))
	}
	vb3.idFromPath = func(c ctx, p string) error {
		return e(b3.GetVolumeIDFromTargetPath(c, &volumev1beta3.GetVolumeIDFromTargetPathRequest{TargetPath: p}))
	}
	vb3.flush = func(c ctx, id string) error {
		return e(b3.WriteVolumeCache(c, &volumev1beta3.WriteVolumeCacheRequest{VolumeId: id}))
	}
	vb3.listByNumber = func(c ctx, n, part uint32) error {
		return e(b3.ListVolumesOnDisk(c, &volumev1beta3.ListVolumesOnDiskRequest{DiskNumber: n, PartitionNumber: part}))
	}

	vv1 := cur("csi-proxy-volume-v1")
	vv1.mount = func(c ctx, id, p string) error {
		return e(v1.MountVolume(c, &volumev1.MountVolumeRequest{VolumeId: id, TargetPath: p}))
	}
	vv1.unmount = func(c ctx, id, p string) error {
		return e(v1.UnmountVolume(c, &volumev1.UnmountVolumeRequest{VolumeId: id, TargetPath: p}))
	}
	vv1.isFormatted = func(c ctx, id string) error {
		return e(v1.IsVolumeFormatted(c, &volumev1.IsVolumeFormattedRequest{VolumeId: id}))
	}
	vv1.format = func(c ctx, id string) error {
		return e(v1.FormatVolume(c, &volumev1.FormatVolumeRequest{VolumeId: id}))
	}
	vv1.resize = func(c ctx, id string, n int64) error {
		return e(v1.ResizeVolume(c, &volumev1.ResizeVolumeRequest{VolumeId: id, SizeBytes: n}))
	}
	vv1.stats = func(c ctx, id string) error {
		return e(v1.GetVolumeStats(c, &volumev1.GetVolumeStatsRequest{VolumeId: id}))
	}
	vv1.diskNum = func(c ctx, id string) error {
		return e(v1.GetDiskNumberFromVolumeID(c, &volumev1.GetDiskNumberFromVolumeIDRequest{VolumeId: id}))
	}
	vv1.idFromPath = func(c ctx, p string) error {
		return e(v1.GetVolumeIDFromTargetPath(c, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: p}))
	}
	vv1.flush = func(c ctx, id string) error {
		return e(v1.WriteVolumeCache(c, &volumev1.WriteVolumeCacheRequest{VolumeId: id}))
	}
	vv1.listByNumber = func(c ctx, n, part uint32) error {
		return e(v1.ListVolumesOnDisk(c, &volumev1.ListVolumesOnDiskRequest{DiskNumber: n, PartitionNumber: part}))
	}

	vv2 := cur("csi-proxy-volume-v2alpha1")
	vv2.mount = func(c ctx, id, p string) error {
		return e(v2.MountVolume(c, &volumev2alpha1.MountVolumeRequest{VolumeId: id, TargetPath: p}))
	}
	vv2.unmount = func(c ctx, id, p string) error {
		return e(v2.UnmountVolume(c, &volumev2alpha1.UnmountVolumeRequest{VolumeId: id, TargetPath: p}))
	}
	vv2.isFormatted = func(c ctx, id string) error {
		return e(v2.IsVolumeFormatted(c, &volumev2alpha1.IsVolumeFormattedRequest{VolumeId: id}))
	}
	vv2.format = func(c ctx, id string) error {
		return e(v2.FormatVolume(c, &volumev2alpha1.FormatVolumeRequest{VolumeId: id}))
	}
	vv2.resize = func(c ctx, id string, n int64) error {
		return e(v2.ResizeVolume(c, &volumev2alpha1.ResizeVolumeRequest{VolumeId: id, SizeBytes: n}))
	}
	vv2.stats = func(c ctx, id string) error {
		return e(v2.GetVolumeStats(c, &volumev2alpha1.GetVolumeStatsRequest{VolumeId: id}))
	}
	vv2.diskNum = func(c ctx, id string) error {
		return e(v2.GetDiskNumberFromVolumeID(c, &volumev2alpha1.GetDiskNumberFromVolumeIDRequest{VolumeId: id}))
	}
	vv2.idFromPath = func(c ctx, p string) error {
		return e(v2.GetVolumeIDFromTargetPath(c, &volumev2alpha1.GetVolumeIDFromTargetPathRequest{TargetPath: p}))
	}
	vv2.closest = func(c ctx, p string) error {
		return e(v2.GetClosestVolumeIDFromTargetPath(c, &volumev2alpha1.GetClosestVolumeIDFromTargetPathRequest{TargetPath: p}))
	}
	vv2.flush = func(c ctx, id string) error {
		return e(v2.WriteVolumeCache(c, &volumev2alpha1.WriteVolumeCacheRequest{VolumeId: id}))
	}
	vv2.listByNumber = func(c ctx, n, part uint32) error {
		return e(v2.ListVolumesOnDisk(c, &volumev2alpha1.ListVolumesOnDiskRequest{DiskNumber: n, PartitionNumber: part}))
	}
	return []volVersion{va1, vb1, vb2, vb3, vv1, vv2}
}

// diskVersion is a disk group-version: by number (v1beta3, v1) or by
// string disk ID (before v1beta3); methods a version lacks are nil.
type diskVersion struct {
	api                                      string
	statsName, getStateName, setStateName    string
	partition, stats, getState               func(ctx, uint32) error
	setState                                 func(ctx, uint32, bool) error
	partitionID, statsID, getStateID, byName func(ctx, string) error
	setStateID                               func(ctx, string, bool) error
}

func diskVersions(t *testing.T, d *daemon) []diskVersion {
	a1 := diskv1alpha1.NewDiskClient(d.conn(t, "csi-proxy-disk-v1alpha1"))
	b1 := diskv1beta1.NewDiskClient(d.conn(t, "csi-proxy-disk-v1beta1"))
	b2 := diskv1beta2.NewDiskClient(d.conn(t, "csi-proxy-disk-v1beta2"))
	b3 := diskv1beta3.NewDiskClient(d.conn(t, "csi-proxy-disk-v1beta3"))
	v1 := diskv1.NewDiskClient(d.conn(t, "csi-proxy-disk-v1"))
	return []diskVersion{
		{
			api: "csi-proxy-disk-v1alpha1",
			partitionID: func(c ctx, id string) error {
				return e(a1.PartitionDisk(c, &diskv1alpha1.PartitionDiskRequest{DiskID: id}))
			},
			byName: func(c ctx, n string) error {
				return e(a1.GetDiskNumberByName(c, &diskv1alpha1.GetDiskNumberByNameRequest{DiskName: n}))
			},
		},
		{
			api: "csi-proxy-disk-v1beta1", statsName: "DiskStats",
			partitionID: func(c ctx, id string) error {
				return e(b1.PartitionDisk(c, &diskv1beta1.PartitionDiskRequest{DiskID: id}))
			},
			statsID: func(c ctx, id string) error { return e(b1.DiskStats(c, &diskv1beta1.DiskStatsRequest{DiskID: id})) },
		},
		{
			api: "csi-proxy-disk-v1beta2", statsName: "DiskStats", getStateName: "GetAttachState", setStateName: "SetAttachState",
			partitionID: func(c ctx, id string) error {
				return e(b2.PartitionDisk(c, &diskv1beta2.PartitionDiskRequest{DiskID: id}))
			},
			statsID: func(c ctx, id string) error { return e(b2.DiskStats(c, &diskv1beta2.DiskStatsRequest{DiskID: id})) },
			getStateID: func(c ctx, id string) error {
				return e(b2.GetAttachState(c, &diskv1beta2.GetAttachStateRequest{DiskID: id}))
			},
			setStateID: func(c ctx, id string, on bool) error {
				return e(b2.SetAttachState(c, &diskv1beta2.SetAttachStateRequest{DiskID: id, IsOnline: on}))
			},
		},
		{
			api: "csi-proxy-disk-v1beta3", statsName: "GetDiskStats", getStateName: "GetDiskState", setStateName: "SetDiskState",
			partition: func(c ctx, n uint32) error {
				return e(b3.PartitionDisk(c, &diskv1beta3.PartitionDiskRequest{DiskNumber: n}))
			},
			stats: func(c ctx, n uint32) error {
				return e(b3.GetDiskStats(c, &diskv1beta3.GetDiskStatsRequest{DiskNumber: n}))
			},
			getState: func(c ctx, n uint32) error {
				return e(b3.GetDiskState(c, &diskv1beta3.GetDiskStateRequest{DiskNumber: n}))
			},
			setState: func(c ctx, n uint32, on bool) error {
				return e(b3.SetDiskState(c, &diskv1beta3.SetDiskStateRequest{DiskNumber: n, IsOnline: on}))
			},
		},
		{
			api: "csi-proxy-disk-v1", statsName: "GetDiskStats", getStateName: "GetDiskState", setStateName: "SetDiskState",
			partition: func(c ctx, n uint32) error {
				return e(v1.PartitionDisk(c, &diskv1.PartitionDiskRequest{DiskNumber: n}))
			},
			stats:    func(c ctx, n uint32) error { return e(v1.GetDiskStats(c, &diskv1.GetDiskStatsRequest{DiskNumber: n})) },
			getState: func(c ctx, n uint32) error { return e(v1.GetDiskState(c, &diskv1.GetDiskStateRequest{DiskNumber: n})) },
			setState: func(c ctx, n uint32, on bool) error {
				return e(v1.SetDiskState(c, &diskv1.SetDiskStateRequest{DiskNumber: n, IsOnline: on}))
			},
		},
	}
}

// smbVersion is an SMB group-version.
type smbVersion struct {
	api        string
	newMapping func(c ctx, remote, local, user, password string) error
	remove     func(c ctx, remote string) error
}

func smbVersions(t *testing.T, d *daemon) []smbVersion {
	a1 := smbv1alpha1.NewSmbClient(d.conn(t, "csi-proxy-smb-v1alpha1"))
	b1 := smbv1beta1.NewSmbClient(d.conn(t, "csi-proxy-smb-v1beta1"))
	b2 := smbv1beta2.NewSmbClient(d.conn(t, "csi-proxy-smb-v1beta2"))
	v1 := smbv1.NewSmbClient(d.conn(t, "csi-proxy-smb-v1"))
	return []smbVersion{
		{"csi-proxy-smb-v1alpha1",
			func(c ctx, r, l, u, p string) error {
				return e(a1.NewSmbGlobalMapping(c, &smbv1alpha1.NewSmbGlobalMappingRequest{RemotePath: r, LocalPath: l, Username: u, Password: p}))
			},
			func(c ctx, r string) error {
				return e(a1.RemoveSmbGlobalMapping(c, &smbv1alpha1.RemoveSmbGlobalMappingRequest{RemotePath: r}))
			}},
		{"csi-proxy-smb-v1beta1",
			func(c ctx, r, l, u, p string) error {
				return e(b1.NewSmbGlobalMapping(c, &smbv1beta1.NewSmbGlobalMappingRequest{RemotePath: r, LocalPath: l, Username: u, Password: p}))
			},
			func(c ctx, r string) error {
				return e(b1.RemoveSmbGlobalMapping(c, &smbv1beta1.RemoveSmbGlobalMappingRequest{RemotePath: r}))
			}},
		{"csi-proxy-smb-v1beta2",
			func(c ctx, r, l, u, p string) error {
				return e(b2.NewSmbGlobalMapping(c, &smbv1beta2.NewSmbGlobalMappingRequest{RemotePath: r, LocalPath: l, Username: u, Password: p}))
			},
			func(c ctx, r string) error {
				return e(b2.RemoveSmbGlobalMapping(c, &smbv1beta2.RemoveSmbGlobalMappingRequest{RemotePath: r}))
			}},
		{"csi-proxy-smb-v1",
			func(c ctx, r, l, u, p string) error {
				return e(v1.NewSmbGlobalMapping(c, &smbv1.NewSmbGlobalMappingRequest{RemotePath: r, LocalPath: l, Username: u, Password: p}))
			},
			func(c ctx, r string) error {
				return e(v1.RemoveSmbGlobalMapping(c, &smbv1.RemoveSmbGlobalMappingRequest{RemotePath: r}))
			}},
	}
}

// iscsiVersion is an iSCSI group-version; setMutual is nil in v1alpha1.
type iscsiVersion struct {
	api                         string
	add, discover, removePortal func(ctx, *portal) error
	connect                     func(c ctx, p *portal, iqn string, auth int32, user, secret string) error
	disconnect, disks           func(ctx, *portal, string) error
	setMutual                   func(ctx, string) error
}

func iscsiVersions(t *testing.T, d *daemon) []iscsiVersion {
	a1 := iscsiv1alpha1.NewIscsiClient(d.conn(t, "csi-proxy-iscsi-v1alpha1"))
	a2 := iscsiv1alpha2.NewIscsiClient(d.conn(t, "csi-proxy-iscsi-v1alpha2"))
	p1 := func(p *portal) *iscsiv1alpha1.TargetPortal {
		if p == nil {
			return nil
		}
		return &iscsiv1alpha1.TargetPortal{TargetAddress: p.addr, TargetPort: p.port}
	}
	p2 := func(p *portal) *iscsiv1alpha2.TargetPortal {
		if p == nil {
			return nil
		}
		return &iscsiv1alpha2.TargetPortal{TargetAddress: p.addr, TargetPort: p.port}
	}
	return []iscsiVersion{
		{
			api: "csi-proxy-iscsi-v1alpha1",
			add: func(c ctx, p *portal) error {
				return e(a1.AddTargetPortal(c, &iscsiv1alpha1.AddTargetPortalRequest{TargetPortal: p1(p)}))
			},
			discover: func(c ctx, p *portal) error {
				return e(a1.DiscoverTargetPortal(c, &iscsiv1alpha1.DiscoverTargetPortalRequest{TargetPortal: p1(p)}))
			},
			removePortal: func(c ctx, p *portal) error {
				return e(a1.RemoveTargetPortal(c, &iscsiv1alpha1.RemoveTargetPortalRequest{TargetPortal: p1(p)}))
			},
			connect: func(c ctx, p *portal, iqn string, auth int32, user, secret string) error {
				return e(a1.ConnectTarget(c, &iscsiv1alpha1.ConnectTargetRequest{TargetPortal: p1(p), Iqn: iqn,
					AuthType: iscsiv1alpha1.AuthenticationType(auth), ChapUsername: user, ChapSecret: secret}))
			},
			disconnect: func(c ctx, p *portal, iqn string) error {
				return e(a1.DisconnectTarget(c, &iscsiv1alpha1.DisconnectTargetRequest{TargetPortal: p1(p), Iqn: iqn}))
			},
			disks: func(c ctx, p *portal, iqn string) error {
				return e(a1.GetTargetDisks(c, &iscsiv1alpha1.GetTargetDisksRequest{TargetPortal: p1(p), Iqn: iqn}))
			},
		},
		{
			api: "csi-proxy-iscsi-v1alpha2",
			add: func(c ctx, p *portal) error {
				return e(a2.AddTargetPortal(c, &iscsiv1alpha2.AddTargetPortalRequest{TargetPortal: p2(p)}))
			},
			discover: func(c ctx, p *portal) error {
				return e(a2.DiscoverTargetPortal(c, &iscsiv1alpha2.DiscoverTargetPortalRequest{TargetPortal: p2(p)}))
			},
			removePortal: func(c ctx, p *portal) error {
				return e(a2.RemoveTargetPortal(c, &iscsiv1alpha2.RemoveTargetPortalRequest{TargetPortal: p2(p)}))
			},
			connect: func(c ctx, p *portal, iqn string, auth int32, user, secret string) error {
				return e(a2.ConnectTarget(c, &iscsiv1alpha2.ConnectTargetRequest{TargetPortal: p2(p), Iqn: iqn,
					AuthType: iscsiv1alpha2.AuthenticationType(auth), ChapUsername: user, ChapSecret: secret}))
			},
			disconnect: func(c ctx, p *portal, iqn string) error {
				return e(a2.DisconnectTarget(c, &iscsiv1alpha2.DisconnectTargetRequest{TargetPortal: p2(p), Iqn: iqn}))
			},
			disks: func(c ctx, p *portal, iqn string) error {
				return e(a2.GetTargetDisks(c, &iscsiv1alpha2.GetTargetDisksRequest{TargetPortal: p2(p), Iqn: iqn}))
			},
			setMutual: func(c ctx, s string) error {
				return e(a2.SetMutualChapSecret(c, &iscsiv1alpha2.SetMutualChapSecretRequest{MutualChapSecret: s}))
			},
		},
	}
}

// systemVersion is the system group's one version.
type systemVersion struct {
	api        string
	start, get func(ctx, string) error
	stop       func(ctx, string, bool) error
}

func systemVersions(t *testing.T, d *daemon) []systemVersion {
	c1 := systemv1alpha1.NewSystemClient(d.conn(t, "csi-proxy-system-v1alpha1"))
	return []systemVersion{{
		api: "csi-proxy-system-v1alpha1",
		start: func(c ctx, n string) error {
			return e(c1.StartService(c, &systemv1alpha1.StartServiceRequest{Name: n}))
		},
		get: func(c ctx, n string) error { return e(c1.GetService(c, &systemv1alpha1.GetServiceRequest{Name: n})) },
		stop: func(c ctx, n string, f bool) error {
			return e(c1.StopService(c, &systemv1alpha1.StopServiceRequest{Name: n, Force: f}))
		},
	}}
}
