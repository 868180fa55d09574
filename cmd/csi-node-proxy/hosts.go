package main

import (
	"io"

	"github.com/csi-node-proxy/csi-node-proxy/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// hostSet is the host backend the daemon serves: a hostset.Set whose
// group backends instrumentHost may wrap with metrics, and the Set as
// built (backend), kept apart because the metrics wrappers have no Close.
type hostSet struct {
	hostset.Set
	backend io.Closer
}

// Close closes the backend as built, releasing what it holds (the Linux
// system group's D-Bus connection), rather than the possibly wrapped
// group backends hostset.Set's Close would see. A hostSet with no backend
// has nothing to close.
func (h hostSet) Close() error {
	if h.backend == nil {
		return nil
	}
	return h.backend.Close()
}

// buildHost is newHost; a test replaces it to watch the host be closed.
var buildHost = newHost

// newHost builds the backend --host names. Package hostset knows the
// backends; library mode (package inprocess) builds its hosts there too,
// so the two cannot drift apart.
func newHost(cfg Config) (hostSet, error) {
	s, err := hostset.New(hostsetConfig(cfg))
	if err != nil {
		return hostSet{}, err
	}
	return hostSet{Set: s, backend: s}, nil
}

// newGroups builds the six group services on the host, confined to the
// working directories, the way hostset does for library mode.
func newGroups(cfg Config, h hostSet) (adapter.Groups, error) {
	svc, err := h.Services(cfg.WorkingDirs, cfg.AllowedServices)
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

// hostsetConfig is the host backend's configuration the flags make.
func hostsetConfig(cfg Config) hostset.Config {
	return hostset.Config{
		Host:                 cfg.Host,
		WorkingDirs:          cfg.WorkingDirs,
		RequirePrivacy:       cfg.RequirePrivacy,
		LinuxFilesystem:      cfg.LinuxFilesystem,
		LinuxHostMountTable:  cfg.LinuxHostMountTable,
		LinuxDiskReadTimeout: cfg.LinuxDiskReadTimeout,
		SMBPermissions:       &cfg.SMBPermissions,
		Policy:               cfg.policyStore,
		SimConfigFile:        cfg.SimConfig,
		SimDisks:             cfg.SimDisks,
	}
}

// policyStore is the policy store serve has loaded; nil before it has,
// and without --policy.
func (cfg Config) policyStore() *policy.Store {
	if cfg.policy == nil {
		return nil
	}
	return cfg.policy.Load()
}
