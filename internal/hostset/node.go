package hostset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/go-logr/logr"

	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/callgate"
	"github.com/csi-node-proxy/csi-node-proxy/internal/objecthost"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// Hooks are what a mode adds to the node NewNode assembles: they are not
// options of the node (two nodes of the same Config behave alike over
// the same API) but how the daemon or library mode observes it.
type Hooks struct {
	// Instrument, when set, wraps the backends before the group Services
	// are built on them (the daemon's timing decorators). The policy's
	// object answers read the backends as built, since a decorator hides
	// the optional interfaces they look for; Close closes the Closer
	// Instrument returns.
	Instrument func(Set) Set
	// PolicyReloaded, when set, is called with each policy a reload puts
	// in force (policy.Store.OnReload): the daemon's identity warnings
	// follow it. It is registered before the policy is first watched.
	PolicyReloaded func(*policy.Policy)
	// Metrics and Log are the Gate's (callgate.Gate): told of every call
	// and of every refusal. Nil and the zero Logger tell nobody.
	Metrics callgate.Metrics
	Log     logr.Logger
}

// Node is a node assembled from one Config: the host backend, the six
// group Services on it, the policy (loaded, and watched while the Node
// lives), the audit log, and the Gate that lets calls through them. The
// daemon serves Groups over its endpoints, filling its server's policy,
// objects and audit log from Gate; library mode puts Gate in front of
// Groups in-process. Close it when done.
type Node struct {
	// Groups are the six group Services on the backends, unguarded: a
	// call must reach them through Gate.
	Groups groups.Set
	// Gate holds the policy (nil: none), the object answers, the audit
	// log (nil: none) and the Hooks' Metrics and Log.
	Gate callgate.Gate
	// Backends are the host backends Groups run on, as Hooks.Instrument
	// left them; Backends.Simulated is the simulated host behind them
	// (nil for a real one).
	Backends Set

	cfg       Config
	stopWatch context.CancelFunc
	watching  chan struct{} // closed when the policy watcher has returned; nil without one
	closeOnce sync.Once
	closeErr  error
}

// DefaultNodeName is the name audit records give the node when
// Config.NodeName is "": $NODE_NAME (the shipped DaemonSets set it from
// spec.nodeName, which is what Kubernetes calls the node), else the host
// name, else "".
func DefaultNodeName() string {
	if n := os.Getenv("NODE_NAME"); n != "" {
		return n
	}
	n, _ := os.Hostname() // no name is better than failing to start over an audit field
	return n
}

// Resolved returns c with the node's defaults in place of its zero
// fields: the Linux filesystem, the disk read timeout, the SMB
// permissions and the node's name. It is what NewNode builds from
// (Node.Config), so two Configs that resolve alike make the same node.
// LinuxHostMountTable stays "" (the block backend's default, which
// tolerates an unreadable table, unlike the same path given), and
// RequirePrivacy and PolicyReloadInterval have no default to fill.
func (c Config) Resolved() Config {
	if c.LinuxFilesystem == "" {
		c.LinuxFilesystem = DefaultLinuxFilesystem
	}
	if c.LinuxDiskReadTimeout == 0 {
		c.LinuxDiskReadTimeout = DefaultLinuxDiskReadTimeout
	}
	if c.SMBPermissions == nil {
		c.SMBPermissions = &policy.SMBPermissions{FileMode: DefaultSMBMode, DirMode: DefaultSMBMode}
	}
	if c.NodeName == "" {
		c.NodeName = DefaultNodeName()
	}
	return c
}

// NewNode assembles the node cfg describes: host (New), Hooks.Instrument,
// group Services, policy (loaded now, watched every
// PolicyReloadInterval until Close), audit log, Gate. Like the daemon at
// start it refuses what it cannot honour: a policy that does not load,
// an audit log that cannot be opened, SMB permissions that are no mount
// options, a backend this OS cannot run. Nothing on the host changes
// until a call arrives. What it built before failing is released.
func NewNode(cfg Config, hooks Hooks) (n *Node, err error) {
	cfg = cfg.Resolved()
	if cfg.PolicyFile != "" && cfg.PolicyData != nil {
		return nil, errors.New("give a policy file or policy data, not both")
	}
	if err := cfg.SMBPermissions.Validate(); err != nil {
		return nil, fmt.Errorf("SMB permissions (-smb-*): %w", err)
	}
	built, err := New(cfg)
	if err != nil {
		return nil, err
	}
	n = &Node{cfg: cfg, Backends: built, stopWatch: func() {}}
	defer func() {
		if err != nil {
			_ = n.Close() // nothing ran on the node; the error that matters is err
			n = nil
		}
	}()
	// Before Instrument: the answers look for optional interfaces of the
	// backends as built (objecthost.VolumeMounter).
	objects := objecthost.NewHostObjects(built.Volume, built.Disk, built.Simulated)
	if hooks.Instrument != nil {
		n.Backends = hooks.Instrument(built)
	}
	if n.Groups, err = n.Backends.Services(cfg.AllowedServices); err != nil {
		return n, err
	}
	if cfg.MaxConcurrentFormats < 0 {
		return n, fmt.Errorf("max concurrent formats %d is negative: give 0 for no bound", cfg.MaxConcurrentFormats)
	}
	if vol, ok := n.Groups.Volume.(*volume.Service); ok { // as Services built it
		vol.SetMaxConcurrentFormats(cfg.MaxConcurrentFormats)
	}
	store, err := loadPolicy(cfg, n.Backends)
	if err != nil {
		return n, err
	}
	n.Gate = callgate.Gate{Policy: store, Objects: objects, Metrics: hooks.Metrics, Log: hooks.Log}
	if cfg.AuditLog != "" {
		if n.Gate.Audit, err = audit.Open(cfg.AuditLog, auditOptions(cfg, hooks)); err != nil {
			return n, err
		}
	}
	if store != nil && hooks.PolicyReloaded != nil {
		store.OnReload(hooks.PolicyReloaded)
	}
	if store != nil && cfg.PolicyFile != "" && cfg.PolicyReloadInterval > 0 {
		ctx, cancel := context.WithCancel(context.Background())
		n.stopWatch, n.watching = cancel, make(chan struct{})
		go func() {
			defer close(n.watching)
			store.Watch(ctx, cfg.PolicyReloadInterval)
		}()
	}
	return n, nil
}

// loadPolicy loads the policy cfg names, in the path style of the host's
// paths; nil when it names none.
func loadPolicy(cfg Config, h Set) (*policy.Store, error) {
	// The services' own confinement, for the drive they give drive-less
	// Windows paths: the policy judges the path they act on.
	paths, err := hostpath.NewPolicy(h.Style, h.WorkingDirs)
	if err != nil {
		return nil, err
	}
	po := policy.Options{Style: h.Style, Methods: callgate.Methods, Paths: paths}
	switch {
	case cfg.PolicyFile != "":
		return policy.Load(cfg.PolicyFile, po)
	case cfg.PolicyData != nil:
		p, err := policy.Parse(cfg.PolicyData, po)
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		return policy.Static(p), nil
	}
	return nil, nil
}

// auditOptions are the audit log's options of cfg, a resolved Config.
func auditOptions(cfg Config, hooks Hooks) audit.Options {
	return audit.Options{Reads: cfg.AuditReads, Sync: cfg.AuditSync, Node: cfg.NodeName}
}

// Config returns the configuration n was built from, resolved
// (Config.Resolved): what its backends, policy and audit log follow.
func (n *Node) Config() Config { return n.cfg }

// ReopenAudit reopens the audit file (after log rotation); the previous
// file stays in use when it cannot be. Without an audit log it does
// nothing.
func (n *Node) ReopenAudit() error {
	if n.Gate.Audit == nil {
		return nil
	}
	return n.Gate.Audit.Reopen()
}

// ReloadPolicy reads the policy file again at once; one that no longer
// loads leaves the previous policy in force and is returned (and logged
// by the policy's Store). Without a policy file it does nothing.
func (n *Node) ReloadPolicy() error {
	if n.Gate.Policy == nil {
		return nil
	}
	_, err := n.Gate.Policy.Reload()
	return err
}

// Reload is what SIGHUP does to the daemon: ReopenAudit, then
// ReloadPolicy, whose errors it returns together.
func (n *Node) Reload() error {
	return errors.Join(n.ReopenAudit(), n.ReloadPolicy())
}

// Close stops watching the policy file, closes the audit log and closes
// the backends (Set.Close). Call it once no call can reach the node any
// more: the daemon after its server has stopped, library mode after the
// calls in flight have returned. Closing twice returns the first
// Close's error.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.stopWatch()
		if n.watching != nil {
			<-n.watching
		}
		var errs []error
		if n.Gate.Audit != nil {
			errs = append(errs, n.Gate.Audit.Close())
		}
		errs = append(errs, n.Backends.Close())
		n.closeErr = errors.Join(errs...)
	})
	return n.closeErr
}
