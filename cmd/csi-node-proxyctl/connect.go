package main

import (
	"context"
	"runtime"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
)

// opener connects to the node for a command of the CLI group cliGroup
// ("" for version and health, which probe every group themselves).
type opener func(ctx context.Context, g *globals, cliGroup string) (groups.Node, error)

// openNode is the real opener: the daemon through the client module, or
// with --local library mode in this process.
func openNode(ctx context.Context, g *globals, cliGroup string) (groups.Node, error) {
	if g.local {
		return openLocal(ctx, g)
	}
	opts := client.Options{SocketDir: g.socketDir}
	if cliGroup != "" {
		// Only the group the command calls: a daemon started with --apis
		// for some groups still answers the CLI for those.
		opts.Groups = []string{apiGroup(cliGroup)}
	}
	return client.Dial(ctx, opts)
}

// daemonWhere says where the CLI looks for the daemon, for version and
// messages.
func daemonWhere(g *globals) string {
	if runtime.GOOS == "windows" {
		return "named pipes " + client.DefaultPipePrefix + "csi-proxy-*"
	}
	return "sockets in " + g.socketDir
}
