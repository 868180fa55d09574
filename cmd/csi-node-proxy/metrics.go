package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/internal/callgate"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/metrics"
	"github.com/csi-node-proxy/csi-node-proxy/internal/metrics/hostmetrics"
	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
	"github.com/csi-node-proxy/csi-node-proxy/internal/version"
)

// Paths of the read-only JSON documents on the metrics listener.
const (
	// versionPath is the daemon's build and how it serves (buildDoc).
	versionPath = "/version"
	// deprecatedPath lists the callers of deprecated API versions
	// (server.DeprecatedReport); csi-node-proxyctl deprecations reads it.
	deprecatedPath = "/deprecated"
)

// buildDoc is the /version document.
type buildDoc struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	BuildDate      string `json:"build_date"`
	GoVersion      string `json:"go_version"`
	Host           string `json:"host"`
	EndpointPrefix string `json:"endpoint_prefix"`
}

// httpExtras is what the metrics listener serves besides /metrics and
// /healthz: /readyz, which asks the server once it exists (before, the
// daemon is not ready) and the container runtime (runtimeReadiness), and
// shows the identity warnings once there are any, and the JSON
// documents.
func httpExtras(cfg Config, live *atomic.Pointer[server.Server], warnings *atomic.Pointer[identityWarnings], rt *atomic.Pointer[runtimeReadiness], deps *server.Deprecations) metrics.Extra {
	return metrics.Extra{
		Warnings: func() []string { return append(warnings.Load().get(), rt.Load().warnings()...) },
		Ready: func(ctx context.Context) error {
			s := live.Load()
			if s == nil {
				return errors.New("starting")
			}
			return errors.Join(s.Ready(ctx), rt.Load().check(ctx))
		},
		// A policy that admits no driver leaves the node ready (a restart
		// would not cure it) but degraded, and /readyz?verbose says why.
		Checks: []metrics.ReadyCheck{{
			Name:         server.PolicyAdmitsNobodyCheck,
			Check:        func(context.Context) error { return warnings.Load().admitsNobody() },
			DegradedOnly: true,
		}},
		JSON: map[string]func() any{
			versionPath: func() any {
				v := version.Get()
				return buildDoc{Version: v.Version, Commit: v.Commit, BuildDate: v.BuildDate, GoVersion: v.GoVersion,
					Host: cfg.Host, EndpointPrefix: cfg.EndpointPrefix}
			},
			deprecatedPath: func() any { return deps.Report() },
		},
	}
}

// metricsShutdownTimeout bounds how long a scrape in progress may delay
// the daemon's exit once the endpoints have stopped.
const metricsShutdownTimeout = 5 * time.Second

// startMetrics serves /metrics, /healthz and x (/readyz and the JSON
// documents) on -metrics-bind-address (upstream's flag) before anything
// else starts, so that a bad address stops the daemon at once. The address is logged as bound ("Serving
// metrics" address=...), port 0 included. With the flag empty, the
// default, metrics are off: nil Metrics (which records nothing and adds no
// interceptor) and a stop that does nothing. stop shuts the HTTP server
// down gracefully; call it after the endpoints have stopped, so the last
// calls can still be scraped while they drain.
func startMetrics(cfg Config, x metrics.Extra) (m *metrics.Metrics, stop func(), err error) {
	if cfg.MetricsBindAddress == "" {
		return nil, func() {}, nil
	}
	m = metrics.New(version.Get())
	srv, err := metrics.Serve(cfg.MetricsBindAddress, m, x)
	if err != nil {
		return nil, nil, err
	}
	paths := []string{"/metrics", "/healthz", "/livez", "/readyz"}
	for p := range x.JSON {
		paths = append(paths, p)
	}
	slices.Sort(paths[4:])
	klog.InfoS("Serving metrics", "address", srv.Addr(), "paths", strings.Join(paths, " "))
	return m, func() {
		ctx, cancel := context.WithTimeout(context.Background(), metricsShutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			klog.ErrorS(err, "Stopping the metrics server")
		}
	}, nil
}

// instrumentHost times every operation of h's backends into m's
// csi_node_proxy_host_operation_duration_seconds, labelled with backend
// (--host). With metrics off (nil m) h is returned unchanged.
func instrumentHost(h hostset.Set, m *metrics.Metrics, backend string) hostset.Set {
	if m == nil {
		return h
	}
	o := m.HostObserver(backend)
	h.Disk = hostmetrics.Disk(h.Disk, o)
	h.Volume = hostmetrics.Volume(h.Volume, o)
	h.Filesystem = hostmetrics.Filesystem(h.Filesystem, o)
	h.SMB = hostmetrics.SMB(h.SMB, o)
	h.ISCSI = hostmetrics.ISCSI(h.ISCSI, o)
	h.System = hostmetrics.System(h.System, o)
	if h.SMBMappings != nil {
		h.SMBMappings = hostmetrics.SMBMappings(h.SMBMappings, o)
	}
	return h
}

// trackSecurity makes m report the audit log's write failures and the
// policy's reload failures, of the node's gate g. Nothing happens with
// metrics off.
func trackSecurity(m *metrics.Metrics, g callgate.Gate) {
	m.TrackAudit(g.Audit)
	m.TrackPolicy(g.Policy)
}
