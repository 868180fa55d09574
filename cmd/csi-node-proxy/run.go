package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sync/atomic"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/metrics"
	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
	"github.com/csi-node-proxy/csi-node-proxy/internal/version"
	"github.com/csi-node-proxy/csi-node-proxy/internal/winsvc"
)

// checkStartup refuses what this build cannot do, before anything is
// created: better a clear error at start than a daemon that ignores a flag
// the operator relies on.
func checkStartup(cfg Config) error {
	if cfg.WindowsService && runtime.GOOS != "windows" {
		return errors.New("-windows-service is only available on Windows")
	}
	return nil
}

// run serves cfg until SIGTERM or SIGINT, then shuts down gracefully: the
// endpoints disappear at once, calls in flight get cfg.ShutdownTimeout to
// finish. It returns nil after a clean shutdown. With -windows-service it
// runs under the service control manager instead (service.go), whose Stop
// and Shutdown end serve as the signals do.
func run(cfg Config) error {
	if err := checkStartup(cfg); err != nil {
		return err
	}
	if cfg.WindowsService {
		return runService(cfg)
	}
	return serve(context.Background(), cfg, noNotifier{})
}

// serve is run's body: it serves cfg until parent is done or SIGTERM or
// SIGINT arrives, then calls shutdown (lifecycle.go). n is told when the
// endpoints serve and when draining begins.
func serve(parent context.Context, cfg Config, n winsvc.Notifier) error {
	// Logs first (logging.go), so every line below has the chosen format.
	logs, err := setupLogging(cfg)
	if err != nil {
		return err
	}
	defer logs.close()
	// The collector's pace (gc.go): GOGC and GOMEMLIMIT win when set.
	gc := tuneGC(os.LookupEnv, cgroupMemoryLimit)
	klog.InfoS("Garbage collector", "gcPercent", gc.Percent, "gcPercentFrom", gc.PercentFrom, "memoryLimitBytes", gc.MemoryLimit, "memoryLimitFrom", gc.MemoryLimitFrom)
	for _, f := range cfg.legacyPathFlags {
		klog.InfoS("Deprecated flag of upstream before v1.0.0: its directory is a working directory; use -working-dir or -kubelet-path", "flag", f)
	}
	// Metrics (metrics.go): served before anything else starts, stopped
	// after the endpoints; nil and a no-op stop when off. /readyz answers
	// "starting" until live holds the server.
	var live atomic.Pointer[server.Server]
	var warnings atomic.Pointer[identityWarnings]
	var runtimeReady atomic.Pointer[runtimeReadiness]
	deps := server.NewDeprecations(0)
	mx, stopMetrics, err := startMetrics(cfg, httpExtras(cfg, &live, &warnings, &runtimeReady, deps))
	if err != nil {
		return err
	}
	defer stopMetrics()
	if runtime.GOOS != "windows" && cfg.Transport.SocketMode&0o007 != 0 {
		klog.Warningf("--socket-mode=%#o lets every local user reach a privileged storage proxy", cfg.Transport.SocketMode)
	}
	ids, err := setupCallers(cfg) // security.go
	if err != nil {
		return err
	}
	defer ids.close()
	// The node (hostset): host, group Services, policy (watched from now
	// on), audit log. A policy that cannot be loaded stops the daemon
	// from starting: starting without it would allow what it forbids.
	idWarnings := &identityWarnings{}
	node, err := newNode(cfg, mx, idWarnings, ids.identity) // hosts.go
	if err != nil {
		return err
	}
	// Runs after every defer below, so after shutdown (or a failed
	// start) has stopped the server.
	defer closeNode(node)
	logSecurity(node)
	idWarnings.update(node.Gate.Policy.Policy(), ids.identity)
	warnings.Store(idWarnings) // /readyz shows them from now on
	if ids.cri != nil {
		runtimeReady.Store(&runtimeReadiness{r: ids.cri, selectors: func() []string { return node.Gate.Policy.Policy().WorkloadSelectors() }})
	}
	trackSecurity(mx, node.Gate) // metrics.go
	mx.TrackSMBMappings(node.Groups.SMBMappings)
	if cfg.PipeGroup != "" {
		if cfg.Transport.PipeSDDL, err = pipeSDDL(cfg.PipeGroup); err != nil {
			return err
		}
	}
	sc := serverConfig(cfg, node, ids, mx, deps)
	if logs.batch != nil {
		sc.LogBatch = logs.batch
	}
	if logs.text != nil {
		sc.CallLogText = logs.text
	}
	srv, err := server.New(sc, node.Groups, cfg.APIs)
	if err != nil {
		return err
	}

	// Listen for signals before the endpoints exist, so a client that
	// sees them can rely on a signal being handled.
	ctx, stopSignals := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	// SIGHUP reopens the audit log and reloads the policy (never
	// delivered on Windows, where the policy reloads by polling only).
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-hup:
				hangup(node)
			case <-ctx.Done():
				return
			}
		}
	}()
	if err := srv.Start(); err != nil {
		return err
	}
	live.Store(srv)
	for _, ep := range srv.Endpoints() {
		klog.InfoS("Serving", "api", ep.API.Name(), "service", ep.API.Service, "address", ep.Address)
	}
	klog.InfoS("csi-node-proxy started", "host", cfg.Host, "workingDirs", cfg.WorkingDirs,
		"allowedServices", cfg.AllowedServices, "endpoints", len(cfg.APIs),
		"policy", cfg.PolicyFile, "auditLog", cfg.AuditLog)
	n.Started()

	served := make(chan error, 1)
	go func() { served <- srv.Wait() }()
	select {
	case err := <-served:
		return fmt.Errorf("serving stopped: %w", err)
	case <-ctx.Done():
	}
	// From now on a second signal ends the process at once, for an
	// operator who does not want to wait.
	stopSignals()
	return shutdown(srv, cfg.ShutdownTimeout, n)
}

// serverConfig is how the endpoints serve: the transport and names the
// flags give, callers identified as ids says (with the container
// runtime's answers under --cri-endpoint), and the node's policy, audit
// log and answers to the policy's questions about disks and volumes
// (object confinement: rules with objects), from its gate.
func serverConfig(cfg Config, n *hostset.Node, ids callers, mx *metrics.Metrics, deps *server.Deprecations) server.Config {
	return server.Config{
		Transport: cfg.Transport, Identity: ids.identity, Policy: n.Gate.Policy, Objects: n.Gate.Objects,
		Audit: n.Gate.Audit, Metrics: mx, EndpointPrefix: cfg.EndpointPrefix, Deprecations: deps, Build: version.String(),
	}
}
