package main

import (
	"context"

	"github.com/csi-node-proxy/csi-node-proxy/cmd/internal/smbflags"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
)

// openLocal builds the node in this process (library mode) from the
// --local flags, which mean what the daemon's flags of the same names
// mean. A node that cannot be built is a usage error (exit 2): its
// constructors only check configuration (a --host this OS cannot run, a
// --sim-config that does not parse), so it is the command line that is
// wrong.
func openLocal(ctx context.Context, g *globals) (groups.Node, error) {
	n, err := inprocess.New(ctx, localOptions(g))
	if err != nil {
		return nil, &usageError{msg: "--local: " + err.Error()}
	}
	return n, nil
}

// localOptions are library mode's Options the --local flags make: each
// flag fills the Options field of the daemon flag it mirrors, and a flag
// not given leaves the field zero, which library mode reads as the
// daemon's default. The policy is read once: this process ends before a
// reload could matter, so --policy-reload-interval has no --local twin.
func localOptions(g *globals) inprocess.Options {
	return inprocess.Options{
		Host:                  g.host,
		KubeletPath:           g.kubeletPath,
		WorkingDirs:           g.workingDirs,
		AllowedServices:       g.allowedServices,
		ClearReadOnlyOnOnline: g.clearReadOnlyOnOnline,
		RequirePrivacy:        &g.requirePrivacy,
		LinuxFilesystem:       g.linuxFilesystem,
		LinuxHostMountTable:   g.linuxHostMountTable,
		LinuxDiskReadTimeout:  g.linuxDiskReadTimeout,
		SMBPermissions:        smbPermissions(&g.smb),
		SimConfigFile:         g.simConfig,
		SimDisks:              g.simDisks,
		PolicyFile:            g.policy,
		PolicyPresets:         g.policyPresets,
		AuditLog:              g.auditLog,
		AuditReads:            g.auditReads,
		AuditSync:             g.auditSync,
		NodeName:              g.nodeName,
	}
}

// localHost is the backend --local uses: --host, or this OS's real one.
func localHost(g *globals) string {
	if g.host != "" {
		return g.host
	}
	return defaultHost()
}

// smbPermissions are the SMB permissions the --smb-* flags give; nil
// when none was given, which library mode reads as the daemon's default.
func smbPermissions(v *smbflags.Values) *inprocess.SMBPermissions {
	if !v.Given {
		return nil
	}
	p := v.Permissions
	return &p
}
