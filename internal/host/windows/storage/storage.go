// Package storage is the Windows backend of the disk and volume API
// groups: disk.Host and volume.Host implemented with Win32 calls, and with
// the Storage Management API over WMI only where Win32 has no equivalent
// (initialising and partitioning a disk, formatting, resizing a partition,
// refreshing the storage provider's cache, and taking a disk online or
// offline). It never starts a child process.
//
// The package is split along one seam, the unexported system interface:
// everything that decides (which call, in which order, with which buffer,
// what an error means, what counts as already done) is platform-neutral
// and tested on Linux against a recording fake; system_windows.go is the
// thin layer that makes each call. Docs: docs/windows-storage.md lists
// the calls behind every RPC, the privileges they need and what is still
// unconfirmed.
package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// Config tunes the backend. The zero value behaves like upstream
// csi-proxy.
type Config struct {
	// FileSystem is what FormatVolume creates: "NTFS" (the default, and
	// upstream's only choice) or "ReFS". ReFS volumes can be mounted in
	// an NTFS folder but cannot host mounted folders themselves.
	FileSystem string
	// Warnf reports a problem the backend worked around rather than
	// failing the call (a disk with a malformed descriptor, listed
	// without that identifier). Nil logs with klog.Warningf.
	Warnf func(format string, args ...any)
}

// Backend is the Windows disk and volume backend. It holds no state
// besides its configuration: every call asks Windows afresh, so it is safe
// for concurrent use (the group Services serialise calls per disk and
// volume).
type Backend struct {
	sys        system
	fileSystem string
	warnf      func(format string, args ...any)
}

// Compile-time checks that the views implement the group backends.
var (
	_ disk.Host   = diskHost{}
	_ volume.Host = volumeHost{}
)

// New returns the backend for this Windows host. It does no I/O: WMI is
// first touched by the first call that needs it. On other systems it fails
// with errdefs.ErrUnimplemented.
func New(cfg Config) (*Backend, error) {
	sys, err := newSystem()
	if err != nil {
		return nil, err
	}
	return newBackend(sys, cfg)
}

// newBackend checks cfg and builds a Backend on sys.
func newBackend(sys system, cfg Config) (*Backend, error) {
	fs := cfg.FileSystem
	switch {
	case fs == "":
		fs = "NTFS"
	case strings.EqualFold(fs, "NTFS"):
		fs = "NTFS"
	case strings.EqualFold(fs, "ReFS"):
		fs = "ReFS"
	default:
		return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "file system %q is not supported; use NTFS or ReFS", cfg.FileSystem)
	}
	warnf := cfg.Warnf
	if warnf == nil {
		warnf = klog.Warningf
	}
	return &Backend{sys: newBoundedSystem(sys), fileSystem: fs, warnf: warnf}, nil
}

// Disk returns the disk group backend.
func (b *Backend) Disk() disk.Host { return diskHost{b} }

// Volume returns the volume group backend.
func (b *Backend) Volume() volume.Host { return volumeHost{b} }

// closeHandle closes h. A failed CloseHandle on a handle used only for
// queries or a flush that already succeeded changes no result, so its
// error is dropped here, in one place.
func (b *Backend) closeHandle(h handle) { _ = b.sys.close(h) }

// onDisk opens disk n in mode, runs fn and closes the disk. A disk that
// does not exist is errdefs.ErrNotFound, worded as the simulated host
// words it.
func (b *Backend) onDisk(n uint32, mode openMode, fn func(h handle) error) error {
	h, err := b.sys.open(diskDevice(n), mode)
	if err != nil {
		if isGone(err) {
			return errdefs.Errorf(errdefs.ErrNotFound, "disk %d does not exist", n)
		}
		return osError(fmt.Sprintf("open disk %d (%s)", n, diskDevice(n)), err)
	}
	defer b.closeHandle(h)
	return fn(h)
}

// onVolume opens the volume with the given ID in mode, runs fn and closes
// it. A volume that does not exist is errdefs.ErrNotFound.
func (b *Backend) onVolume(id string, mode openMode, fn func(h handle) error) error {
	h, err := b.sys.open(volumeDevice(id), mode)
	if err != nil {
		if isGone(err) {
			return errdefs.Errorf(errdefs.ErrNotFound, "volume %s does not exist", id)
		}
		return osError("open volume "+id, err)
	}
	defer b.closeHandle(h)
	return fn(h)
}

// deviceNumber runs IOCTL_STORAGE_GET_DEVICE_NUMBER.
func (b *Backend) deviceNumber(h handle, what string) (deviceNumber, error) {
	out, err := b.sys.ioctl(h, ioctlStorageGetDeviceNumber, nil, 12)
	if err != nil {
		return deviceNumber{}, osError("IOCTL_STORAGE_GET_DEVICE_NUMBER on "+what, err)
	}
	dn, err := parseDeviceNumber(out)
	if err != nil {
		return deviceNumber{}, fmt.Errorf("%s: %w", what, err)
	}
	return dn, nil
}

// queryProperty runs IOCTL_STORAGE_QUERY_PROPERTY for a standard query of
// propertyID, growing the buffer to the size the descriptor header asks
// for when 4 KiB (upstream's fixed size) is not enough.
func (b *Backend) queryProperty(h handle, propertyID uint32) ([]byte, error) {
	in := storagePropertyQuery(propertyID)
	out, err := b.sys.ioctl(h, ioctlStorageQueryProperty, in, 4096)
	if err != nil {
		return nil, err
	}
	if len(out) >= 8 {
		if size := int(le.Uint32(out[4:])); size > len(out) && size <= maxDescriptorSize {
			out, err = b.sys.ioctl(h, ioctlStorageQueryProperty, in, size)
		}
	}
	return out, err
}

// diskAttributes runs IOCTL_DISK_GET_DISK_ATTRIBUTES.
func (b *Backend) diskAttributes(h handle, n uint32) (uint64, error) {
	out, err := b.sys.ioctl(h, ioctlDiskGetDiskAttributes, nil, 16)
	if err != nil {
		return 0, osError(fmt.Sprintf("IOCTL_DISK_GET_DISK_ATTRIBUTES on disk %d", n), err)
	}
	a, err := parseDiskAttributes(out)
	if err != nil {
		return 0, fmt.Errorf("disk %d: %w", n, err)
	}
	return a, nil
}

// driveLayout runs IOCTL_DISK_GET_DRIVE_LAYOUT_EX. Its size cannot be
// queried, so the buffer doubles on ERROR_INSUFFICIENT_BUFFER (and on
// ERROR_MORE_DATA, which some drivers use instead).
func (b *Backend) driveLayout(h handle, n uint32) (driveLayout, error) {
	for entries := 16; ; entries *= 2 {
		out, err := b.sys.ioctl(h, ioctlDiskGetDriveLayoutEx, nil, layoutSize(entries))
		if isErrno(err, errInsufficientBuffer, errMoreData) && entries < maxLayoutEntries {
			continue
		}
		if err != nil {
			return driveLayout{}, osError(fmt.Sprintf("IOCTL_DISK_GET_DRIVE_LAYOUT_EX on disk %d", n), err)
		}
		l, err := parseDriveLayout(out)
		if err != nil {
			return driveLayout{}, fmt.Errorf("disk %d: %w", n, err)
		}
		return l, nil
	}
}

// diskExtents runs IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, retrying with the
// extent count ERROR_MORE_DATA reports (fact sheet §2.6).
func (b *Backend) diskExtents(h handle, id string) ([]diskExtent, error) {
	size := 8 + 24
	for try := 0; ; try++ {
		out, err := b.sys.ioctl(h, ioctlVolumeGetVolumeDiskExtents, nil, size)
		if isErrno(err, errMoreData) && try < 3 {
			if n, ok := extentCount(out); ok && n > 0 && n <= maxExtents && 8+24*n > size {
				size = 8 + 24*n
				continue
			}
		}
		if err != nil {
			return nil, osError("IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS on volume "+id, err)
		}
		ext, err := parseDiskExtents(out)
		if err != nil {
			return nil, fmt.Errorf("volume %s: %w", id, err)
		}
		return ext, nil
	}
}

// reparsePoint reads the reparse data of path (FSCTL_GET_REPARSE_POINT on
// a handle to the link itself). Not a reparse point is errdefs.ErrNotFound.
func (b *Backend) reparsePoint(path string) (reparsePoint, error) {
	h, err := b.sys.open(win32Path(path), modeReparse)
	if err != nil {
		return reparsePoint{}, osError("open "+path, err)
	}
	defer b.closeHandle(h)
	out, err := b.sys.ioctl(h, fsctlGetReparsePoint, nil, maxReparseDataSize)
	if err != nil {
		if isErrno(err, errNotAReparsePoint) {
			return reparsePoint{}, errdefs.Errorf(errdefs.ErrNotFound, "%q is not a reparse point", path)
		}
		return reparsePoint{}, osError("FSCTL_GET_REPARSE_POINT on "+path, err)
	}
	r, err := parseReparsePoint(out)
	if err != nil {
		return reparsePoint{}, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Storage Management API names (namespace Root\Microsoft\Windows\Storage).
const (
	classDisk           = "MSFT_Disk"
	classPartition      = "MSFT_Partition"
	classVolume         = "MSFT_Volume"
	classStorageSetting = "MSFT_StorageSetting"
)

// updateCache runs MSFT_StorageSetting.UpdateHostStorageCache, which makes
// the storage provider re-read disks, partitions and volumes.
func (b *Backend) updateCache(ctx context.Context) error {
	_, err := b.sys.callStatic(ctx, classStorageSetting, "UpdateHostStorageCache")
	return err
}

// needsCacheUpdate tells whether a WMI failure may be the provider's
// cache lagging behind Windows: the instance is missing (a disk just
// attached, a volume just created) or the provider says so (40003).
func needsCacheUpdate(err error) bool {
	var me *wmi.MethodError
	if errors.As(err, &me) {
		return me.Code == wmi.CacheOutOfDate
	}
	return errors.Is(err, errdefs.ErrNotFound)
}

// storageCall runs a Storage Management method on the one instance q
// selects. The provider caches disks, partitions and volumes
// (Update-HostStorageCache exists for that reason), so when the instance
// is missing or the provider reports its cache out of date, the cache is
// refreshed once and the call retried. Upstream never retries and fails
// instead, until the driver happens to call Rescan.
func (b *Backend) storageCall(ctx context.Context, q *wmi.WQL, method string, in ...wmi.Param) (wmi.Props, error) {
	out, err := b.sys.call(ctx, q, method, in...)
	if err == nil || !needsCacheUpdate(err) {
		return out, err
	}
	if uerr := b.updateCache(ctx); uerr != nil {
		return nil, fmt.Errorf("%w (refreshing the storage cache to retry failed too: %w)", err, uerr)
	}
	return b.sys.call(ctx, q, method, in...)
}

// storageQuery runs q, refreshing the provider's cache once when nothing
// matches.
func (b *Backend) storageQuery(ctx context.Context, q *wmi.WQL) ([]wmi.Props, error) {
	rows, err := b.sys.query(ctx, q)
	if err != nil || len(rows) > 0 {
		return rows, err
	}
	if err := b.updateCache(ctx); err != nil {
		return nil, fmt.Errorf("%s matched nothing, and refreshing the storage cache failed: %w", q, err)
	}
	return b.sys.query(ctx, q)
}
