//go:build linux

package hostset

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blockdev"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/cifs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/iscsiinit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/localfs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/systemd"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// newLinux wires the Linux backends: block devices for disks and volumes,
// the local filesystem (confined with openat2) for paths, CIFS mounts for
// SMB, open-iscsi for iSCSI and systemd for services. Their constructors
// only check configuration; nothing on the host changes until a call
// arrives.
func newLinux(cfg Config) (Set, error) {
	filesystem := cfg.LinuxFilesystem
	if filesystem == "" {
		filesystem = DefaultLinuxFilesystem
	}
	blocks, err := blockdev.New(blockdev.Config{
		Filesystem: filesystem,
		// A disk with anything mounted outside the working dirs belongs
		// to the host and is never touched.
		MountRoots: cfg.WorkingDirs,
		// A disk mounted only on the host (seen in the host's table,
		// with hostPID) is the host's too.
		HostMountTable: cfg.LinuxHostMountTable,
		// A disk that does not answer (a passive path) holds up a call
		// this long at most.
		DiskReadTimeout: cfg.LinuxDiskReadTimeout,
	})
	if err != nil {
		return Set{}, fmt.Errorf("linux block backend: %w", err)
	}
	fs, err := localfs.New(cfg.WorkingDirs)
	if err != nil {
		return Set{}, fmt.Errorf("linux filesystem backend: %w", err)
	}
	smbHost, err := cifs.New(smbConfig(cfg))
	if err != nil {
		return Set{}, fmt.Errorf("linux SMB backend: %w", err)
	}
	// Disk numbers of iSCSI LUNs are the block backend's: its diskseq, or
	// the number it keeps for a disk without one (kernels before 5.15).
	initiator, err := iscsiinit.New(iscsiinit.Config{}, blocks.DiskNumberOf)
	if err != nil {
		return Set{}, fmt.Errorf("linux iSCSI backend: %w", err)
	}
	// The system group's D-Bus connection is the one thing a Linux
	// backend holds between calls.
	services := systemd.New(systemd.DefaultSysfsRoot, systemd.NewDBus(""))
	return Set{
		Style:       hostpath.POSIX,
		Disk:        blocks.Disk(),
		Volume:      blocks.Volume(),
		Filesystem:  fs,
		SMB:         smbHost,
		SMBMappings: smbHost,
		ISCSI:       initiator,
		System:      services,
		Closer:      services,
	}, nil
}

// smbConfig is the CIFS backend's configuration for cfg: the node's SMB
// permissions for every mount and, per call, those of the policy rule
// that allowed it, which the call gate puts in the call's context
// (policy.DecisionFromContext), overlaid field by field.
func smbConfig(cfg Config) cifs.Config {
	c := cifs.DefaultConfig()
	c.RequirePrivacy = cfg.RequirePrivacy
	// The local link of a mapping is made beneath these, never at a
	// path a symlink could redirect.
	c.WorkingDirs = cfg.WorkingDirs
	if cfg.SMBPermissions != nil {
		c.Permissions = overlaySMB(cifs.Permissions{}, *cfg.SMBPermissions)
	}
	base := c.Permissions
	c.PermissionsFor = func(ctx context.Context) (cifs.Permissions, bool) {
		d, ok := policy.DecisionFromContext(ctx)
		if !ok || d.SMBPermissions == nil {
			return cifs.Permissions{}, false
		}
		return overlaySMB(base, *d.SMBPermissions), true
	}
	return c
}

// overlaySMB returns base with every field p sets replaced by p's.
func overlaySMB(base cifs.Permissions, p policy.SMBPermissions) cifs.Permissions {
	if p.UID != nil {
		base.UID = cifs.UID32(*p.UID)
	}
	if p.GID != nil {
		base.GID = cifs.UID32(*p.GID)
	}
	if p.FileMode != 0 {
		base.FileMode = fs.FileMode(p.FileMode)
	}
	if p.DirMode != 0 {
		base.DirMode = fs.FileMode(p.DirMode)
	}
	if p.SELinuxContext != "" {
		base.SELinuxContext = p.SELinuxContext
	}
	return base
}
