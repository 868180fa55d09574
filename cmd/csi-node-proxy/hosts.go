package main

import (
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// buildHost is newHost; a test replaces it to watch the host be closed.
var buildHost = newHost

// newHost builds the backend --host names. Package hostset knows the
// backends; library mode (package inprocess) builds its hosts there too,
// so the two cannot drift apart. The Set's Closer is the backend as
// built, so instrumentHost's metrics wrappers never hide what Close must
// release.
func newHost(cfg Config) (hostset.Set, error) {
	return hostset.New(hostsetConfig(cfg))
}

// newGroups builds the six group services on the host, confined to the
// working directories the host was built for, the way hostset does for
// library mode.
func newGroups(cfg Config, h hostset.Set) (groups.Set, error) {
	return h.Services(cfg.AllowedServices)
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
