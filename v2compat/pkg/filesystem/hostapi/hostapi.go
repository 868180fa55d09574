// Package api forwards to github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/filesystem/hostapi
// (upstream v2's pkg/filesystem/hostapi, whose package clause is api too).
package api

import (
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	impl "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/filesystem/hostapi"
)

// HostAPI is impl.HostAPI.
type HostAPI = impl.HostAPI

// New is impl.New.
func New() HostAPI { return impl.New() }

// NewForNode is impl.NewForNode.
func NewForNode(n groups.Node) HostAPI { return impl.NewForNode(n) }
