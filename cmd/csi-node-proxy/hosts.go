package main

import (
	"io"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
)

// hostSet is one host backend seen through the six group Host interfaces,
// with the path style its paths follow: hostset.Set as the daemon's
// metrics wrap it (instrumentHost replaces the fields).
type hostSet struct {
	style      hostpath.Style
	disk       disk.Host
	volume     volume.Host
	filesystem filesystem.Host
	smb        smb.Host
	iscsi      iscsi.Host
	system     system.Host
	// backend is the hostset.Set the fields came from, kept because
	// instrumentHost wraps the fields: its Close releases what the
	// backends hold (the Linux system group's D-Bus connection), once
	// serving has stopped (closeHost).
	backend io.Closer
}

// buildHost is newHost; a test replaces it to watch the host be closed.
var buildHost = newHost

// newHost builds the backend --host names. Package hostset knows the
// backends; library mode (package inprocess) builds its hosts there too,
// so the two cannot drift apart.
func newHost(cfg Config) (hostSet, error) {
	s, err := hostset.New(hostset.Config{
		Host:            cfg.Host,
		WorkingDirs:     cfg.WorkingDirs,
		RequirePrivacy:  cfg.RequirePrivacy,
		LinuxFilesystem: cfg.LinuxFilesystem,
		SimConfigFile:   cfg.SimConfig,
		SimDisks:        cfg.SimDisks,
	})
	if err != nil {
		return hostSet{}, err
	}
	return hostSet{
		style:      s.Style,
		disk:       s.Disk,
		volume:     s.Volume,
		filesystem: s.Filesystem,
		smb:        s.SMB,
		iscsi:      s.ISCSI,
		system:     s.System,
		backend:    s,
	}, nil
}

// newGroups builds the six group services on the host, confined to the
// working directories, the way hostset does for library mode.
func newGroups(cfg Config, h hostSet) (adapter.Groups, error) {
	s := hostset.Set{
		Style:      h.style,
		Disk:       h.disk,
		Volume:     h.volume,
		Filesystem: h.filesystem,
		SMB:        h.smb,
		ISCSI:      h.iscsi,
		System:     h.system,
	}
	svc, err := s.Services(cfg.WorkingDirs, cfg.AllowedServices)
	if err != nil {
		return adapter.Groups{}, err
	}
	return adapter.Groups{
		Disk:       svc.Disk,
		Volume:     svc.Volume,
		Filesystem: svc.Filesystem,
		Smb:        svc.SMB,
		Iscsi:      svc.ISCSI,
		System:     svc.System,
	}, nil
}
