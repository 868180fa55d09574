package inprocess

import "github.com/csi-node-proxy/csi-node-proxy/internal/hostset"

// ResolvedConfig returns the resolved configuration n's node was
// assembled from (hostset.Node.Config), for the option table's test.
func ResolvedConfig(n *Node) hostset.Config { return n.sec.node.Config() }
