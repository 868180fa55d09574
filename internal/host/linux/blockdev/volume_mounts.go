package blockdev

import (
	"context"
	"path"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// VolumeMounts returns every path where volume id is mounted, each once,
// in mount table order (the proxy's table, then the host's); none when it
// is mounted nowhere. Object confinement asks it (a policy rule's
// onlyMountedBeneathPathRoots), as it asks Windows
// GetVolumePathNamesForVolumeName, so it reads the whole of both tables
// Config.HostMountTable makes the backend trust, not only what lies below
// the working directories: a volume mounted at / or /boot is reported
// there, and so is never "beneath" a driver's roots.
//
// A mount is the volume's when its device number (mountinfo's
// major:minor, the st_dev of the files on it) is that of the volume's
// block device: the partition, or the whole disk of a whole-disk
// filesystem. That holds for every bind mount of it too, of its root or
// of a subdirectory. The source column is not compared as text: it is
// whatever name mount(8) was given (/dev/disk/by-uuid/..., a
// /dev/mapper name), and the same text names another device once a
// loop or partition number is reused. Only a filesystem the kernel gives
// an anonymous device number (major 0: btrfs) is recognised by its
// source, resolved to the number of the device node it names below
// Config.DevRoot (never a path elsewhere, which could be a network
// filesystem that does not answer).
//
// A clone carries its original's ID (see Snapshot.Volume): the mounts of
// every volume with the ID are returned, so the answer covers everything
// the ID may name. A partition the kernel has no device for is mounted
// nowhere. The partition tables are read as for every call, each disk's
// wait bounded by Config.DiskReadTimeout, but, as for every read, nothing
// is changed: no partition is given a kernel device (BLKPG), since
// answering the policy's question must not touch the node. No such volume is
// errdefs.ErrNotFound; one only a disk that did not answer may hold is
// errdefs.ErrUnavailable.
func (b *Backend) VolumeMounts(ctx context.Context, id string) ([]string, error) {
	// An ID that cannot name a volume is answered before any disk is
	// read.
	if _, err := blocktopo.ParseGUID(id); err != nil {
		return nil, errdefs.Errorf(errdefs.ErrNotFound, "volume %q does not exist: volume IDs on Linux are GPT partition GUIDs or whole-disk filesystem UUIDs", id)
	}
	s, err := b.scan(ctx, scanTables)
	if err != nil {
		return nil, err
	}
	vols, err := s.VolumesWithID(id)
	if err != nil {
		return nil, err
	}
	devs := map[blocktopo.DevNum]bool{}
	for _, v := range vols {
		switch {
		case v.Whole():
			devs[v.Disk.Dev] = true
		default:
			// The kernel's partition with the entry's number, even one
			// not where the table says or a kpartx device of another
			// size: a mount of it is still the volume's data, and the
			// answer errs towards "mounted there".
			if p := v.Disk.Part(v.Entry.Index); p != nil {
				devs[p.Dev] = true
			}
		}
	}
	return b.mountPointsOf(s, devs), nil
}

// mountPointsOf returns the mount points, each once, of the mounts in
// s's tables whose device is one of devs (see VolumeMounts).
func (b *Backend) mountPointsOf(s *blocktopo.Snapshot, devs map[blocktopo.DevNum]bool) []string {
	if len(devs) == 0 {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	// Each anonymous source is resolved once per call.
	resolved := map[string]blocktopo.DevNum{}
	all := append(append([]mountinfo.Mount(nil), s.Mounts...), s.HostMounts...)
	for _, m := range all {
		d := blocktopo.DevNum{Major: m.Major, Minor: m.Minor}
		if m.Major == 0 {
			d = b.sourceDevice(m.Source, resolved)
		}
		if devs[d] && !seen[m.MountPoint] {
			seen[m.MountPoint] = true
			out = append(out, m.MountPoint)
		}
	}
	return out
}

// sourceDevice returns the number of the block device a mount source
// names when it is a path below Config.DevRoot; the zero DevNum (no
// device) otherwise. cache holds earlier answers.
func (b *Backend) sourceDevice(source string, cache map[string]blocktopo.DevNum) blocktopo.DevNum {
	if d, ok := cache[source]; ok {
		return d
	}
	var d blocktopo.DevNum
	clean := path.Clean(source)
	root := path.Clean(b.cfg.DevRoot)
	if path.IsAbs(source) && blocktopo.IsWithin(clean, root) && clean != root {
		if n, err := b.k.blockDevice(clean); err == nil {
			d = n
		}
	}
	cache[source] = d
	return d
}
