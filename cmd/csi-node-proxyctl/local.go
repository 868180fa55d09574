package main

import (
	"context"

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
	n, err := inprocess.New(ctx, inprocess.Options{
		Host:            g.host,
		KubeletPath:     g.kubeletPath,
		WorkingDirs:     g.workingDirs,
		AllowedServices: g.allowedServices,
		LinuxFilesystem: g.linuxFilesystem,
		SimConfigFile:   g.simConfig,
		SimDisks:        g.simDisks,
		AuditLog:        g.auditLog,
		PolicyFile:      g.policy,
		RequirePrivacy:  &g.requirePrivacy,
	})
	if err != nil {
		return nil, &usageError{msg: "--local: " + err.Error()}
	}
	return n, nil
}

// localHost is the backend --local uses: --host, or this OS's real one.
func localHost(g *globals) string {
	if g.host != "" {
		return g.host
	}
	return defaultHost()
}
