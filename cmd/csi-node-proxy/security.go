package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity/cri"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// addSecurityFlags defines the authorisation, audit and pipe-group flags.
func addSecurityFlags(set *flag.FlagSet, cfg *Config) {
	set.StringVar(&cfg.PolicyFile, "policy", "", "YAML authorisation policy: which callers may call which methods under which paths (default none: every caller that can open an endpoint may call everything)")
	set.Var((*stringList)(&cfg.PolicyPresets), "policy-preset", "Built-in policy rules to add to --policy's (repeatable, or comma-separated): "+presetList()+"; Windows nodes lack example. node-admin lets root (Administrators on Windows) call what only reads; each other one is that driver's rule as its own manifests deploy it (docs/operations.md). Without --policy the presets are the whole policy")
	set.DurationVar(&cfg.PolicyReloadInterval, "policy-reload-interval", policy.DefaultReloadInterval, "How often the policy file is checked for changes; 0 reloads only on SIGHUP")
	set.StringVar(&cfg.AuditLog, "audit-log", "", `Audit log: a file (reopened on SIGHUP), "-" for stderr, empty for none`)
	set.BoolVar(&cfg.AuditReads, "audit-reads", false, "Also audit calls that only read (calls that change the node and denied calls are always audited)")
	set.BoolVar(&cfg.AuditSync, "audit-sync", false, "fsync the audit file after every record, before the call it records goes ahead (intent) or is answered (outcome), so records survive a crash of the node, not only of the daemon; a failed fsync fails the record like a failed write. Each change then waits for a disk flush")
	set.StringVar(&cfg.NodeName, "node-name", "", "The node's name in every audit record, so records collected from many nodes say where each call ran; the default is $NODE_NAME (the shipped DaemonSets set it from spec.nodeName), else the host name")
	set.StringVar(&cfg.CRIEndpoint, "cri-endpoint", cri.DefaultEndpoint, "The node's container runtime (CRI) socket, unix:///path or npipe:////./pipe/name, asked for the pod namespace, pod name and container name of each caller in a container and for the ServiceAccount token mounted into it (read below -kubelet-path), which policy rules can select by (namespaces, podNames, containerNames, serviceAccounts). A runtime that is missing or down does not stop the daemon: its callers are then identified without them (and such rules do not match them) until it answers; it is a warning at start and on /readyz, which fails while the policy selects callers by them. Each question is bounded at 500 ms and a failure remembered for 3 s; a runtime that restarts (a new socket file) is reconnected to. Mount the runtime's directory, not its socket file, into a container: the runtime makes a new socket file at each start. Empty asks no runtime")
	set.StringVar(&cfg.KubeletCgroupRoot, "kubelet-cgroup-root", identity.DefaultCgroupRoot, "The kubelet's --cgroup-root (Linux): a caller's cgroup names its pod only below it (<root>/kubepods/... under the cgroupfs driver, the root's slices then kubepods.slice under systemd), so a delegated cgroup subtree (an unprivileged LXC container, a systemd user subtree) cannot pose as a pod. The default is kubelet's: /; kind nodes use /kubelet")
	set.StringVar(&cfg.PipeGroup, "pipe-group", "", "Local group (a SID, or on Windows a name) given read/write access to the pipes next to Administrators and SYSTEM, for least-privilege HostProcess drivers (Windows only)")
}

// presetList names the Linux presets, for --policy-preset's help.
func presetList() string { return strings.Join(policy.PresetNames(hostpath.POSIX), ", ") }

// checkSecurityFlags checks the security flags' values after parsing.
func checkSecurityFlags(cfg *Config, set *flag.FlagSet) error {
	var presets []string
	for _, v := range cfg.PolicyPresets {
		for n := range strings.SplitSeq(v, ",") {
			if n = strings.TrimSpace(n); n == "" {
				return fmt.Errorf("-policy-preset=%q: an empty preset name", v)
			}
			presets = append(presets, n)
		}
	}
	cfg.PolicyPresets = presets
	style := hostpath.POSIX
	if cfg.Host != hostLinux {
		style = hostpath.Windows
	}
	for _, n := range presets {
		if _, err := policy.PresetData(style, n); err != nil {
			return fmt.Errorf("-policy-preset: %w", err)
		}
	}
	if cfg.PolicyReloadInterval < 0 {
		return errors.New("-policy-reload-interval must not be negative")
	}
	if _, err := identity.CgroupRootElems(cfg.KubeletCgroupRoot); err != nil {
		return fmt.Errorf("-kubelet-cgroup-root: %w", err)
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

// callers is how the daemon identifies its callers: with the container
// runtime's answers when --cri-endpoint names one.
type callers struct {
	// identity says how the endpoints identify callers.
	identity identity.Options
	// cri is the connection to the container runtime, closed with
	// callers; nil without --cri-endpoint.
	cri *cri.Resolver
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
	// policy is the policy in force, for /readyz's
	// server.PolicyAdmitsNobodyCheck (nil before the first update and
	// without a policy).
	policy atomic.Pointer[policy.Policy]
}

// admitsNobody is /readyz's server.PolicyAdmitsNobodyCheck on the policy
// in force; nil from a nil holder.
func (w *identityWarnings) admitsNobody() error {
	if w == nil {
		return nil
	}
	return server.PolicyAdmitsNobody(w.policy.Load())
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
	ws := append(server.PolicyWarnings(p), server.IdentityWarnings(p, o)...)
	shown := make([]string, 0, len(ws))
	for _, m := range ws {
		klog.Warning(m)
		// /readyz lists this one as its check, not as a warning line.
		if !strings.HasPrefix(m, server.PolicyAdmitsNobodyCheck+" ") {
			shown = append(shown, m)
		}
	}
	w.policy.Store(p)
	w.cur.Store(&shown)
}

// setupCallers prepares the identification of callers the Config asks
// for. It does not connect to the container runtime: a runtime that is
// not there yet leaves callers' workloads unknown per call
// (Caller.Incomplete) and never stops the daemon.
func setupCallers(cfg Config) (callers, error) {
	c := callers{identity: identity.Options{CgroupRoot: cfg.KubeletCgroupRoot}}
	if cfg.CRIEndpoint == "" {
		return c, nil
	}
	cc := criConfig(cfg)
	r, err := cri.New(cc)
	if err != nil {
		return c, err
	}
	c.cri, c.identity.Workloads = r, r
	klog.InfoS("Asking the container runtime for callers' pods and containers", "criEndpoint", cfg.CRIEndpoint, "serviceAccountTokensBelow", cc.KubeletPath)
	if err := r.Check(context.Background()); err != nil {
		klog.Warningf("The container runtime does not answer (%v): callers' pod namespaces, pod names, container names and ServiceAccounts stay unknown, and policy rules selecting by them do not match, until it does; /readyz says so meanwhile", err)
	}
	return c, nil
}

// runtimeReadiness is the container runtime's part of /readyz: the
// runtime is asked (within cri.DefaultTimeout) whether it answers. When
// it does not, and the policy selects callers by what only the runtime
// tells (namespaces, podNames, containerNames, serviceAccounts), the
// daemon is not ready: drivers those rules admit are refused. Otherwise
// it is a warning: no caller depends on the runtime.
type runtimeReadiness struct {
	r *cri.Resolver
	// selectors returns the policy's selector fields that need the
	// runtime (policy.Policy.WorkloadSelectors).
	selectors func() []string
	// warning is the last check's warning, for /readyz's warnings:
	// check runs first, in the same request.
	warning atomic.Pointer[string]
}

// check asks the runtime and returns the error that makes the daemon
// unready, or nil (keeping a warning for warnings).
func (rr *runtimeReadiness) check(ctx context.Context) error {
	if rr == nil {
		return nil
	}
	err := rr.r.Check(ctx)
	if err == nil {
		rr.warning.Store(nil)
		return nil
	}
	if sel := rr.selectors(); len(sel) > 0 {
		rr.warning.Store(nil)
		return fmt.Errorf("%w; the policy selects callers by what it tells (%s)", err, strings.Join(sel, ", "))
	}
	w := "the container runtime does not answer: " + err.Error()
	rr.warning.Store(&w)
	return nil
}

// warnings returns the last check's warning, if any.
func (rr *runtimeReadiness) warnings() []string {
	if rr == nil {
		return nil
	}
	if w := rr.warning.Load(); w != nil {
		return []string{*w}
	}
	return nil
}

// close closes the connection to the container runtime.
func (c callers) close() {
	if c.cri == nil {
		return
	}
	if err := c.cri.Close(); err != nil {
		klog.ErrorS(err, "Closing the connection to the container runtime")
	}
}

// logSecurity says at start which policy and audit log the node has.
func logSecurity(n *hostset.Node) {
	cfg := n.Config()
	if n.Gate.Policy != nil {
		p := n.Gate.Policy.Policy()
		klog.InfoS("Policy loaded", "path", cfg.PolicyFile, "presets", p.Presets(), "rules", p.Rules(), "auditOnly", p.AuditOnly(), "reloadInterval", cfg.PolicyReloadInterval)
	}
	if n.Gate.Audit != nil {
		klog.InfoS("Auditing calls", "to", cfg.AuditLog, "reads", cfg.AuditReads, "sync", cfg.AuditSync, "node", cfg.NodeName)
	}
}

// hangup handles SIGHUP: the audit file is reopened (after log rotation)
// and the policy reloaded at once.
func hangup(n *hostset.Node) {
	if n.Gate.Audit != nil {
		if err := n.ReopenAudit(); err != nil {
			klog.ErrorS(err, "Audit log not reopened; records still go to the previous file")
		} else {
			klog.InfoS("Audit log reopened")
		}
	}
	_ = n.ReloadPolicy() // the policy's Store logs and counts failures itself
}
