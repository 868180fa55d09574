package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

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
		m.smbMaps.Store(&c)
	}
}

var (
	smbMappingsDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "smb_global_mappings"),
		"SMB global mappings on the node at the last census (the last ListSmbGlobalMappings, ReconcileSmbGlobalMapping or CollectSmbGlobalMappings call; absent before the first).", nil, nil)
	smbMappingsNotOKDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "smb_global_mappings_not_ok"),
		"SMB global mappings whose status was not OK (Disconnected, Unavailable, ...) at the last census; absent before the first.", nil, nil)
	smbMappingsTimeDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "smb_global_mappings_observed_timestamp_seconds"),
		"When the last census of SMB global mappings was taken, in seconds since the Unix epoch: how old the two gauges above are.", nil, nil)
)

// smbMappingsCollector reports the last census without taking one: a
// census lists WMI objects and walks the working directories, which a
// scrape must not trigger.
type smbMappingsCollector struct{ m *Metrics }

// Describe implements prometheus.Collector.
func (c smbMappingsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- smbMappingsDesc
	ch <- smbMappingsNotOKDesc
	ch <- smbMappingsTimeDesc
}

// Collect implements prometheus.Collector.
func (c smbMappingsCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.m.smbMaps.Load()
	if p == nil {
		return
	}
	census, ok := (*p).Census()
	if !ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(smbMappingsDesc, prometheus.GaugeValue, float64(census.Mappings))
	ch <- prometheus.MustNewConstMetric(smbMappingsNotOKDesc, prometheus.GaugeValue, float64(census.NotOK))
	ch <- prometheus.MustNewConstMetric(smbMappingsTimeDesc, prometheus.GaugeValue, float64(census.Time.UnixNano())/1e9)
}
