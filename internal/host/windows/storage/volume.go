package storage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// volumeHost is the volume group backend. Volume IDs are volume GUID
// paths, \\?\Volume{GUID}\, which for the basic volumes CSI drivers use
// equal upstream's MSFT_Volume.UniqueId; paths are cleaned drive-letter
// paths (the Service checked both).
type volumeHost struct{ b *Backend }

// VolumeMounts lists every path where volume id is mounted, anywhere on
// the node: its drive letter root and every mounted folder, as
// GetVolumePathNamesForVolumeNameW names them (with a trailing
// backslash). It is what the call gate asks before a policy's
// allowReformat lets a formatted volume be erased
// (objecthost.VolumeMounter), answered through the backend's seam so
// that the reformat decision runs on the storage model too; on Windows it
// is the same Win32 call the gate made without it. An unknown volume is
// errdefs.ErrNotFound.
func (v volumeHost) VolumeMounts(ctx context.Context, id string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	paths, err := v.b.sys.volumePathNames(id)
	switch {
	case isErrno(err, errFileNotFound, errInvalidName):
		return nil, errdefs.Errorf(errdefs.ErrNotFound, "no volume %s", id)
	case err != nil:
		return nil, osError("paths of volume "+id, err)
	}
	return paths, nil
}

// maxLinkHops bounds how many links VolumeAt follows, so a link cycle
// ends in an error instead of a hang.
const maxLinkHops = 32

// maxClosestSteps is upstream's bound for GetClosestVolumeIDFromTargetPath.
const maxClosestSteps = 256

// ListVolumesOnDisk implements volume.Host with Win32 only: every volume
// from FindFirstVolume/FindNextVolume whose IOCTL_STORAGE_GET_DEVICE_NUMBER
// names the disk (and partition, unless partition is 0). Volumes that
// cannot be opened (a card reader without media) belong to no disk the
// caller can name and are skipped. A volume that does not answer
// GET_DEVICE_NUMBER (not on a basic disk) is matched through
// IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, for partition 0 only. The result
// is in partition order, which is the order upstream's MSFT_Partition
// enumeration gives (partitions are numbered by offset).
//
// A missing disk is errdefs.ErrNotFound, an offline one
// errdefs.ErrFailedPrecondition (its volumes are gone while it is
// offline), a partition number the disk lacks errdefs.ErrNotFound.
func (v volumeHost) ListVolumesOnDisk(ctx context.Context, n, part uint32) ([]string, error) {
	b := v.b
	err := b.onDisk(n, modeQuery, func(h handle) error {
		attrs, err := b.diskAttributes(h, n)
		if err != nil {
			return err
		}
		if attrs&diskAttributeOffline != 0 {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "disk %d is offline", n)
		}
		if part == 0 {
			return nil
		}
		l, err := b.driveLayout(h, n)
		if err != nil {
			return err
		}
		if !l.hasPartition(part) {
			return errdefs.Errorf(errdefs.ErrNotFound, "disk %d has no partition %d", n, part)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	names, err := b.sys.volumes()
	if err != nil {
		return nil, osError("enumerate volumes", err)
	}
	type found struct {
		id   string
		part uint32
	}
	var hits []found
	for _, id := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, err := b.sys.open(volumeDevice(id), modeQuery)
		if err != nil {
			continue
		}
		func() {
			defer b.closeHandle(h)
			if dn, err := b.deviceNumber(h, id); err == nil {
				if dn.DeviceType == fileDeviceDisk && dn.DeviceNumber == n && (part == 0 || dn.PartitionNumber == part) {
					hits = append(hits, found{id, dn.PartitionNumber})
				}
				return
			}
			if part != 0 {
				return
			}
			ext, err := b.diskExtents(h, id)
			if err != nil {
				return
			}
			for _, e := range ext {
				if e.DiskNumber == n {
					hits = append(hits, found{id, math.MaxUint32})
					return
				}
			}
		}()
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].part < hits[j].part })
	ids := make([]string, 0, len(hits))
	for _, f := range hits {
		ids = append(ids, f.id)
	}
	return ids, nil
}

// MountVolume implements volume.Host with SetVolumeMountPoint, which is
// what upstream does. The target must be an empty directory; like the
// simulated host, a missing target whose parent exists is created first.
// A target that is a file is errdefs.ErrFailedPrecondition. When Windows
// refuses because the folder is not empty or already a mount point
// (ERROR_DIR_NOT_EMPTY), the folder is inspected: the same volume there is
// success (kubelet retries NodeStage), anything else
// errdefs.ErrFailedPrecondition ("access path already in use").
func (v volumeHost) MountVolume(ctx context.Context, volumeID, target string) error {
	b := v.b
	attrs, err := b.sys.attributes(win32Path(target))
	switch {
	case isGone(err):
		if err := b.sys.mkdir(win32Path(target)); err != nil {
			if isGone(err) {
				return errdefs.Errorf(errdefs.ErrNotFound, "cannot create the mount point %q: its parent directory does not exist", target)
			}
			return osError("create mount point "+target, err)
		}
	case err != nil:
		return osError("inspect mount point "+target, err)
	case attrs&fileAttributeDirectory == 0:
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "the access path %q is a file, not an empty directory", target)
	}
	err = b.sys.setVolumeMountPoint(mountPointArg(target), volumeRoot(volumeID))
	switch {
	case err == nil:
		return nil
	case isErrno(err, errDirNotEmpty):
		cur, verr := v.VolumeAt(ctx, target)
		if verr == nil && strings.EqualFold(cur, volumeID) {
			return nil
		}
		if verr == nil {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "the requested access path %q is already in use by volume %s", target, cur)
		}
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "the access path %q is not an empty directory", target)
	case isGone(err):
		return errdefs.Errorf(errdefs.ErrNotFound, "volume %s does not exist", volumeID)
	case isErrno(err, errDirectory, errInvalidParameter, errNotAReparsePoint):
		return &hostError{op: fmt.Sprintf("SetVolumeMountPoint(%q, %s)", target, volumeID), err: err, kind: errdefs.ErrFailedPrecondition}
	}
	return osError(fmt.Sprintf("SetVolumeMountPoint(%q, %s)", target, volumeID), err)
}

// UnmountVolume implements volume.Host: flush the volume
// (FlushFileBuffers, where upstream calls MSFT_Volume.Flush), then
// DeleteVolumeMountPoint, which leaves the directory in place. A volume
// that no longer exists (its disk was detached) has nothing to flush; its
// dangling mount point is still removed, so drivers can clean up.
//
// A flush refused for want of write access (ERROR_WRITE_PROTECT or
// ERROR_ACCESS_DENIED, on the open or on the flush) does not stop the
// unmount either: a read-only or write-protected volume (gcp-pd
// ReadOnlyMany, disks left read-only by csi-proxy#437) has nothing to
// flush, and failing here made NodeUnstage loop forever. Removing a
// mount point does not dismount the volume, so whatever a refused flush
// left in the cache is still written by the cache manager. The skipped
// flush is reported through Warnf. Any other flush failure (an I/O error)
// fails the unmount and leaves the mount point for the retry.
func (v volumeHost) UnmountVolume(ctx context.Context, volumeID, target string) error {
	if err := v.FlushVolume(ctx, volumeID); err != nil {
		switch {
		case errors.Is(err, errdefs.ErrNotFound):
		case isErrno(err, errWriteProtect, errAccessDenied):
			v.b.warnf("UnmountVolume: volume %s was not flushed before its mount point %q was removed: %v", volumeID, target, err)
		default:
			return err
		}
	}
	err := v.b.sys.deleteVolumeMountPoint(mountPointArg(target))
	switch {
	case err == nil:
		return nil
	case isErrno(err, errNotAReparsePoint) || isGone(err):
		return errdefs.Errorf(errdefs.ErrNotFound, "%q is not a mounted folder", target)
	}
	return osError(fmt.Sprintf("DeleteVolumeMountPoint(%q)", target), err)
}

// IsVolumeFormatted implements volume.Host with GetVolumeInformation: a
// volume with a recognised file system is formatted; a RAW volume fails
// with ERROR_UNRECOGNIZED_VOLUME (fact sheet §2.1), which reads as
// unformatted.
//
// Any other failure of a volume that exists is decided the way upstream
// decides every volume, by the storage provider's
// MSFT_Volume.FileSystemType (0, Unknown, is RAW): a volume still
// arriving after CreatePartition fails GetVolumeInformation with other
// codes (ERROR_NOT_READY while it mounts, ERROR_UNRECOGNIZED_MEDIA, …;
// which ones exactly is unconfirmed, the real-node kit records them), and
// reading those as errors made NodeStage fail where upstream formats.
// Errors that mean the volume is missing stay errors (NotFound): a volume
// neither Win32 nor the provider knows is never "unformatted", which
// would lead to a format.
func (v volumeHost) IsVolumeFormatted(ctx context.Context, volumeID string) (bool, error) {
	if err := v.b.onVolume(volumeID, modeQuery, func(handle) error { return nil }); err != nil {
		return false, err
	}
	fs, err := v.b.sys.fileSystemName(volumeRoot(volumeID))
	switch {
	case err == nil:
		return fs != "" && !strings.EqualFold(fs, "RAW"), nil
	case isErrno(err, errUnrecognizedVolume):
		return false, nil
	case isGone(err):
		return false, errdefs.Errorf(errdefs.ErrNotFound, "volume %s does not exist (GetVolumeInformation: %v)", volumeID, err)
	}
	fsType, qerr := v.fileSystemType(ctx, volumeID)
	if qerr != nil {
		return false, fmt.Errorf("GetVolumeInformation(%s) failed (%w), and so did asking the storage provider: %w", volumeID, osError("GetVolumeInformation", err), qerr)
	}
	return fsType != 0, nil
}

// fileSystemType reads MSFT_Volume.FileSystemType, looking the volume up
// as volumeCall does (UniqueId, then Path). No instance is NotFound.
func (v volumeHost) fileSystemType(ctx context.Context, volumeID string) (uint16, error) {
	rows, err := v.b.storageQuery(ctx, wmi.Query(classVolume).Select("FileSystemType").Where("UniqueId", volumeID))
	if err == nil && len(rows) == 0 {
		rows, err = v.b.sys.query(ctx, wmi.Query(classVolume).Select("FileSystemType").Where("Path", volumeID))
	}
	switch {
	case err != nil:
		return 0, err
	case len(rows) != 1:
		return 0, errdefs.Errorf(errdefs.ErrNotFound, "%d MSFT_Volume instances for volume %s, want 1", len(rows), volumeID)
	}
	return rows[0].Uint16("FileSystemType")
}

// volumeCall runs a method on the MSFT_Volume of a volume ID. It matches
// UniqueId first, as upstream does (WQL compares strings without case);
// that UniqueId equals the volume GUID path is confirmed only for basic
// volumes (fact sheet §C.9), so when no instance has it the volume is
// looked up by Path, which the provider documents as the volume GUID path.
func (v volumeHost) volumeCall(ctx context.Context, volumeID, method string, in ...wmi.Param) (wmi.Props, error) {
	out, err := v.b.storageCall(ctx, wmi.Query(classVolume).Where("UniqueId", volumeID), method, in...)
	var me *wmi.MethodError
	if err == nil || !errors.Is(err, errdefs.ErrNotFound) || errors.As(err, &me) {
		return out, err
	}
	return v.b.sys.call(ctx, wmi.Query(classVolume).Where("Path", volumeID), method, in...)
}

// FormatVolume implements volume.Host with MSFT_Volume.Format, as
// upstream: a quick (Full=false), forced format with an empty label.
// There is no documented Win32 format API. The call can take minutes on
// large volumes: it is bounded by the caller's deadline or a generous
// default (boundedSystem), and a retry while an abandoned format may still
// be running is refused Unavailable instead of starting a second one.
func (v volumeHost) FormatVolume(ctx context.Context, volumeID string) error {
	_, err := v.volumeCall(ctx, volumeID, "Format",
		wmi.Arg("FileSystem", v.b.fileSystem),
		wmi.Arg("FileSystemLabel", ""),
		wmi.Arg("Full", false),
		wmi.Arg("Force", true))
	return err
}

// partitionOf returns the disk and partition numbers of a volume
// (IOCTL_STORAGE_GET_DEVICE_NUMBER on the volume). Volumes that are not a
// partition of a basic disk cannot be resized through MSFT_Partition.
func (v volumeHost) partitionOf(volumeID string) (deviceNumber, error) {
	var dn deviceNumber
	err := v.b.onVolume(volumeID, modeQuery, func(h handle) error {
		var err error
		dn, err = v.b.deviceNumber(h, volumeID)
		if isUnsupported(err) {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "volume %s is not a partition of a basic disk; only those can be resized", volumeID)
		}
		if err == nil && (dn.PartitionNumber == 0 || dn.PartitionNumber == math.MaxUint32) {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "volume %s is not on a partition (device %d, partition %d)", volumeID, dn.DeviceNumber, dn.PartitionNumber)
		}
		return err
	})
	return dn, err
}

// VolumeSizes implements volume.Host: the partition's Size and the
// SizeMax of MSFT_Partition.GetSupportedSize, both from the storage
// provider so the Service compares like with like. GetSupportedSize fails
// with code 4 when the Optimize Drives service (defragsvc) is disabled or
// busy (aws-ebs-csi-driver#2877); that is reported, not papered over,
// because growing a file system blind could report success for a resize
// that did not happen.
func (v volumeHost) VolumeSizes(ctx context.Context, volumeID string) (current, maximum int64, err error) {
	dn, err := v.partitionOf(volumeID)
	if err != nil {
		return 0, 0, err
	}
	q := partitionQuery(dn.DeviceNumber, dn.PartitionNumber)
	size, err := v.partitionSize(ctx, dn)
	if err != nil {
		return 0, 0, err
	}
	out, err := v.b.storageCall(ctx, q, "GetSupportedSize")
	if err != nil {
		if wmi.HasCode(err, wmi.Failed) {
			return 0, 0, fmt.Errorf("%w (GetSupportedSize fails this way when the Optimize Drives service, defragsvc, is disabled or busy)", err)
		}
		return 0, 0, err
	}
	maxSize, err := out.Uint64("SizeMax")
	if err != nil {
		return 0, 0, fmt.Errorf("%s.GetSupportedSize: %w", classPartition, err)
	}
	if maxSize > math.MaxInt64 {
		return 0, 0, fmt.Errorf("%s.GetSupportedSize: SizeMax %d is out of range", classPartition, maxSize)
	}
	return size, int64(maxSize), nil
}

// partitionSize reads MSFT_Partition.Size.
func (v volumeHost) partitionSize(ctx context.Context, dn deviceNumber) (int64, error) {
	rows, err := v.b.storageQuery(ctx, partitionQuery(dn.DeviceNumber, dn.PartitionNumber).Select("Size"))
	if err != nil {
		return 0, err
	}
	if len(rows) != 1 {
		return 0, errdefs.Errorf(errdefs.ErrNotFound, "%d MSFT_Partition instances for disk %d partition %d, want 1", len(rows), dn.DeviceNumber, dn.PartitionNumber)
	}
	size, err := rows[0].Uint64("Size")
	if err != nil {
		return 0, err
	}
	if size > math.MaxInt64 {
		return 0, fmt.Errorf("partition size %d is out of range", size)
	}
	return int64(size), nil
}

// ResizeVolume implements volume.Host with MSFT_Partition.Resize (which
// grows the partition and its file system together, and handles the GPT
// backup header a raw IOCTL_DISK_GROW_PARTITION would not), then
// MSFT_Disk.Refresh, as upstream.
//
// "Size Not Supported" (4097) is read as upstream's no-op rule would: if
// the partition is already within volume.MinResizeGain of the requested
// size (the resize raced with another, or the provider rounds), the call
// succeeds; otherwise it is errdefs.ErrOutOfRange. "Not Supported" (1)
// is errdefs.ErrFailedPrecondition.
func (v volumeHost) ResizeVolume(ctx context.Context, volumeID string, size int64) error {
	dn, err := v.partitionOf(volumeID)
	if err != nil {
		return err
	}
	q := partitionQuery(dn.DeviceNumber, dn.PartitionNumber)
	_, err = v.b.storageCall(ctx, q, "Resize", wmi.Arg("Size", uint64(size)))
	if wmi.HasCode(err, wmi.SizeNotSupported) {
		if cur, serr := v.partitionSize(ctx, dn); serr == nil && size-cur < volume.MinResizeGain {
			err = nil
		}
	}
	if err != nil {
		return err
	}
	// The partition and file system have their new size now; a failed
	// Refresh only delays the provider noticing, and a retry would find
	// nothing left to do, so it does not fail the call.
	_, _ = v.b.storageCall(ctx, diskQuery(dn.DeviceNumber), "Refresh")
	return nil
}

// VolumeStats implements volume.Host with GetDiskFreeSpaceEx on the
// volume GUID path: total bytes, and used = total − total free (not the
// caller's quota-limited free space). Upstream reads MSFT_Volume.Size and
// SizeRemaining; whether they match exactly is unconfirmed (fact sheet
// §2.5). A RAW volume is errdefs.ErrFailedPrecondition.
func (v volumeHost) VolumeStats(_ context.Context, volumeID string) (total, used int64, err error) {
	if err := v.b.onVolume(volumeID, modeQuery, func(handle) error { return nil }); err != nil {
		return 0, 0, err
	}
	t, free, err := v.b.sys.diskFreeSpace(volumeRoot(volumeID))
	switch {
	case isErrno(err, errUnrecognizedVolume):
		return 0, 0, errdefs.Errorf(errdefs.ErrFailedPrecondition, "volume %s is not formatted", volumeID)
	case err != nil:
		return 0, 0, osError("GetDiskFreeSpaceEx("+volumeID+")", err)
	case t > math.MaxInt64 || free > t:
		return 0, 0, fmt.Errorf("GetDiskFreeSpaceEx(%s) reports %d bytes with %d free", volumeID, t, free)
	}
	return int64(t), int64(t - free), nil
}

// DiskNumber implements volume.Host with
// IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, the mapping Learn recommends. A
// volume spread over several disks has no single answer and is
// errdefs.ErrFailedPrecondition.
func (v volumeHost) DiskNumber(_ context.Context, volumeID string) (uint32, error) {
	var n uint32
	err := v.b.onVolume(volumeID, modeQuery, func(h handle) error {
		ext, err := v.b.diskExtents(h, volumeID)
		if err != nil {
			return err
		}
		if len(ext) == 0 {
			return errdefs.Errorf(errdefs.ErrNotFound, "volume %s lies on no disk", volumeID)
		}
		n = ext[0].DiskNumber
		for _, e := range ext[1:] {
			if e.DiskNumber != n {
				return errdefs.Errorf(errdefs.ErrFailedPrecondition, "volume %s spans disks %d and %d", volumeID, n, e.DiskNumber)
			}
		}
		return nil
	})
	return n, err
}

// FlushVolume implements volume.Host: FlushFileBuffers on a handle to the
// volume itself (\\?\Volume{GUID}, no trailing backslash), opened for
// read and write as Learn requires; it writes every open file's cached
// data. Upstream calls MSFT_Volume.Flush.
//
// A volume that cannot be written has nothing to flush, so WriteVolumeCache
// succeeds on it: ERROR_WRITE_PROTECT on the open or the flush says so
// directly. ERROR_ACCESS_DENIED is ambiguous (a read-only volume, or a
// caller without the right), so the volume is asked
// IOCTL_DISK_IS_WRITABLE on a query handle, which fails with
// ERROR_WRITE_PROTECT for a write-protected disk or volume: read-only is
// success, anything else keeps the PermissionDenied. Which of these codes
// a read-only volume actually gives is unconfirmed; the real-node kit
// checks it.
func (v volumeHost) FlushVolume(_ context.Context, volumeID string) error {
	err := v.b.onVolume(volumeID, modeReadWrite, func(h handle) error {
		if err := v.b.sys.flush(h); err != nil {
			return osError("FlushFileBuffers("+volumeID+")", err)
		}
		return nil
	})
	switch {
	case err == nil:
		return nil
	case isErrno(err, errWriteProtect):
		return nil
	case isErrno(err, errAccessDenied):
		if ro, perr := v.readOnly(volumeID); perr == nil && ro {
			return nil
		}
	}
	return err
}

// readOnly tells whether the volume refuses writes, as
// IOCTL_DISK_IS_WRITABLE answers (it fails with ERROR_WRITE_PROTECT).
func (v volumeHost) readOnly(volumeID string) (bool, error) {
	ro := false
	err := v.b.onVolume(volumeID, modeQuery, func(h handle) error {
		_, err := v.b.sys.ioctl(h, ioctlDiskIsWritable, nil, 0)
		switch {
		case err == nil:
		case isErrno(err, errWriteProtect):
			ro = true
		default:
			return osError("IOCTL_DISK_IS_WRITABLE on volume "+volumeID, err)
		}
		return nil
	})
	return ro, err
}

// place is what a path is, as far as mounts are concerned.
type place struct {
	missing bool
	// volume is set for a drive root or a volume mounted folder.
	volume string
	// link is set for a symbolic link or a directory junction.
	link *linkTarget
}

// inspect classifies path: GetFileAttributes, then for a reparse point
// its tag (FindFirstFile) and data (FSCTL_GET_REPARSE_POINT). A mount
// point tag whose target is a volume is a mounted folder, and its volume
// is what GetVolumeNameForVolumeMountPoint(path\) says; a mount point tag
// with a path target is a junction, followed like a link. Other reparse
// tags (deduplication, cloud files) are ordinary directories here.
func (v volumeHost) inspect(path string) (place, error) {
	b := v.b
	if hostpath.Windows.IsRoot(path) {
		id, err := b.sys.volumeNameForMountPoint(path)
		if err != nil {
			if isGone(err) {
				return place{missing: true}, nil
			}
			return place{}, osError("GetVolumeNameForVolumeMountPoint("+path+")", err)
		}
		return place{volume: id}, nil
	}
	attrs, err := b.sys.attributes(win32Path(path))
	if isGone(err) {
		return place{missing: true}, nil
	}
	if err != nil {
		return place{}, osError("GetFileAttributes("+path+")", err)
	}
	if attrs&fileAttributeReparsePoint == 0 {
		return place{}, nil
	}
	tag, err := b.sys.reparseTag(win32Path(path))
	if err != nil {
		return place{}, osError("FindFirstFile("+path+")", err)
	}
	if tag != reparseTagMountPoint && tag != reparseTagSymlink {
		return place{}, nil
	}
	r, err := b.reparsePoint(path)
	if err != nil {
		return place{}, err
	}
	t, err := resolveLink(path, r)
	if err != nil {
		return place{}, err
	}
	if tag == reparseTagMountPoint && t.kind == targetVolume && t.inVolume == "" {
		// The mount manager's name for the volume (the first if it has
		// several). When it cannot say (the volume is gone), the name in
		// the reparse data is the best answer, so a dangling mount point
		// can still be unmounted.
		id, err := b.sys.volumeNameForMountPoint(mountPointArg(path))
		if err != nil {
			id = t.path
		}
		return place{volume: id}, nil
	}
	return place{link: &t}, nil
}

// VolumeAt implements volume.Host, like upstream's
// GetVolumeIDFromTargetPath but with the reparse tag compared for
// equality (upstream tests tag & IO_REPARSE_TAG_MOUNT_POINT, fact sheet
// §2.8): the volume mounted at path (a mounted folder or a drive root),
// as GetVolumeNameForVolumeMountPoint returns it. A symbolic link or
// junction is followed (a pod's publish path is a link to the staging
// mount point, and drivers ask for its volume); a link straight to a
// volume root names that volume. Anything else is errdefs.ErrNotFound;
// for a missing path the message ends "because it does not exist", the
// text aws-ebs-csi-driver matches to mean "not mounted".
func (v volumeHost) VolumeAt(ctx context.Context, path string) (string, error) {
	cur := path
	for range maxLinkHops {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		pl, err := v.inspect(cur)
		switch {
		case err != nil:
			return "", err
		case pl.missing:
			return "", errdefs.Errorf(errdefs.ErrNotFound, "no volume is mounted at %q because it does not exist", cur)
		case pl.volume != "":
			return pl.volume, nil
		case pl.link == nil:
			return "", errdefs.Errorf(errdefs.ErrNotFound, "no volume is mounted at %q: it is not a mounted folder", cur)
		}
		switch t := pl.link; t.kind {
		case targetVolume:
			if t.inVolume == "" {
				return t.path, nil
			}
			return "", errdefs.Errorf(errdefs.ErrNotFound, "no volume is mounted at %q: it links to a folder inside volume %s", path, t.path)
		case targetUNC:
			return "", errdefs.Errorf(errdefs.ErrNotFound, "no volume is mounted at %q: it links to the SMB path %q", path, t.path)
		default:
			cur = t.path
		}
	}
	return "", errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q: more than %d links (a link loop?)", path, maxLinkHops)
}

// ClosestVolume implements volume.Host like upstream's
// GetClosestVolumeIDFromTargetPath: from path, walk up the parents,
// jumping to a link's target when one is met (at most 256 steps), to the
// nearest mounted folder or, failing that, the drive root's volume
// (GetVolumeNameForVolumeMountPoint("X:\"), where upstream looks up
// MSFT_Partition by DriveLetter). A missing path is errdefs.ErrNotFound; a
// path that leads to an SMB share is errdefs.ErrFailedPrecondition.
func (v volumeHost) ClosestVolume(ctx context.Context, path string) (string, error) {
	cur := path
	for range maxClosestSteps {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		pl, err := v.inspect(cur)
		switch {
		case err != nil:
			return "", err
		case pl.missing:
			return "", errdefs.Errorf(errdefs.ErrNotFound, "path %q does not exist", cur)
		case pl.volume != "":
			return pl.volume, nil
		case pl.link == nil:
			cur = hostpath.Windows.Dir(cur)
			continue
		}
		switch t := pl.link; t.kind {
		case targetVolume:
			return t.path, nil
		case targetUNC:
			return "", errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q leads to the SMB path %q, which is on no local volume", path, t.path)
		default:
			cur = t.path
		}
	}
	return "", errdefs.Errorf(errdefs.ErrFailedPrecondition, "no volume found for %q within %d steps (a link loop?)", path, maxClosestSteps)
}
