package main

import (
	"context"
	"net"
	"runtime"
	"strings"

	"google.golang.org/grpc"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// opener connects to the node for a command of the CLI group cliGroup
// ("" for version and health, which probe every group themselves).
type opener func(ctx context.Context, g *globals, cliGroup string) (groups.Node, error)

// openNode is the real opener: the daemon through package client, as a
// driver reaches it, or with --local library mode in this process.
func openNode(ctx context.Context, g *globals, cliGroup string) (groups.Node, error) {
	if g.local {
		return openLocal(ctx, g)
	}
	opts := clientOptions(g)
	if cliGroup != "" {
		// Only the group the command calls: a daemon started with --apis
		// for some groups still answers the CLI for those.
		opts.Groups = []string{apiGroup(cliGroup)}
	}
	return client.Dial(ctx, opts)
}

// clientOptions are the client's options for the daemon the global flags
// name. Another --endpoint-prefix is reached through a dialer that renames
// the endpoint the client asks for (client.Endpoint's upstream name): the
// client's GRPCOptions come after its own dialer, so this one replaces it.
func clientOptions(g *globals) client.Options {
	opts := client.Options{SocketDir: g.socketDir}
	if g.endpointPrefix != "" && g.endpointPrefix != transport.DefaultEndpointPrefix {
		opts.GRPCOptions = []grpc.DialOption{grpc.WithContextDialer(prefixDialer(g.endpointPrefix))}
	}
	return opts
}

// prefixDialer dials the endpoint of address under prefix instead of
// upstream's name.
func prefixDialer(prefix string) func(context.Context, string) (net.Conn, error) {
	return func(ctx context.Context, address string) (net.Conn, error) {
		return transport.Dial(ctx, renameEndpoint(address, prefix))
	}
}

// renameEndpoint replaces the upstream prefix of the endpoint name at the
// end of address (a socket path or a pipe path) with prefix.
func renameEndpoint(address, prefix string) string {
	i := strings.LastIndexAny(address, `/\`) + 1
	if rest, ok := strings.CutPrefix(address[i:], transport.DefaultEndpointPrefix+"-"); ok {
		return address[:i] + prefix + "-" + rest
	}
	return address
}

// daemonWhere says where the CLI looks for the daemon, for version and
// messages.
func daemonWhere(g *globals) string {
	prefix := g.endpointPrefix
	if prefix == "" {
		prefix = transport.DefaultEndpointPrefix
	}
	if runtime.GOOS == "windows" {
		return "named pipes " + client.DefaultPipePrefix + prefix + "-*"
	}
	if prefix != transport.DefaultEndpointPrefix {
		return "sockets in " + g.socketDir + " named " + prefix + "-*"
	}
	return "sockets in " + g.socketDir
}

// unreachableHint tells an operator whose daemon cannot be reached where
// the CLI looked and which flag points it elsewhere.
func unreachableHint(g *globals) string {
	if g.local {
		return ""
	}
	if runtime.GOOS == "windows" {
		return "is csi-node-proxy running? looked for " + daemonWhere(g) + "; a daemon with another --endpoint-prefix needs the same --endpoint-prefix here"
	}
	return "is csi-node-proxy running? looked for " + daemonWhere(g) + "; point --socket-dir (and --endpoint-prefix) at the daemon's"
}
