// Package smbcensus reports the last census of a node's SMB global
// mappings as three Prometheus gauges, for the daemon (internal/metrics)
// and library mode (inprocess/prommetrics) alike, so both export the same
// names and help and a driver's dashboards work with either:
//
//	csi_node_proxy_smb_global_mappings                            gauge
//	csi_node_proxy_smb_global_mappings_not_ok                     gauge
//	csi_node_proxy_smb_global_mappings_observed_timestamp_seconds gauge
//
// The gauges are absent until a census exists. A scrape never takes one: a
// census lists WMI objects and walks the working directories, which a
// scrape must not trigger; the SMB mappings group takes one at each List,
// Reconcile or Collect call.
package smbcensus

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
)

// namespace prefixes the names, as every csi-node-proxy metric.
const namespace = "csi_node_proxy"

var (
	mappingsDesc = prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "smb_global_mappings"),
		"SMB global mappings on the node at the last census (the last ListSmbGlobalMappings, ReconcileSmbGlobalMapping or CollectSmbGlobalMappings call; absent before the first).", nil, nil)
	notOKDesc = prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "smb_global_mappings_not_ok"),
		"SMB global mappings whose status was not OK (Disconnected, Unavailable, ...) at the last census; absent before the first.", nil, nil)
	timeDesc = prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "smb_global_mappings_observed_timestamp_seconds"),
		"When the last census of SMB global mappings was taken, in seconds since the Unix epoch: how old the two gauges above are.", nil, nil)
)

// Source returns a node's last census; ok is false before the first.
// (*smbmappings.Service).Census is one.
type Source func() (c smbmappings.Census, ok bool)

// Collector is a prometheus.Collector of the three gauges, reporting the
// last Source given to Track; its zero value reports nothing.
type Collector struct {
	source atomic.Pointer[Source]
}

// Track makes c report src's censuses from now on; a nil src is ignored
// (the last tracked source stays).
func (c *Collector) Track(src Source) {
	if src != nil {
		c.source.Store(&src)
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- mappingsDesc
	ch <- notOKDesc
	ch <- timeDesc
}

// Collect implements prometheus.Collector: nothing before a source with a
// census, then the last census.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	p := c.source.Load()
	if p == nil {
		return
	}
	census, ok := (*p)()
	if !ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(mappingsDesc, prometheus.GaugeValue, float64(census.Mappings))
	ch <- prometheus.MustNewConstMetric(notOKDesc, prometheus.GaugeValue, float64(census.NotOK))
	ch <- prometheus.MustNewConstMetric(timeDesc, prometheus.GaugeValue, float64(census.Time.UnixNano())/1e9)
}
