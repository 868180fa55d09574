// Package metrics is the daemon's Prometheus instrumentation: the gRPC
// server metrics upstream csi-proxy exports (under the same names, labels,
// types and buckets, so existing dashboards keep working) and
// csi-node-proxy's own, all on a private registry served over HTTP by
// Serve.
//
// Upstream csi-proxy v1.3.0 (pkg/server/metrics/metrics.go) registers
// go-grpc-middleware's providers/prometheus ServerMetrics with the handling
// time histogram on and the buckets in HandlingTimeBuckets, on k8s
// component-base's legacy registry (which adds the Go and process
// collectors). This package reimplements those series with client_golang
// alone:
//
//	grpc_server_started_total{grpc_type,grpc_service,grpc_method}                counter
//	grpc_server_handled_total{grpc_type,grpc_service,grpc_method,grpc_code}      counter
//	grpc_server_msg_received_total{grpc_type,grpc_service,grpc_method}           counter
//	grpc_server_msg_sent_total{grpc_type,grpc_service,grpc_method}               counter
//	grpc_server_handling_seconds{grpc_type,grpc_service,grpc_method}             histogram
//
// grpc_service is the full service name, e.g. "v1.Disk" or
// "v1beta1.Filesystem". Every group-version has a service name of its own
// (four groups share the package v1, but not a service), so these series
// tell the group and version apart without an extra label; only the
// health service, grpc.health.v1.Health, is served on every endpoint under
// one name. As upstream, series appear with the first call (they are not
// pre-initialised), and a method no endpoint serves never reaches the
// interceptors, so clients cannot create series.
//
// csi-node-proxy's own metrics:
//
//	csi_node_proxy_build_info{version,commit,go_version}                          gauge, always 1
//	csi_node_proxy_in_flight_calls{group,version}                                 gauge
//	csi_node_proxy_calls_total{group,version,method,code,rule}                    counter
//	csi_node_proxy_deprecated_api_calls_total{group,version,rule}                 counter
//	csi_node_proxy_denied_calls_total{group,version,method,reason}                counter
//	csi_node_proxy_host_operation_duration_seconds{backend,group,operation,code}  histogram
//	csi_node_proxy_audit_write_failures_total                                     counter
//	csi_node_proxy_audit_torn_writes_total                                        counter
//	csi_node_proxy_audit_log_healthy                                              gauge, 1 or 0
//	csi_node_proxy_audit_suppressed_denials_total                                 counter
//	csi_node_proxy_policy_reload_failures_total                                   counter
//	csi_node_proxy_smb_global_mappings                                            gauge
//	csi_node_proxy_smb_global_mappings_not_ok                                     gauge
//	csi_node_proxy_smb_global_mappings_observed_timestamp_seconds                 gauge
//
// plus the standard go_* and process_* collectors and the scrape handler's
// promhttp_metric_handler_* series.
//
// No label value is ever taken from a request: labels hold group, version,
// service and method names, codes, fixed reasons and the names of the
// policy's rules (the operator's own words, as many as the policy has
// rules, plus "none"), never a path, volume ID, share, user name or secret.
package metrics

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/callgate"
	"github.com/csi-node-proxy/csi-node-proxy/internal/metrics/smbcensus"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/version"
)

// Namespace prefixes csi-node-proxy's own metric names.
const Namespace = "csi_node_proxy"

// HandlingTimeBuckets are the bucket bounds, in seconds, of
// grpc_server_handling_seconds: upstream csi-proxy's, from 1 ms to the
// kubelet's two-minute operation timeout. host_operation_duration_seconds
// uses them too, so the two histograms can be compared bucket by bucket.
var HandlingTimeBuckets = []float64{0.001, 0.01, 0.1, 0.3, 0.6, 1, 3, 6, 9, 20, 30, 60, 90, 120}

// The reasons of denied_calls_total: a small fixed set, never the policy's
// free-text reason (which quotes paths). The call gate decides them
// (package callgate); these are its names.
const (
	// DeniedNoRule: the policy has no rule that lets the caller call the
	// method.
	DeniedNoRule = callgate.DeniedNoRule
	// DeniedPath: a rule allows the caller and method, but a path in the
	// request lies outside the rule's path roots (or the request cannot
	// be inspected).
	DeniedPath = callgate.DeniedPath
	// DeniedAuditUnavailable: the call would change the node while the
	// audit log cannot be written, so it was refused (codes.Unavailable).
	DeniedAuditUnavailable = callgate.DeniedAuditUnavailable
	// DeniedCallerExited: the process that opened the call's connection
	// has exited, so the connection was handed on to a process nobody
	// identified, and the call was refused (codes.Unauthenticated), with
	// or without a policy.
	DeniedCallerExited = callgate.DeniedCallerExited
)

// gRPC call types, the values of grpc_type, as go-grpc-middleware names
// them.
const (
	typeUnary        = "unary"
	typeClientStream = "client_stream"
	typeServerStream = "server_stream"
	typeBidiStream   = "bidi_stream"
)

// Metrics holds the daemon's collectors on a private registry (never
// Prometheus' global default one). Create it with New. A nil *Metrics is
// valid and records nothing, so callers need not check whether metrics
// are on.
type Metrics struct {
	reg *prometheus.Registry

	started     *prometheus.CounterVec
	handled     *prometheus.CounterVec
	msgReceived *prometheus.CounterVec
	msgSent     *prometheus.CounterVec
	handling    *prometheus.HistogramVec

	inFlight     *prometheus.GaugeVec
	denied       *prometheus.CounterVec
	hostDuration *prometheus.HistogramVec
	calls        *prometheus.CounterVec
	deprecated   *prometheus.CounterVec

	auditLog atomic.Pointer[audit.Logger]
	policy   atomic.Pointer[policy.Store]
	// delayedRefusals reports the server's paced refusals
	// (TrackDelayedRefusals).
	delayedRefusals atomic.Pointer[func() uint64]
	smbMaps         smbcensus.Collector // the SMB mapping gauges (TrackSMBMappings)
}

// New creates the collectors and registers them, with the Go and process
// collectors and build_info for build, on a new registry.
func New(build version.Info) *Metrics {
	grpcLabels := []string{"grpc_type", "grpc_service", "grpc_method"}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		// Names, help texts and labels as go-grpc-middleware's
		// providers/prometheus ServerMetrics.
		started: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_started_total",
			Help: "Total number of RPCs started on the server.",
		}, grpcLabels),
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_handled_total",
			Help: "Total number of RPCs completed on the server, regardless of success or failure.",
		}, []string{"grpc_type", "grpc_service", "grpc_method", "grpc_code"}),
		msgReceived: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_msg_received_total",
			Help: "Total number of RPC stream messages received on the server.",
		}, grpcLabels),
		msgSent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_msg_sent_total",
			Help: "Total number of gRPC stream messages sent by the server.",
		}, grpcLabels),
		handling: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "grpc_server_handling_seconds",
			Help:    "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.",
			Buckets: HandlingTimeBuckets,
		}, grpcLabels),

		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace,
			Name:      "in_flight_calls",
			Help:      "API calls being handled now, by endpoint group and version (health checks are not counted).",
		}, []string{"group", "version"}),
		denied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "denied_calls_total",
			Help:      "Calls refused before they ran: by the authorisation policy (reason no_rule or path), because the audit log could not be written (reason audit_unavailable), or because the process that opened the connection has exited (reason caller_exited).",
		}, []string{"group", "version", "method", "reason"}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "calls_total",
			Help:      "API calls completed, by endpoint group and version, method, gRPC code and the name of the policy rule that allowed the call (none: no policy, or no rule allowed it); health checks are not counted.",
		}, []string{"group", "version", "method", "code", "rule"}),
		deprecated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "deprecated_api_calls_total",
			Help:      "API calls on a group-version upstream csi-proxy deprecated (a v1alpha* or v1beta* of a group that has v1), by group, version and the policy rule that allowed the call (none without a policy); callers behind these must move to v1 before an upgrade drops them.",
		}, []string{"group", "version", "rule"}),
		hostDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace,
			Name:      "host_operation_duration_seconds",
			Help:      "Time the host backend took for one operation, by backend, group, operation (the group's Host method) and outcome (gRPC code name of the error kind).",
			Buckets:   HandlingTimeBuckets,
		}, []string{"backend", "group", "operation", "code"}),
	}
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace:   Namespace,
		Name:        "build_info",
		Help:        "Always 1; the labels identify the running build.",
		ConstLabels: prometheus.Labels{"version": build.Version, "commit": build.Commit, "go_version": build.GoVersion},
	})
	buildInfo.Set(1)
	auditFailures := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: Namespace,
		Name:      "audit_write_failures_total",
		Help:      "Audit records that could not be written (0 when no audit log is configured). While they fail, calls that change the node are refused.",
	}, func() float64 {
		if l := m.auditLog.Load(); l != nil {
			return float64(l.Failures())
		}
		return 0
	})
	auditTorn := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: Namespace,
		Name:      "audit_torn_writes_total",
		Help:      "Audit records whose write failed after part of them reached the file (a short write on a full disk, EIO, a failed fsync with --audit-sync): each was cut back to the last complete record, or the next record began on a new line (0 when no audit log is configured).",
	}, func() float64 {
		if l := m.auditLog.Load(); l != nil {
			return float64(l.TornWrites())
		}
		return 0
	})
	auditSuppressed := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: Namespace,
		Name:      "audit_suppressed_denials_total",
		Help:      "Denied calls and reads not written to the audit log: a caller's denials, reads (--audit-reads) and would-deny reads (audit-only policy) past its rate (a burst of 100 of each, then one per 10 s; its next record of the kind counts them, or a \"summary\" record does when none comes), and denials and reads while the audit file system has less than 16 MiB free, kept for the records of changes (0 when no audit log is configured).",
	}, func() float64 {
		if l := m.auditLog.Load(); l != nil {
			return float64(l.Suppressed())
		}
		return 0
	})
	auditHealthy := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace,
		Name:      "audit_log_healthy",
		Help:      "1 while the audit log's last write succeeded (or nothing was written yet), 0 after a failed one until a write succeeds again: while 0, calls that change the node are refused. 1 when no audit log is configured.",
	}, func() float64 {
		if l := m.auditLog.Load(); l != nil && !l.Healthy() {
			return 0
		}
		return 1
	})
	policyFailures := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: Namespace,
		Name:      "policy_reload_failures_total",
		Help:      "Policy reloads that found the file unreadable or invalid and kept the previous policy (each distinct content or error counts once; 0 without a policy).",
	}, func() float64 {
		if s := m.policy.Load(); s != nil {
			return float64(s.Failures())
		}
		return 0
	})
	delayedRefusals := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: Namespace,
		Name:      "delayed_refusals_total",
		Help:      "Calls held back because their caller, under a policy, was past its pace of refusals (by default a burst of 200, then 100 a second per caller): refused calls (PermissionDenied, Unauthenticated, InvalidArgument, and ResourceExhausted past the caller's calls in progress) answered up to 1 s later than decided, and calls of a caller a whole second behind held up to 1 s before they ran.",
	}, func() float64 {
		if f := m.delayedRefusals.Load(); f != nil {
			return float64((*f)())
		}
		return 0
	})
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.started, m.handled, m.msgReceived, m.msgSent, m.handling,
		m.inFlight, m.denied, m.hostDuration, m.calls, m.deprecated,
		buildInfo, auditFailures, auditTorn, auditSuppressed, auditHealthy, policyFailures, delayedRefusals,
		&m.smbMaps,
	)
	return m
}

// Registry returns the registry every metric is on, for tests and for
// collectors added later.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// TrackAudit makes audit_write_failures_total, audit_torn_writes_total,
// audit_suppressed_denials_total and audit_log_healthy report l's
// failures, torn writes, suppressed denials and reads, and health. A nil l leaves
// the counters at 0 and the gauge at 1.
func (m *Metrics) TrackAudit(l *audit.Logger) {
	if m != nil && l != nil {
		m.auditLog.Store(l)
	}
}

// TrackDelayedRefusals makes delayed_refusals_total report f, the count
// of refused calls whose answer waited for their caller's turn. A nil f
// leaves it at 0.
func (m *Metrics) TrackDelayedRefusals(f func() uint64) {
	if m != nil && f != nil {
		m.delayedRefusals.Store(&f)
	}
}

// TrackPolicy makes policy_reload_failures_total report s's failures. A
// nil s leaves it at 0.
func (m *Metrics) TrackPolicy(s *policy.Store) {
	if m != nil && s != nil {
		m.policy.Store(s)
	}
}

// Handler serves the registry in the Prometheus exposition formats,
// instrumented with promhttp_metric_handler_* series. A scrape that takes
// longer than timeout is answered 503.
func (m *Metrics) Handler(timeout time.Duration) http.Handler {
	return promhttp.InstrumentMetricHandler(m.reg, promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      errorLog{},
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.reg,
		// Scrapes are rare; more than a few at once is a misbehaving
		// client, which must not make the daemon gather in parallel.
		MaxRequestsInFlight: 4,
		Timeout:             timeout,
	}))
}

// errorLog sends the handler's gathering errors to klog.
type errorLog struct{}

// Println logs v as one error line.
func (errorLog) Println(v ...any) {
	klog.ErrorS(nil, "Gathering metrics for a scrape", "problem", strings.TrimSpace(fmt.Sprintln(v...)))
}

// Endpoint names the group-version an interceptor instruments.
type Endpoint struct {
	// Group and Version are the endpoint's API group-version, the labels
	// of in_flight_calls.
	Group, Version string
	// Service is the endpoint's API service ("v1.Disk"). Calls of other
	// services on the endpoint (the health service) are not counted as
	// in flight.
	Service string
}

// UnaryServerInterceptor returns the interceptor that records the
// grpc_server_* series and in_flight_calls for unary calls on ep. Put it
// first in the chain, so it sees each call as the client does: after
// panic recovery and error mapping. It also creates ep's in_flight_calls
// series at 0, so every served endpoint shows one. A nil Metrics returns
// an interceptor that only calls the handler.
func (m *Metrics) UnaryServerInterceptor(ep Endpoint) grpc.UnaryServerInterceptor {
	if m == nil {
		return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			return handler(ctx, req)
		}
	}
	inFlight := m.inFlight.WithLabelValues(ep.Group, ep.Version)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		service, method := splitFullMethod(info.FullMethod)
		m.started.WithLabelValues(typeUnary, service, method).Inc()
		m.msgReceived.WithLabelValues(typeUnary, service, method).Inc()
		api := service == ep.Service
		var labels *callLabels
		if api {
			inFlight.Inc()
			defer inFlight.Dec()
			labels = &callLabels{}
			ctx = context.WithValue(ctx, callLabelsKey{}, labels)
		}
		resp, err := handler(ctx, req)
		code := status.Code(err).String()
		// As go-grpc-middleware: a unary call sends its one message
		// whether it failed or not.
		m.msgSent.WithLabelValues(typeUnary, service, method).Inc()
		m.handled.WithLabelValues(typeUnary, service, method, code).Inc()
		m.handling.WithLabelValues(typeUnary, service, method).Observe(time.Since(start).Seconds())
		if api {
			m.calls.WithLabelValues(ep.Group, ep.Version, method, code, RuleLabel(labels.rule)).Inc()
		}
		return resp, err
	}
}

// StreamServerInterceptor returns the interceptor that records the
// grpc_server_* series for streaming calls (the APIs have none; the health
// service's Watch is one): started when the stream opens, a message each
// time one is received or sent, handled and the handling time when it
// ends. A nil Metrics returns an interceptor that only calls the handler.
func (m *Metrics) StreamServerInterceptor() grpc.StreamServerInterceptor {
	if m == nil {
		return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			return handler(srv, ss)
		}
	}
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		start := time.Now()
		service, method := splitFullMethod(info.FullMethod)
		typ := streamType(info)
		m.started.WithLabelValues(typ, service, method).Inc()
		err := handler(srv, &countingStream{
			ServerStream: ss,
			received:     m.msgReceived.WithLabelValues(typ, service, method),
			sent:         m.msgSent.WithLabelValues(typ, service, method),
		})
		m.handled.WithLabelValues(typ, service, method, status.Code(err).String()).Inc()
		m.handling.WithLabelValues(typ, service, method).Observe(time.Since(start).Seconds())
		return err
	}
}

// callLabels carries what is learned about a call below the metrics
// interceptor (which policy rule allowed it) back up to it.
type callLabels struct{ rule string }

type callLabelsKey struct{}

// NoRule is the rule label of a call no policy rule allowed: there is no
// policy, or the policy denied the call.
const NoRule = "none"

// RuleLabel is the rule label of a call allowed by the named rule: the
// name itself, or NoRule for "". Rule names are the policy's (at most 63
// characters of [A-Za-z0-9._-], unique), so the label has as many values
// as the policy has rules, plus NoRule.
func RuleLabel(rule string) string {
	if rule == "" {
		return NoRule
	}
	return rule
}

// SetRule records, for the call of ctx, the name of the policy rule that
// allowed it, for the rule label of calls_total. The server's
// interceptors call it once the policy has decided; without the metrics
// interceptor above (metrics off, or a health check) it does nothing.
func SetRule(ctx context.Context, rule string) {
	if l, ok := ctx.Value(callLabelsKey{}).(*callLabels); ok {
		l.rule = rule
	}
}

// DeprecatedCall counts a call on a group-version upstream deprecated,
// allowed by the named policy rule ("" for none).
func (m *Metrics) DeprecatedCall(group, version, rule string) {
	if m == nil {
		return
	}
	m.deprecated.WithLabelValues(group, version, RuleLabel(rule)).Inc()
}

// countingStream counts the messages a stream receives and sends, as
// go-grpc-middleware does: every attempt, failed or not.
type countingStream struct {
	grpc.ServerStream
	received, sent prometheus.Counter
}

// SendMsg sends m and counts it.
func (s *countingStream) SendMsg(m any) error {
	err := s.ServerStream.SendMsg(m)
	s.sent.Inc()
	return err
}

// RecvMsg receives m and counts it.
func (s *countingStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	s.received.Inc()
	return err
}

// streamType is grpc_type of a streaming call.
func streamType(info *grpc.StreamServerInfo) string {
	switch {
	case info.IsClientStream && !info.IsServerStream:
		return typeClientStream
	case !info.IsClientStream && info.IsServerStream:
		return typeServerStream
	}
	return typeBidiStream
}

// splitFullMethod splits "/v1.Disk/PartitionDisk" into "v1.Disk" and
// "PartitionDisk", as go-grpc-middleware does.
func splitFullMethod(fullMethod string) (service, method string) {
	fullMethod = strings.TrimPrefix(fullMethod, "/")
	if i := strings.Index(fullMethod, "/"); i >= 0 {
		return fullMethod[:i], fullMethod[i+1:]
	}
	return "unknown", "unknown"
}

// CallDenied counts a call refused before it ran. method is the method's
// name (PartitionDisk), reason one of the Denied constants.
func (m *Metrics) CallDenied(group, version, method, reason string) {
	if m == nil {
		return
	}
	m.denied.WithLabelValues(group, version, method, reason).Inc()
}

// GateHook returns the call gate's metrics hook for the daemon's
// endpoints (callgate.Gate.Metrics), or nil for a nil Metrics. It counts
// refusals in denied_calls_total. Calls themselves (in_flight_calls,
// calls_total and the grpc_server_* series) are counted by
// UnaryServerInterceptor instead, outermost, so they are seen as the
// client sees them: after panic recovery and error mapping, health
// checks included in the grpc_server_* series.
func (m *Metrics) GateHook() callgate.Metrics {
	if m == nil {
		return nil
	}
	return gateHook{m}
}

// gateHook is GateHook's callgate.Metrics.
type gateHook struct{ m *Metrics }

// CallStarted does nothing: UnaryServerInterceptor counts the call.
func (gateHook) CallStarted(string, string, string) {}

// CallDone does nothing: UnaryServerInterceptor counts the call.
func (gateHook) CallDone(string, string, string, string, string, time.Duration) {}

// CallDenied counts the refusal in denied_calls_total.
func (h gateHook) CallDenied(group, version, method, reason string) {
	h.m.CallDenied(group, version, method, reason)
}

// HostObserver records the host operations of one backend in
// host_operation_duration_seconds. Get one from Metrics.HostObserver; the
// zero HostObserver records nothing.
type HostObserver struct {
	m       *Metrics
	backend string
}

// HostObserver returns the observer of the named backend (windows, linux,
// simulated).
func (m *Metrics) HostObserver(backend string) HostObserver {
	return HostObserver{m: m, backend: backend}
}

// ObserveHostOperation records that the group's Host method operation
// took d and ended with err, labelled with err's gRPC code name (OK,
// NotFound, Internal, ...; see errgrpc.Code).
func (o HostObserver) ObserveHostOperation(group, operation string, d time.Duration, err error) {
	if o.m == nil {
		return
	}
	o.m.hostDuration.WithLabelValues(o.backend, group, operation, errgrpc.Code(err).String()).Observe(d.Seconds())
}
