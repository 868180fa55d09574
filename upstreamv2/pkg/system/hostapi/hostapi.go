// Package api is upstream v2's pkg/system/hostapi (kubernetes-csi/csi-proxy
// branch library-development at e776c65; package clause api, as there):
// New returns what pkg/system.New takes. Upstream's talks to Windows; this
// one is the system group of csi-node-proxy's library-mode node (package
// upstreamv2), so every call passes the daemon's validation, policy and
// audit.
package api

import (
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	model "github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/upstreamv2"
)

// HostAPI is upstream v2's system HostAPI: here the way to the system group.
type HostAPI = upstreamv2.Host[model.Interface]

// New returns the system group of the process's shared library-mode node
// (upstreamv2.Configure, upstreamv2.SharedNode), built on first use.
func New() HostAPI { return upstreamv2.SharedHost(groups.Node.System) }

// NewForNode returns the system group of node n, for a driver or test that
// built its own node (inprocess.New). Not in upstream.
func NewForNode(n groups.Node) HostAPI { return upstreamv2.NodeHost(n, groups.Node.System) }
