package simulated

import (
	"context"
	"errors"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// volumeView is the volume group backend.
type volumeView struct{ h *Host }

// ListVolumesOnDisk implements volume.Host: the volumes of every partition
// (partition 0) or of one partition, in partition order. A partition
// without a volume (MSR) gives none; a missing partition is
// errdefs.ErrNotFound; an offline disk errdefs.ErrFailedPrecondition.
func (v volumeView) ListVolumesOnDisk(ctx context.Context, n, partition uint32) ([]string, error) {
	return read(ctx, v.h, func(w *world) ([]string, error) {
		d, err := w.disk(n)
		if err != nil {
			return nil, err
		}
		if !d.online {
			return nil, errdefs.Errorf(errdefs.ErrFailedPrecondition, "disk %d is offline", n)
		}
		ids := []string{}
		found := partition == 0
		for _, p := range d.parts {
			if partition != 0 && p.number != partition {
				continue
			}
			found = true
			if p.vol != nil {
				ids = append(ids, p.vol.id)
			}
		}
		if !found {
			return nil, errdefs.Errorf(errdefs.ErrNotFound, "disk %d has no partition %d", n, partition)
		}
		return ids, nil
	})
}

// MountVolume implements volume.Host like SetVolumeMountPoint: target must
// be an empty directory, which becomes the mount point. Leniently, a
// missing target whose parent exists is created first (drivers differ in
// whether they create it). A file, link or non-empty directory at target is
// errdefs.ErrFailedPrecondition, and so is a mount point of another
// volume; the same volume there again is success. An unformatted volume can
// be mounted, as on Windows; entering it then fails until it is formatted.
func (v volumeView) MountVolume(ctx context.Context, volumeID, target string) error {
	return v.h.atPath(ctx, target, func(w *world, p string) error {
		vol, err := w.volume(volumeID)
		if err != nil {
			return err
		}
		pl, err := (&walker{w: w}).resolve(p, false)
		if err != nil {
			return err
		}
		switch n := pl.n; {
		case pl.dir == nil:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "the access path %q is a drive root", p)
		case n == nil:
			n = newDir(pl.name)
			pl.dir.children[strings.ToLower(pl.name)] = n
			pl.n = n
		case n.kind == kindMount && strings.EqualFold(n.volID, vol.id):
			return nil
		case n.kind == kindMount:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "the requested access path %q is already in use by volume %s", p, n.volID)
		case n.kind == kindFile:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "the access path %q is a file, not an empty directory", p)
		case n.kind == kindLink:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "the access path %q is a symbolic link, not an empty directory", p)
		case len(n.children) > 0:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "the access path %q is not an empty directory", p)
		}
		pl.n.kind, pl.n.children, pl.n.volID = kindMount, nil, vol.id
		return nil
	})
}

// UnmountVolume implements volume.Host like Flush + DeleteVolumeMountPoint:
// the mount point turns back into an empty directory. target must be a
// mount point of the volume (errdefs.ErrNotFound otherwise, or
// errdefs.ErrFailedPrecondition when another volume is mounted there).
func (v volumeView) UnmountVolume(ctx context.Context, volumeID, target string) error {
	return v.h.atPath(ctx, target, func(w *world, p string) error {
		vol, err := w.volume(volumeID)
		if err != nil {
			// A mount point left behind by a volume that is not present
			// (its disk offline, removed, or its iSCSI target
			// disconnected) still names the volume. There is nothing to
			// flush, and DeleteVolumeMountPoint, which needs no volume,
			// removes it, as the Windows backend does: NodeUnstage of a
			// driver that took the disk offline first can then finish
			// rather than fail forever.
			if !errors.Is(err, errdefs.ErrNotFound) {
				return err
			}
			if pl, perr := (&walker{w: w}).resolve(p, false); perr == nil && pl.n != nil &&
				pl.n.kind == kindMount && strings.EqualFold(pl.n.volID, volumeID) {
				pl.n.kind, pl.n.children, pl.n.volID = kindDir, map[string]*node{}, ""
				return nil
			}
			return err
		}
		vol.flushes++
		pl, err := (&walker{w: w}).resolve(p, false)
		switch n := pl.n; {
		case err != nil:
			return err
		case pl.dir == nil:
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q is a drive root; removing drive letters is not supported", p)
		case n == nil:
			return notExist("%q does not exist", p)
		case n.kind != kindMount:
			return errdefs.Errorf(errdefs.ErrNotFound, "%q is not a mounted folder", p)
		case !strings.EqualFold(n.volID, vol.id):
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q is the mount point of volume %s, not %s", p, n.volID, vol.id)
		}
		pl.n.kind, pl.n.children, pl.n.volID = kindDir, map[string]*node{}, ""
		return nil
	})
}

// IsVolumeFormatted implements volume.Host.
func (v volumeView) IsVolumeFormatted(ctx context.Context, volumeID string) (bool, error) {
	var ok bool
	err := v.onVolume(ctx, volumeID, func(vol *volumeState) error {
		ok = vol.fs != ""
		return nil
	})
	return ok, err
}

// FormatVolume implements volume.Host: a quick NTFS format, which erases
// the volume's files (the Service refuses to format twice). The system
// volume C: is refused, as Windows refuses it.
func (v volumeView) FormatVolume(ctx context.Context, volumeID string) error {
	return v.onVolume(ctx, volumeID, func(vol *volumeState) error {
		if vol.disk.system {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "volume %s is on the system disk and cannot be formatted", vol.id)
		}
		vol.format("NTFS")
		return nil
	})
}

// VolumeSizes implements volume.Host: the partition's size and the size it
// can grow to before the next partition or the backup GPT.
func (v volumeView) VolumeSizes(ctx context.Context, volumeID string) (current, maximum int64, err error) {
	err = v.onVolume(ctx, volumeID, func(vol *volumeState) error {
		current, maximum = vol.part.size, vol.disk.maxSize(vol.part)
		return nil
	})
	return current, maximum, err
}

// ResizeVolume implements volume.Host: the partition (and its file system)
// becomes size bytes. Beyond the maximum, or below the bytes in use, is
// errdefs.ErrOutOfRange.
func (v volumeView) ResizeVolume(ctx context.Context, volumeID string, size int64) error {
	return v.onVolume(ctx, volumeID, func(vol *volumeState) error {
		if maximum := vol.disk.maxSize(vol.part); size > maximum {
			return errdefs.Errorf(errdefs.ErrOutOfRange, "size %d is larger than volume %s can grow to (%d bytes)", size, vol.id, maximum)
		}
		if used := vol.used(); size < used || size < partAlign {
			return errdefs.Errorf(errdefs.ErrOutOfRange, "size %d is smaller than volume %s can shrink to (%d bytes are in use)", size, vol.id, used)
		}
		vol.part.size = size
		return nil
	})
}

// VolumeStats implements volume.Host: the volume's size and used bytes
// (see NTFSOverhead). A RAW volume is errdefs.ErrFailedPrecondition.
func (v volumeView) VolumeStats(ctx context.Context, volumeID string) (total, used int64, err error) {
	err = v.onVolume(ctx, volumeID, func(vol *volumeState) error {
		if vol.fs == "" {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "volume %s is not formatted", vol.id)
		}
		total, used = vol.part.size, vol.used()
		return nil
	})
	return total, used, err
}

// DiskNumber implements volume.Host.
func (v volumeView) DiskNumber(ctx context.Context, volumeID string) (uint32, error) {
	var n uint32
	err := v.onVolume(ctx, volumeID, func(vol *volumeState) error {
		n = vol.disk.number
		return nil
	})
	return n, err
}

// onVolume runs f on volume id under the world's lock, the shape of every
// call that acts on one present volume and needs nothing else of the
// world: a volume that is missing, or whose disk is offline, is answered
// by world.volume in one wording for them all.
func (v volumeView) onVolume(ctx context.Context, id string, f func(vol *volumeState) error) error {
	return v.h.do(ctx, func(w *world) error {
		vol, err := w.volume(id)
		if err != nil {
			return err
		}
		return f(vol)
	})
}

// maxVolumeAtHops bounds how many links VolumeAt follows, as the Windows
// backend bounds it (internal/host/windows/storage/volume.go), so a link loop ends
// in an error rather than a hang.
const maxVolumeAtHops = 32

// VolumeAt implements volume.Host like the Windows backend: the volume
// mounted at path (a mount point, or a drive root). A symbolic link is
// followed, link after link, because a pod's publish path is a link to the
// staging mount point and drivers ask for the volume there
// (GetVolumeIDFromTargetPath before GetVolumeStats, ResizeVolume and
// WriteVolumeCache); a link straight to a drive root names that drive's
// volume. A link into a folder that is not a mount point, or to an SMB
// path, leads to no volume. Anything that is not a mount is
// errdefs.ErrNotFound (the volume Service words that answer for drivers);
// more than maxVolumeAtHops links is errdefs.ErrFailedPrecondition.
func (v volumeView) VolumeAt(ctx context.Context, path string) (string, error) {
	var id string
	err := v.h.atPath(ctx, path, func(w *world, p string) error {
		cur := p
		for range maxVolumeAtHops {
			if strings.HasPrefix(cur, `\\`) {
				return errdefs.Errorf(errdefs.ErrNotFound, "no volume is mounted at %q: it links to the SMB path %q", p, cur)
			}
			pl, err := (&walker{w: w}).resolve(cur, false)
			switch missing := isNotExist(err) || err == nil && pl.n == nil; {
			case missing && cur != p:
				return errdefs.Errorf(errdefs.ErrNotFound, "no volume is mounted at %q: it links to %q, which does not exist", p, cur)
			case missing:
				return errdefs.Errorf(errdefs.ErrNotFound, "no volume is mounted at %q because it does not exist", p)
			}
			if err != nil {
				return err
			}
			if found, ok := w.mountedAt(pl); ok {
				id = found
				return nil
			}
			switch {
			case pl.n.kind == kindLink:
				cur = pl.n.target
			case cur != p:
				return errdefs.Errorf(errdefs.ErrNotFound, "no volume is mounted at %q: it links to %q, which is not a mounted folder", p, cur)
			default:
				return errdefs.Errorf(errdefs.ErrNotFound, "no volume is mounted at %q: it is not a mounted folder", p)
			}
		}
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q: more than %d links (a link loop?)", p, maxVolumeAtHops)
	})
	return id, err
}

// mountedAt returns the ID of the volume at pl when pl is a drive root or
// a mount point, where VolumeAt's and ClosestVolume's walks both end, so
// the two answer alike. A mount point keeps the ID as it was mounted;
// while its volume is present, the ID is spelt as the volume spells it.
// ok is false anywhere else. pl.n must not be nil unless pl is a drive
// root: both walks check that first.
func (w *world) mountedAt(pl place) (string, bool) {
	switch {
	case pl.dir == nil:
		return pl.vol.id, true
	case pl.n.kind != kindMount:
		return "", false
	}
	if vol := w.findVolume(pl.n.volID); vol != nil {
		return vol.id, true
	}
	return pl.n.volID, true
}

// ClosestVolume implements volume.Host like upstream's
// GetClosestVolumeIDFromTargetPath: from path, walk up the parents, jumping
// to a link's target when one is met (at most 256 steps), to the nearest
// mount point or, failing that, the drive root's volume. A missing path is
// errdefs.ErrNotFound; a path that leads to an SMB share is
// errdefs.ErrFailedPrecondition (it is on no local volume).
func (v volumeView) ClosestVolume(ctx context.Context, path string) (string, error) {
	var id string
	err := v.h.atPath(ctx, path, func(w *world, p string) error {
		wk := &walker{w: w}
		cur := p
		for range 256 {
			if strings.HasPrefix(cur, `\\`) {
				return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q leads to the SMB path %q, which is on no local volume", p, cur)
			}
			pl, err := wk.resolve(cur, false)
			switch {
			case err != nil:
				return err
			case pl.n == nil:
				return notExist("path %q does not exist", cur)
			}
			if found, ok := w.mountedAt(pl); ok {
				id = found
				return nil
			}
			if pl.n.kind == kindLink {
				cur = pl.n.target
			} else {
				cur = hostpath.Windows.Dir(cur)
			}
		}
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "no volume found for %q within 256 steps (a link loop?)", p)
	})
	return id, err
}

// FlushVolume implements volume.Host; it counts the flush (see
// VolumeInfo.Flushes).
func (v volumeView) FlushVolume(ctx context.Context, volumeID string) error {
	return v.onVolume(ctx, volumeID, func(vol *volumeState) error {
		vol.flushes++
		return nil
	})
}
