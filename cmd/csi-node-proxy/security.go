package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"runtime"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/callgate"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity/cri"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// addSecurityFlags defines the authorisation, audit and pipe-group flags.
func addSecurityFlags(set *flag.FlagSet, cfg *Config) {
	set.StringVar(&cfg.Policy, "policy", "", "YAML authorisation policy: which callers may call which methods under which paths (default none: every caller that can open an endpoint may call everything)")
	set.DurationVar(&cfg.PolicyReloadInterval, "policy-reload-interval", policy.DefaultReloadInterval, "How often the policy file is checked for changes; 0 reloads only on SIGHUP")
	set.StringVar(&cfg.AuditLog, "audit-log", "", `Audit log: a file (reopened on SIGHUP), "-" for stderr, empty for none`)
	set.BoolVar(&cfg.AuditReads, "audit-reads", false, "Also audit calls that only read (calls that change the node and denied calls are always audited)")
	set.BoolVar(&cfg.AuditSync, "audit-sync", false, "fsync the audit file after every record, before the call it records goes ahead (intent) or is answered (outcome), so records survive a crash of the node, not only of the daemon; a failed fsync fails the record like a failed write. Each change then waits for a disk flush")
	set.StringVar(&cfg.NodeName, "node-name", "", "The node's name in every audit record, so records collected from many nodes say where each call ran; the default is $NODE_NAME (the shipped DaemonSets set it from spec.nodeName), else the host name")
	set.StringVar(&cfg.CRIEndpoint, "cri-endpoint", cri.DefaultEndpoint, "The node's container runtime (CRI) socket, unix:///path or npipe:////./pipe/name, asked for the pod namespace, pod name and container name of each caller in a container and for the ServiceAccount token mounted into it (read below -kubelet-path), which policy rules can select by (namespaces, podNames, containerNames, serviceAccounts). A runtime that is missing or down does not stop the daemon: its callers are then identified without them (and such rules do not match them) until it answers. Empty asks no runtime")
	set.StringVar(&cfg.PipeGroup, "pipe-group", "", "Local group (a SID, or on Windows a name) given read/write access to the pipes next to Administrators and SYSTEM, for least-privilege HostProcess drivers (Windows only)")
}

// checkSecurityFlags checks the security flags' values after parsing.
func checkSecurityFlags(cfg *Config, set *flag.FlagSet) error {
	if cfg.PolicyReloadInterval < 0 {
		return errors.New("-policy-reload-interval must not be negative")
	}
	if cfg.CRIEndpoint != "" {
		// NewCRI checks the endpoint's form without connecting: a
		// malformed one is a command-line mistake, a missing runtime is
		// not (identification says so per call).
		r, err := cri.New(cri.Config{Endpoint: cfg.CRIEndpoint})
		if err != nil {
			return fmt.Errorf("-cri-endpoint: %w", err)
		}
		_ = r.Close() // never connected; nothing to report
	}
	if cfg.PipeGroup != "" {
		explicit := false
		set.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "pipe-sddl" })
		if explicit {
			return errors.New("-pipe-group and -pipe-sddl both set the pipes' security descriptor: give one (add the group's ACE to -pipe-sddl yourself)")
		}
	}
	return nil
}

// criConfig is how the daemon asks the container runtime. The
// ServiceAccount tokens lie below -kubelet-path, the directory the
// daemon already serves, when that is this machine's kubelet: with the
// real host backend of the OS the daemon runs on. The simulated host's
// kubelet directory is the simulated node's, so it names no tokens.
func criConfig(cfg Config) cri.Config {
	c := cri.Config{Endpoint: cfg.CRIEndpoint}
	if cfg.Host == hostLinux && runtime.GOOS == "linux" || cfg.Host == hostWindows && runtime.GOOS == "windows" {
		c.KubeletPath = cfg.KubeletPath
	}
	return c
}

// sidPattern is a string SID.
var sidPattern = regexp.MustCompile(`^S-1-[0-9]+(-[0-9]+)+$`)

// pipeSDDL returns the pipes' security descriptor for --pipe-group: the
// default one plus read/write access for the group, named by SID or (on
// Windows) by name. Read and write are what a gRPC
// client needs; the group cannot change the pipe's security or create
// instances of it.
func pipeSDDL(group string) (string, error) {
	sid, err := groupSID(group)
	if err != nil {
		return "", fmt.Errorf("-pipe-group: %w", err)
	}
	if !sidPattern.MatchString(sid) {
		return "", fmt.Errorf("-pipe-group: %q is not a SID", sid)
	}
	return transport.DefaultPipeSDDL + "(A;;GRGW;;;" + sid + ")", nil
}

// security is the daemon's authorisation policy and audit log, and how it
// identifies callers.
type security struct {
	policy *policy.Store
	audit  *audit.Logger
	// identity says how the endpoints identify callers: with the
	// container runtime's answers when --cri-endpoint names one.
	identity identity.Options
	// cri is the connection to the container runtime, closed with the
	// security; nil without --cri-endpoint.
	cri *cri.Resolver
	// warnings are the identity warnings of the policy in force.
	warnings *identityWarnings
}

// identityWarnings holds what keeps the daemon from seeing what its
// policy selects callers by (server.IdentityWarnings): a legitimate
// driver's every call would be refused without a word, so each warning
// is logged when a policy comes into force (at start, after each
// reload) and /readyz shows the current ones. They do not make the
// daemon unready: nothing a restart does would cure them, and drivers
// whose rules need nothing hidden are served meanwhile.
type identityWarnings struct {
	cur atomic.Pointer[[]string]
}

// get returns the current warnings; none from a nil holder.
func (w *identityWarnings) get() []string {
	if w == nil {
		return nil
	}
	if p := w.cur.Load(); p != nil {
		return *p
	}
	return nil
}

// update replaces the warnings with those of p under o, logging each.
func (w *identityWarnings) update(p *policy.Policy, o identity.Options) {
	ws := server.IdentityWarnings(p, o)
	for _, m := range ws {
		klog.Warning(m)
	}
	w.cur.Store(&ws)
}

// openAuditLog is audit.Open; a test replaces it to see the Options the
// flags make.
var openAuditLog = audit.Open

// setupSecurity loads the policy and opens the audit log the Config names.
// A policy that cannot be loaded stops the daemon from starting: starting
// without it would allow what it forbids.
func setupSecurity(cfg Config, style hostpath.Style) (s security, err error) {
	defer func() {
		if err != nil {
			s.close() // a failed start releases what it opened
		}
	}()
	if cfg.CRIEndpoint != "" {
		// NewCRI does not connect: a runtime that is not there yet
		// leaves callers' workloads unknown per call (Caller.Incomplete)
		// and never stops the daemon.
		cc := criConfig(cfg)
		if s.cri, err = cri.New(cc); err != nil {
			return s, err
		}
		s.identity.Workloads = s.cri
		klog.InfoS("Asking the container runtime for callers' pods and containers", "criEndpoint", cfg.CRIEndpoint, "serviceAccountTokensBelow", cc.KubeletPath)
	}
	if cfg.Policy != "" {
		var err error
		if s.policy, err = policy.Load(cfg.Policy, policy.Options{Style: style, Methods: callgate.Methods}); err != nil {
			return s, err
		}
		klog.InfoS("Policy loaded", "path", cfg.Policy, "rules", s.policy.Policy().Rules(), "reloadInterval", cfg.PolicyReloadInterval)
	}
	s.warnings = &identityWarnings{}
	s.warnings.update(s.policy.Policy(), s.identity)
	if s.policy != nil {
		warnings, o := s.warnings, s.identity
		s.policy.OnReload(func(p *policy.Policy) { warnings.update(p, o) })
	}
	if cfg.AuditLog != "" {
		var err error
		if s.audit, err = openAuditLog(cfg.AuditLog, audit.Options{Reads: cfg.AuditReads, Sync: cfg.AuditSync, Node: cfg.NodeName}); err != nil {
			return s, err
		}
		klog.InfoS("Auditing calls", "to", cfg.AuditLog, "reads", cfg.AuditReads, "sync", cfg.AuditSync, "node", cfg.NodeName)
	}
	return s, nil
}

// run starts reloading the policy in the background until ctx ends.
func (s security) run(ctx context.Context, interval time.Duration) {
	if s.policy != nil {
		go s.policy.Watch(ctx, interval)
	}
}

// hangup handles SIGHUP: the audit file is reopened (after log rotation)
// and the policy reloaded at once.
func (s security) hangup() {
	if s.audit != nil {
		if err := s.audit.Reopen(); err != nil {
			klog.ErrorS(err, "Audit log not reopened; records still go to the previous file")
		} else {
			klog.InfoS("Audit log reopened")
		}
	}
	if s.policy != nil {
		_, _ = s.policy.Reload() // Reload logs and counts failures itself
	}
}

// close closes the audit log and the connection to the container
// runtime.
func (s security) close() {
	if s.cri != nil {
		if err := s.cri.Close(); err != nil {
			klog.ErrorS(err, "Closing the connection to the container runtime")
		}
	}
	if s.audit == nil {
		return
	}
	if err := s.audit.Close(); err != nil {
		klog.ErrorS(err, "Closing the audit log")
	}
}
