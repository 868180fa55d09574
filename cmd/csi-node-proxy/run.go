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

	"github.com/csi-node-proxy/csi-node-proxy/internal/metrics"
	"github.com/csi-node-proxy/csi-node-proxy/internal/objecthost"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
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
	closeLogs, err := setupLogging(cfg)
	if err != nil {
		return err
	}
	defer closeLogs()
	for _, f := range cfg.legacyPathFlags {
		klog.InfoS("Deprecated flag of upstream before v1.0.0: its directory is a working directory; use -working-dir or -kubelet-path", "flag", f)
	}
	// Metrics (metrics.go): served before anything else starts, stopped
	// after the endpoints; nil and a no-op stop when off. /readyz answers
	// "starting" until live holds the server.
	var live atomic.Pointer[server.Server]
	var warnings atomic.Pointer[identityWarnings]
	deps := server.NewDeprecations(0)
	mx, stopMetrics, err := startMetrics(cfg, httpExtras(cfg, &live, &warnings, deps))
	if err != nil {
		return err
	}
	defer stopMetrics()
	if runtime.GOOS != "windows" && cfg.Transport.SocketMode&0o007 != 0 {
		klog.Warningf("--socket-mode=%#o lets every local user reach a privileged storage proxy", cfg.Transport.SocketMode)
	}
	// The host's SMB backend reads the policy's smbPermissions per call;
	// the policy is loaded below, once the host's path style is known.
	cfg.policy = new(atomic.Pointer[policy.Store])
	h, err := buildHost(cfg)
	if err != nil {
		return err
	}
	// Runs after every defer below, so after shutdown (or a failed
	// start) has stopped the server.
	defer closeHost(h)
	h, objects := instrumentHostWithObjects(h, mx, cfg.Host) // metrics.go; h unchanged when metrics are off
	groups, err := newGroups(cfg, h)
	if err != nil {
		return err
	}
	if cfg.PipeGroup != "" {
		if cfg.Transport.PipeSDDL, err = pipeSDDL(cfg.PipeGroup); err != nil {
			return err
		}
	}
	sec, err := setupSecurity(cfg, h.Style)
	if err != nil {
		return err
	}
	defer sec.close()
	cfg.policy.Store(sec.policy)
	warnings.Store(sec.warnings) // /readyz shows them from now on
	trackSecurity(mx, sec)       // metrics.go
	srv, err := server.New(serverConfig(cfg, objects, sec, mx, deps), groups, cfg.APIs)
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
				sec.hangup()
			case <-ctx.Done():
				return
			}
		}
	}()
	sec.run(ctx, cfg.PolicyReloadInterval)
	if err := srv.Start(); err != nil {
		return err
	}
	live.Store(srv)
	for _, ep := range srv.Endpoints() {
		klog.InfoS("Serving", "api", ep.API.Name(), "service", ep.API.Service, "address", ep.Address)
	}
	klog.InfoS("csi-node-proxy started", "host", cfg.Host, "workingDirs", cfg.WorkingDirs,
		"allowedServices", cfg.AllowedServices, "endpoints", len(cfg.APIs),
		"policy", cfg.Policy, "auditLog", cfg.AuditLog)
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
// flags give, callers identified as sec says (with the container
// runtime's answers under --cri-endpoint), sec's policy and audit log,
// and objects answering the policy's questions about disks and volumes
// (object confinement: rules with objects).
func serverConfig(cfg Config, objects *objecthost.HostObjects, sec security, mx *metrics.Metrics, deps *server.Deprecations) server.Config {
	return server.Config{
		Transport: cfg.Transport, Identity: sec.identity, Policy: sec.policy, Objects: objects,
		Audit: sec.audit, Metrics: mx, EndpointPrefix: cfg.EndpointPrefix, Deprecations: deps, Build: version.String(),
	}
}
