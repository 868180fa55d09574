package metrics

import (
	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
)

// SMBMappingCensus is what the SMB mapping gauges read:
// *smbmappings.Service, whose List, Reconcile and Collect calls each take
// a census of the node's SMB global mappings.
type SMBMappingCensus interface {
	// Census returns the last census; ok is false before the first.
	Census() (c smbmappings.Census, ok bool)
}

// TrackSMBMappings makes the smb_global_mappings gauges report the last
// census of g, the node's unguarded SMB mappings Service. A nil g, or one
// that takes no census (a client stub), reports nothing.
func (m *Metrics) TrackSMBMappings(g smbmappings.Interface) {
	c, ok := g.(SMBMappingCensus)
	if m != nil && ok && c != nil {
		m.smbMaps.Track(c.Census)
	}
}
