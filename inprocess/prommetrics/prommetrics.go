// Package prommetrics counts library mode's calls on a Prometheus
// registry, under the daemon's metric names, so a driver that calls the
// groups in-process (package inprocess) keeps the dashboards and alerts
// written for the daemon:
//
//	csi_node_proxy_in_flight_calls{group,version}                 gauge
//	csi_node_proxy_calls_total{group,version,method,code,rule}    counter
//	csi_node_proxy_denied_calls_total{group,version,method,reason} counter
//	csi_node_proxy_smb_global_mappings                            gauge
//	csi_node_proxy_smb_global_mappings_not_ok                     gauge
//	csi_node_proxy_smb_global_mappings_observed_timestamp_seconds gauge
//
// The SMB mapping gauges report the census the Node's SMB mappings group
// took at its last ListSmbGlobalMappings, ReconcileSmbGlobalMapping or
// CollectSmbGlobalMappings call (inprocess.SMBMappingsTracker; New hands
// it over), absent before the first; a scrape takes no census.
//
// version is always inprocess.Version; rule is the allowing policy rule,
// "none" without one; code is gRPC's name of the outcome. The daemon's
// grpc_server_* series are left out: library mode has no gRPC server to
// report on. A driver that does not import this package links no
// Prometheus: inprocess.Options.Metrics is a plain interface.
//
//	m, err := prommetrics.New(prometheus.DefaultRegisterer)
//	node, err := inprocess.New(ctx, inprocess.Options{Metrics: m})
package prommetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
	"github.com/csi-node-proxy/csi-node-proxy/internal/metrics/smbcensus"
)

// Namespace prefixes every metric name, as the daemon's.
const Namespace = "csi_node_proxy"

// NoRule is the rule label of a call no policy rule allowed, as the
// daemon's.
const NoRule = "none"

// Metrics implements inprocess.Metrics on Prometheus collectors.
type Metrics struct {
	inFlight *prometheus.GaugeVec
	calls    *prometheus.CounterVec
	denied   *prometheus.CounterVec
	// census reports the tracked Node's last SMB mapping census,
	// nothing until inprocess.New hands one over.
	census smbcensus.Collector
}

var (
	_ inprocess.Metrics            = (*Metrics)(nil)
	_ inprocess.SMBMappingsTracker = (*Metrics)(nil)
)

// TrackSMBMappings makes the SMB mapping gauges report census, a Node's
// (inprocess.New calls it); the last Node built with m wins.
func (m *Metrics) TrackSMBMappings(census func() (smbmappings.Census, bool)) {
	m.census.Track(census)
}

// New creates the collectors and registers them on reg (for example
// prometheus.DefaultRegisterer, or the driver's own registry). It fails
// when reg already has collectors of these names, as when two Nodes
// register on one registry: create one Metrics and give it to both.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "in_flight_calls",
			Help: "API calls being handled now, by group and version.",
		}, []string{"group", "version"}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "calls_total",
			Help: "API calls completed, by group and version, method, gRPC code name and the name of the policy rule that allowed the call (none: no policy, or no rule allowed it).",
		}, []string{"group", "version", "method", "code", "rule"}),
		denied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "denied_calls_total",
			Help: "Calls refused before they ran: by the authorisation policy (reason no_rule or path), or because the audit log could not be written (reason audit_unavailable).",
		}, []string{"group", "version", "method", "reason"}),
	}
	for _, c := range []prometheus.Collector{m.inFlight, m.calls, m.denied, &m.census} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// CallStarted counts the call in flight.
func (m *Metrics) CallStarted(group, version, _ string) {
	m.inFlight.WithLabelValues(group, version).Inc()
}

// CallDone ends the call: no longer in flight, counted with its code and
// rule. The duration is not kept (see the package doc).
func (m *Metrics) CallDone(group, version, method, code, rule string, _ time.Duration) {
	m.inFlight.WithLabelValues(group, version).Dec()
	if rule == "" {
		rule = NoRule
	}
	m.calls.WithLabelValues(group, version, method, code, rule).Inc()
}

// CallDenied counts a refusal with its reason.
func (m *Metrics) CallDenied(group, version, method, reason string) {
	m.denied.WithLabelValues(group, version, method, reason).Inc()
}
