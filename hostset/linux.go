//go:build linux

package hostset

import (
	"fmt"

	"github.com/csi-node-proxy/csi-node-proxy/host/linux/blockdev"
	"github.com/csi-node-proxy/csi-node-proxy/host/linux/cifs"
	iscsiinit "github.com/csi-node-proxy/csi-node-proxy/host/linux/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/host/linux/localfs"
	"github.com/csi-node-proxy/csi-node-proxy/host/linux/systemd"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// newLinux wires the Linux backends: block devices for disks and volumes,
// the local filesystem (confined with openat2) for paths, CIFS mounts for
// SMB, open-iscsi for iSCSI and systemd for services. Their constructors
// only check configuration; nothing on the host changes until a call
// arrives.
func newLinux(cfg Config) (Set, error) {
	blocks, err := blockdev.New(blockdev.Config{
		Filesystem: cfg.LinuxFilesystem,
		// A disk with anything mounted outside the working dirs belongs
		// to the host and is never touched.
		MountRoots: cfg.WorkingDirs,
		// A disk mounted only on the host (seen in the host's table,
		// with hostPID) is the host's too.
		HostMountTable: cfg.LinuxHostMountTable,
	})
	if err != nil {
		return Set{}, fmt.Errorf("linux block backend: %w", err)
	}
	fs, err := localfs.New(cfg.WorkingDirs)
	if err != nil {
		return Set{}, fmt.Errorf("linux filesystem backend: %w", err)
	}
	smbConfig := cifs.DefaultConfig()
	smbConfig.RequirePrivacy = cfg.RequirePrivacy
	// The local link of a mapping is made beneath these, never at a
	// path a symlink could redirect.
	smbConfig.WorkingDirs = cfg.WorkingDirs
	smbHost, err := cifs.New(smbConfig)
	if err != nil {
		return Set{}, fmt.Errorf("linux SMB backend: %w", err)
	}
	// Disk numbers of iSCSI LUNs are the block backend's: its diskseq, or
	// the number it keeps for a disk without one (kernels before 5.15).
	initiator, err := iscsiinit.New(iscsiinit.Config{}, blocks.DiskNumberOf)
	if err != nil {
		return Set{}, fmt.Errorf("linux iSCSI backend: %w", err)
	}
	return Set{
		Style:      hostpath.POSIX,
		Disk:       blocks.Disk(),
		Volume:     blocks.Volume(),
		Filesystem: fs,
		SMB:        smbHost,
		ISCSI:      initiator,
		System:     systemd.New(systemd.DefaultSysfsRoot, systemd.NewDBus("")),
	}, nil
}
