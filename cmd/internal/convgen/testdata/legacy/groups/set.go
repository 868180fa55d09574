// Package groups is the golden test's stand-in for the model root: the
// generated registries bind each group to its field of Set.
package groups

import "github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/legacy/groups/gizmo"

// Set holds one implementation of each group.
type Set struct {
	// Gizmo is the gizmo group.
	Gizmo gizmo.Interface
}
