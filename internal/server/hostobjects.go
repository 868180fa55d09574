package server

import (
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/objecthost"
)

// HostObjects answers the policy's questions about disks and volumes
// from a host's backends; see package objecthost, where it lives so that
// library mode shares it without linking this package.
type HostObjects = objecthost.HostObjects

// NewHostObjects returns the object answers of set's host, for
// Config.Objects; see objecthost.NewHostObjects.
func NewHostObjects(set hostset.Set) *HostObjects { return objecthost.NewHostObjects(set) }
