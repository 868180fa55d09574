package main

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/host/windows/files"
	"github.com/csi-node-proxy/csi-node-proxy/host/windows/iscsiinit"
	"github.com/csi-node-proxy/csi-node-proxy/host/windows/services"
	"github.com/csi-node-proxy/csi-node-proxy/host/windows/smbmap"
	"github.com/csi-node-proxy/csi-node-proxy/host/windows/storage"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// hostSet is one host backend seen through the six group Host interfaces,
// with the path style its paths follow.
type hostSet struct {
	style      hostpath.Style
	disk       disk.Host
	volume     volume.Host
	filesystem filesystem.Host
	smb        smb.Host
	iscsi      iscsi.Host
	system     system.Host
}

// newHost builds the backend --host names. This is the only place that
// knows the backends; adding the real Windows and Linux backends means
// adding their cases here.
func newHost(cfg Config) (hostSet, error) {
	switch cfg.Host {
	case hostSimulated:
		sc := simulated.DefaultConfig(cfg.WorkingDirs)
		if cfg.SimConfig != "" {
			var err error
			if sc, err = simulated.LoadConfig(cfg.SimConfig); err != nil {
				return hostSet{}, err
			}
			// The daemon's working dirs must exist on the simulated
			// host whatever the file says, or every path call fails.
			sc.WorkingDirs = appendMissing(sc.WorkingDirs, cfg.WorkingDirs)
		}
		for _, spec := range cfg.SimDisks {
			d, err := simulated.ParseDiskFlag(spec)
			if err != nil {
				return hostSet{}, fmt.Errorf("-sim-disk: %w", err)
			}
			sc.Disks = append(sc.Disks, d)
		}
		h, err := simulated.New(sc)
		if err != nil {
			return hostSet{}, fmt.Errorf("simulated host: %w", err)
		}
		return hostSet{
			style:      hostpath.Windows,
			disk:       h.Disk(),
			volume:     h.Volume(),
			filesystem: h.Filesystem(),
			smb:        h.Smb(),
			iscsi:      h.Iscsi(),
			system:     h.System(),
		}, nil
	case hostWindows:
		return newWindowsHost(cfg)
	case hostLinux:
		return newLinuxHost(cfg)
	}
	return hostSet{}, fmt.Errorf("unknown host backend %q", cfg.Host)
}

// newWindowsHost wires the Windows backends. They build on every OS (so
// this file needs no build tags) but only work on Windows, so say so
// before anything is created.
func newWindowsHost(cfg Config) (hostSet, error) {
	if runtime.GOOS != "windows" {
		return hostSet{}, fmt.Errorf("--host=windows runs only on Windows; use --host=simulated to try Windows semantics on %s", runtime.GOOS)
	}
	st, err := storage.New(storage.Config{})
	if err != nil {
		return hostSet{}, fmt.Errorf("windows storage backend: %w", err)
	}
	fs, err := files.New()
	if err != nil {
		return hostSet{}, fmt.Errorf("windows filesystem backend: %w", err)
	}
	smbConfig := smbmap.DefaultConfig()
	smbConfig.RequirePrivacy = cfg.RequirePrivacy
	sm, err := smbmap.New(smbConfig)
	if err != nil {
		return hostSet{}, fmt.Errorf("windows SMB backend: %w", err)
	}
	initiator, err := iscsiinit.New()
	if err != nil {
		return hostSet{}, fmt.Errorf("windows iSCSI backend: %w", err)
	}
	svc, err := services.New()
	if err != nil {
		return hostSet{}, fmt.Errorf("windows system backend: %w", err)
	}
	return hostSet{
		style:      hostpath.Windows,
		disk:       st.Disk(),
		volume:     st.Volume(),
		filesystem: fs,
		smb:        sm,
		iscsi:      initiator,
		system:     svc,
	}, nil
}

// appendMissing appends the dirs of add that list lacks, comparing as
// Windows does, without case.
func appendMissing(list, add []string) []string {
next:
	for _, a := range add {
		for _, l := range list {
			if strings.EqualFold(a, l) {
				continue next
			}
		}
		list = append(list, a)
	}
	return list
}
