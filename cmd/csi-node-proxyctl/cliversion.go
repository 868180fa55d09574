package main

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
	"github.com/csi-node-proxy/csi-node-proxy/internal/version"
)

// daemonBuild asks the endpoint at address (as client.Served names it,
// under upstream's name) for the daemon's build: csi-node-proxy answers
// every health check with it in the server.VersionHeader header. "" when
// the endpoint does not say (upstream csi-proxy) or does not answer.
func daemonBuild(ctx context.Context, g *globals, address string) string {
	cc, err := grpc.NewClient(transport.Target(renameEndpoint(address, g.endpointPrefix)), transport.DialOptions()...)
	if err != nil {
		return ""
	}
	defer cc.Close() //nolint:errcheck // a probe's connection; nothing to report
	var header metadata.MD
	if _, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Header(&header)); err != nil {
		return ""
	}
	if v := header.Get(server.VersionHeader); len(v) > 0 {
		return v[0]
	}
	return ""
}

// printVersion answers --version: the CLI's build, and the daemon's when
// one answers; always exit 0, since the CLI's own version is the answer
// asked for. The version command says more (every group's versions).
func (a *app) printVersion(g *globals) int {
	info := version.Get()
	say(a.stdout, "%s %s (commit %s, built %s, %s)\n", progName, info.Version, info.Commit, info.BuildDate, info.GoVersion)
	if g.local {
		say(a.stdout, "daemon: none (--local runs the calls in this process)\n")
		return exitOK
	}
	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	defer cancel()
	build := ""
	if served, err := client.Served(ctx, clientOptions(g)); err == nil && len(served) > 0 {
		build = daemonBuild(ctx, g, served[0].Address)
		if build == "" {
			build = "a daemon that does not say its build (upstream csi-proxy?)"
		}
	}
	if build == "" {
		build = fmt.Sprintf("not reachable (%s)", unreachableHint(g))
	}
	say(a.stdout, "daemon: %s\n", build)
	return exitOK
}
