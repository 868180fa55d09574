package main

import (
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/metrics"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// buildNode is hostset.NewNode; a test replaces it to watch the host be
// closed.
var buildNode = hostset.NewNode

// newNode assembles the node the flags describe (cfg.Config): package
// hostset builds the host, the group Services, the policy and the audit
// log, as it does for library mode and the CLI's --local, so the modes
// cannot drift apart. The daemon adds its hooks (nodeHooks).
func newNode(cfg Config, mx *metrics.Metrics, warnings *identityWarnings, ids identity.Options) (*hostset.Node, error) {
	return buildNode(cfg.Config, nodeHooks(cfg, mx, warnings, ids))
}

// nodeHooks is what the daemon puts around its node: the metrics
// decorators on the backends (none with metrics off), the redaction of
// the wire messages its audit records carry, and the identity warnings,
// which follow the policy in force. The gate's metrics and log are the
// server's own (server.Config).
func nodeHooks(cfg Config, mx *metrics.Metrics, warnings *identityWarnings, ids identity.Options) hostset.Hooks {
	return hostset.Hooks{
		Instrument:     func(h hostset.Set) hostset.Set { return instrumentHost(h, mx, cfg.Host) },
		PolicyReloaded: func(p *policy.Policy) { warnings.update(p, ids) },
	}
}
