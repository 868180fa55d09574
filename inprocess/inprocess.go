// Package inprocess is csi-node-proxy's library mode: the six API groups of
// a node (groups.Node) inside the calling process, backed directly by a
// host backend, for a CSI driver that would rather link the proxy than
// talk to a daemon.
//
// A driver written against groups.Node switches between the daemon and
// library mode by its constructor alone:
//
//	node, err := client.Dial(ctx, client.Options{SocketDir: dir}) // the daemon
//	node, err := inprocess.New(ctx, inprocess.Options{})           // this package
//
// Library mode is the daemon without the wire, not a second
// implementation: the host is built by package hostset as the daemon
// builds it, every call goes to the same group Service (so validation,
// path confinement to the working directories, idempotency and per-object
// locking are the daemon's), and, when Options ask for them, the same
// authorisation policy file decides on every call and the same audit log
// records it, in the daemon's line schema. The caller is the process
// itself (identity.Self): its UID, groups, container and pod on Linux, its
// token's account and groups on Windows. Every call goes through the
// daemon's own call gate (internal/callgate), so the order of policy,
// audit and refusals cannot drift between the two. What the daemon's
// endpoints add and library mode has no use for: endpoint access control
// (socket mode, pipe security descriptor; there is no endpoint), the gRPC
// server's metrics, and the older wire versions (calls take the group
// models, which have v1 semantics). Library mode links no gRPC and no
// Prometheus: Options.Logger takes the driver's logger, Options.Metrics
// its metrics (package inprocess/prommetrics for Prometheus).
//
// Library mode runs with the privileges of the driver: on a real host the
// driver itself must be privileged (root on Linux, a HostProcess container
// on Windows), which is exactly what the daemon exists to avoid. Use it
// where the driver is privileged anyway, in tests (Host "simulated"), or
// in tools; see docs/driver-guide.md.
package inprocess

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/callgate"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// Host backend names for Options.Host, as the daemon's --host spells them.
const (
	HostWindows   = hostset.Windows
	HostLinux     = hostset.Linux
	HostSimulated = hostset.Simulated
)

// The daemon's -kubelet-path defaults: the Windows kubelet's directory for
// the Windows and simulated hosts (the simulated host is a Windows node
// wherever it runs), the Linux kubelet's for the Linux host. Both are
// hostset's, which the daemon's flags use too.
const (
	DefaultWindowsKubeletPath = hostset.WindowsKubeletPath
	DefaultLinuxKubeletPath   = hostset.LinuxKubeletPath
)

// Options configure a Node. The zero Options are the daemon started
// without flags: the real backend of this OS, the kubelet's directory as
// the only working directory, no services StartService may touch, SMB
// encryption required, ext4, no policy and no audit log. Each field names
// the daemon flag it mirrors.
type Options struct {
	// Host is the backend (--host): HostWindows, HostLinux or
	// HostSimulated; "" is the real backend of this OS.
	Host string
	// KubeletPath is the kubelet's directory (-kubelet-path), always a
	// working directory; "" means DefaultLinuxKubeletPath on the Linux
	// host and DefaultWindowsKubeletPath otherwise.
	KubeletPath string
	// WorkingDirs are further directories callers may touch
	// (-working-dir), before KubeletPath as the daemon orders them.
	WorkingDirs []string
	// AllowedServices are the only services StartService and StopService
	// may touch (--allowed-service).
	AllowedServices []string
	// MaxConcurrentFormats bounds how many FormatVolume calls run on the
	// node at once (--max-concurrent-formats); more wait for one to end,
	// or for their context. 0 leaves them unbounded. A driver that
	// throttled its own formats (azuredisk's maxConcurrentFormat) sets
	// this instead.
	MaxConcurrentFormats int
	// SkipCOMSecurity keeps library mode from calling the process-wide
	// CoInitializeSecurity before its first WMI call on the Windows host:
	// a driver process that sets COM security itself (or whose host
	// process does) must be the only one to, since a process sets it
	// once. It is process-wide and permanent: once a Node was made with
	// it, no Node of the process calls it. The environment variable
	// WMI_COM_SECURITY=0|false|no|off (upstream csi-proxy's) does the
	// same for library mode and the daemon. Other hosts ignore it.
	SkipCOMSecurity bool
	// ClearReadOnlyOnOnline makes SetDiskState(online) clear the disk's
	// read-only attribute too (--clear-read-only-on-online). Library mode
	// can call SetDiskReadOnly itself; this mirrors the daemon's opt-in.
	ClearReadOnlyOnOnline bool
	// RequirePrivacy makes new SMB global mappings demand encryption
	// (-require-privacy); nil means true, the daemon's default.
	RequirePrivacy *bool
	// LinuxFilesystem is what FormatVolume creates on the Linux host
	// (--linux-filesystem): "ext4" or "xfs"; "" is the daemon's default,
	// ext4.
	LinuxFilesystem string
	// LinuxHostMountTable is the host's mount table the Linux host reads
	// besides the process's own (--linux-host-mount-table), so a disk
	// mounted only on the host is never changed: "" is
	// /proc/1/mountinfo, ignored when unreadable; a path given must be
	// readable; "none" reads only the process's own table.
	LinuxHostMountTable string
	// LinuxDiskReadTimeout bounds how long a call waits for one disk's
	// partition table on the Linux host (--linux-disk-read-timeout): a
	// disk that does not answer in time is reported unreadable and the
	// call goes on with the others; 0 is the daemon's default, 10 s.
	LinuxDiskReadTimeout time.Duration
	// SMBPermissions are the owner, group, modes and SELinux context of
	// the Linux host's SMB mounts (--smb-uid, --smb-gid, --smb-file-mode,
	// --smb-dir-mode, --smb-selinux-context); nil is the daemon's
	// default, modes 0777 and owner root. Given, every field counts as
	// the daemon's flag would: a mode 0 is the kernel's 0755, so set
	// FileMode and DirMode to 0o777 to keep the default modes. The
	// smbPermissions of the policy rule that allows a mapping override
	// them field by field.
	SMBPermissions *SMBPermissions

	// Simulated describes the simulated host (HostSimulated) in memory;
	// SimConfigFile names a JSON file describing it (--sim-config); give
	// at most one. SimDisks adds disks in --sim-disk syntax, e.g.
	// "size=10GiB,location=1:0:0:2,page83=6002…".
	Simulated     *simulated.Config
	SimConfigFile string
	SimDisks      []string

	// PolicyFile is the YAML authorisation policy (--policy), in the
	// daemon's format, reloaded every PolicyReloadInterval when it
	// changes (and by Reload). "" means no policy: every call is allowed,
	// as by the daemon without --policy.
	PolicyFile string
	// PolicyData is a policy already in memory, in the same format; it
	// never reloads. Give PolicyFile or PolicyData, not both.
	PolicyData []byte
	// PolicyPresets are built-in rules added to the policy's own
	// (--policy-preset): node-admin and drivers' rules by name (the
	// daemon's -help lists them). With neither PolicyFile nor PolicyData
	// they are the whole policy.
	PolicyPresets []string
	// PolicyReloadInterval is how often PolicyFile is checked for changes
	// (--policy-reload-interval); 0 means the daemon's default (10 s), a
	// negative value only reloads on Reload.
	PolicyReloadInterval time.Duration
	// AuditLog is the audit log (--audit-log): a file (created 0600,
	// appended to, reopened by Reload), "-" for stderr, "" for none.
	AuditLog string
	// AuditReads audits calls that only read, too (--audit-reads); calls
	// that change the node and denied calls are always audited.
	AuditReads bool
	// AuditSync fsyncs the audit file after every record (--audit-sync),
	// before the change it records goes ahead (intent) or the call
	// returns (outcome), so records survive a crash of the node; a
	// failed fsync fails the record like a failed write.
	AuditSync bool
	// NodeName names the node in every audit record (--node-name); ""
	// means $NODE_NAME, else the host name, as the daemon's default.
	NodeName string

	// Logger receives library mode's log lines: a refused call (at
	// level 0, as the daemon logs it) and a group Service that panicked
	// (an error, with the stack). The zero Logger means klog's, as the
	// daemon logs (logr.Discard() is the zero Logger, so it means klog's
	// too; silence lines with a Logger whose sink drops them). The audit
	// log's own write failures go to klog, as in the daemon.
	Logger logr.Logger
	// Metrics, when set, is told of every call: its start, its end with
	// its code and allowing rule, and a refusal with its reason. Package
	// inprocess/prommetrics implements it on a Prometheus registry, under
	// the daemon's metric names; nil counts nothing, and then library
	// mode links no metrics library.
	Metrics Metrics
}

// SMBPermissions are the owner, group, modes and SELinux context the files
// of an SMB mapping show to local processes on a Linux node (the cifs
// uid=, gid=, file_mode=, dir_mode= and context= mount options), as a
// policy rule's smbPermissions spell them: UID and GID nil leave the
// kernel's (root), a mode 0 the kernel's 0755, SELinuxContext "" none.
// Modes are permission bits, at most 0777; the context is
// user:role:type:level. Windows nodes ignore them.
type SMBPermissions = policy.SMBPermissions

// Metrics is told of every call a Node lets through, synchronously on
// the call's path, so it must be quick and safe for concurrent use. The
// arguments are the only label values a driver needs and none comes from
// a request: group ("disk"), version (always Version), method
// ("PartitionDisk"), code (gRPC's name of the outcome: "OK",
// "PermissionDenied", "Internal"), rule (the policy rule that allowed the
// call, "" for none) and reason (why a call was refused before it ran:
// "no_rule", "path" or "audit_unavailable"). See inprocess/prommetrics.
type Metrics interface {
	// CallStarted is called when a call arrives, before it is authorised.
	CallStarted(group, version, method string)
	// CallDone is called once for every call CallStarted saw, refused or
	// not, with its outcome and duration.
	CallDone(group, version, method, code, rule string, d time.Duration)
	// CallDenied is called for a call refused before it ran.
	CallDenied(group, version, method, reason string)
}

var _ callgate.Metrics = Metrics(nil)

// SMBMappingsTracker is a Metrics that also reports the node's SMB global
// mappings, as the daemon's csi_node_proxy_smb_global_mappings gauges do
// (prommetrics.Metrics is one). New hands it the census of the Node's SMB
// mappings group: how many mappings, how many not OK, and when, as the
// last ListSmbGlobalMappings, ReconcileSmbGlobalMapping or
// CollectSmbGlobalMappings call saw them (ok is false before the first).
// Reading the census takes no new one, so a scrape never lists WMI
// objects or walks the working directories. A Metrics shared by several
// Nodes reports the last one built.
type SMBMappingsTracker interface {
	TrackSMBMappings(census func() (c smbmappings.Census, ok bool))
}

// Version is what library mode calls carry as their API version in the
// policy and in audit records, and Endpoint their endpoint. They name no
// wire version on purpose: a policy rule that lists versions is about the
// daemon's wire versions and does not match library mode; leave versions
// out of a rule that should.
const (
	Version  = "inprocess"
	Endpoint = "inprocess"
)

// Node is the six groups of this node, served in-process. It implements
// groups.Node and is safe for concurrent use.
type Node struct {
	sec *security
	sim *simulated.Host
	// set is the six groups behind the call gate (callgate.Gate.Guard):
	// each field a guard in front of the group Service hostset built.
	set groups.Set
}

var _ groups.Node = (*Node)(nil)

// New builds the host o names and the group Services on it, loads the
// policy and opens the audit log, as the daemon does at start (package
// hostset assembles both from the same configuration). Like the daemon it
// refuses to start on anything it cannot honour: a policy that does not
// load, an audit log that cannot be opened, SMB permissions that are no
// mount options, a backend this OS cannot run. Nothing on the host
// changes until a call arrives.
//
// ctx is used while New runs; the Node (and the reloading of its policy
// file) lives until Close.
func New(ctx context.Context, o Options) (*Node, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if o.SkipCOMSecurity {
		wmi.SkipCOMSecurity()
	}
	return newNode(o, nodeHooks(o))
}

// nodeConfig is the node configuration o describes: the one mapping of
// Options onto hostset.Config, with library mode's zero values (nil
// RequirePrivacy, a zero PolicyReloadInterval, an empty KubeletPath)
// meaning the daemon's flag defaults.
func nodeConfig(o Options) hostset.Config {
	if o.Host == "" {
		o.Host = hostset.Default()
	}
	interval := o.PolicyReloadInterval
	switch {
	case interval == 0:
		interval = policy.DefaultReloadInterval
	case interval < 0:
		interval = 0 // only on Reload
	}
	return hostset.Config{
		Host:                  o.Host,
		WorkingDirs:           workingDirs(o),
		RequirePrivacy:        o.RequirePrivacy == nil || *o.RequirePrivacy,
		LinuxFilesystem:       o.LinuxFilesystem,
		LinuxHostMountTable:   o.LinuxHostMountTable,
		LinuxDiskReadTimeout:  o.LinuxDiskReadTimeout,
		SMBPermissions:        o.SMBPermissions,
		Simulated:             o.Simulated,
		SimConfigFile:         o.SimConfigFile,
		SimDisks:              o.SimDisks,
		AllowedServices:       o.AllowedServices,
		ClearReadOnlyOnOnline: o.ClearReadOnlyOnOnline,
		MaxConcurrentFormats:  o.MaxConcurrentFormats,
		PolicyFile:            o.PolicyFile,
		PolicyData:            o.PolicyData,
		PolicyPresets:         o.PolicyPresets,
		PolicyReloadInterval:  interval,
		AuditLog:              o.AuditLog,
		AuditReads:            o.AuditReads,
		AuditSync:             o.AuditSync,
		NodeName:              o.NodeName,
	}
}

// nodeHooks is how library mode observes its node: through the driver's
// metrics hook and logger (klog's when none is given, as the daemon
// logs). A nil o.Metrics stays a nil callgate.Metrics: the gate tells
// nobody.
func nodeHooks(o Options) hostset.Hooks {
	log := o.Logger
	if log.GetSink() == nil {
		log = klog.Background()
	}
	return hostset.Hooks{Metrics: o.Metrics, Log: log}
}

// newNode assembles the node of o with hooks and puts library mode's
// guards in front of its groups.
func newNode(o Options, hooks hostset.Hooks) (*Node, error) {
	hn, err := hostset.NewNode(nodeConfig(o), hooks)
	if err != nil {
		return nil, err
	}
	sec := &security{caller: identity.Self(), node: hn, gate: hn.Gate}
	sec.bindGate()
	// The census is the unguarded Service's: reading it is no call.
	if t, ok := o.Metrics.(SMBMappingsTracker); ok {
		if c, ok := hn.Groups.SMBMappings.(interface {
			Census() (smbmappings.Census, bool)
		}); ok {
			t.TrackSMBMappings(c.Census)
		}
	}
	return &Node{sec: sec, sim: hn.Backends.Simulated, set: sec.gate.Guard(hn.Groups)}, nil
}

// workingDirs are the directories callers may touch: the working dirs
// followed by the kubelet's directory, as the daemon orders them.
func workingDirs(o Options) []string {
	kubelet := o.KubeletPath
	if kubelet == "" {
		kubelet = hostset.KubeletPath(o.Host)
	}
	return append(append([]string(nil), o.WorkingDirs...), kubelet)
}

// Simulated returns the simulated host behind the groups, for a test that
// arranges or inspects the node (AddDisk, ListVolumes, ReadFile); nil
// unless Options.Host is HostSimulated.
func (n *Node) Simulated() *simulated.Host { return n.sim }

// Reload does what SIGHUP does to the daemon: the audit file is reopened
// (after log rotation) and the policy file read again at once. A policy
// file that no longer loads leaves the previous policy in force, and is
// returned as an error, as is an audit file that cannot be reopened (the
// old one stays in use). After Close, Reload fails as calls do.
func (n *Node) Reload() error {
	if !n.sec.enter() {
		return errClosed
	}
	defer n.sec.leave()
	return n.sec.node.Reload()
}

// Close ends the Node: calls made from now on fail at once with
// errdefs.ErrFailedPrecondition (a closed node never serves again, so
// there is nothing to retry), as the client's do after its Close. Close
// then waits for the calls in flight to return, so each of them is
// audited, stops reloading the policy, closes the audit log and closes
// the host backend (hostset.Set.Close: on Linux, the system group's D-Bus
// connection). A call that never returns keeps Close waiting; bound calls
// with their contexts. Closing twice is harmless; a concurrent second
// Close waits for the first.
func (n *Node) Close() error {
	return n.sec.close()
}

// security is what library mode keeps around the assembled node: who
// the caller is, the gate every call goes through, and the calls in
// flight, so that Close can refuse new calls and wait for the others
// before the node closes.
type security struct {
	caller identity.Caller
	// gate lets every call through: the policy, the audit log, the
	// metrics hook and the Node's own host answering where the disks and
	// volumes a call names are (as the daemon's server.Config.Objects).
	gate callgate.Gate
	// node is the assembled node: its policy watcher, audit log and
	// host backend close with it.
	node *hostset.Node

	mu       sync.Mutex
	closed   bool           // set by close: enter refuses
	inFlight sync.WaitGroup // calls between enter and leave

	closeOnce sync.Once
	closeErr  error
}

// enter admits a call, unless the Node is closed; every call admitted
// must leave. Close waits for the calls admitted before it.
func (s *security) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.inFlight.Add(1) // under mu, so never concurrent with close's Wait on a zero count
	return true
}

// leave ends a call enter admitted.
func (s *security) leave() { s.inFlight.Done() }

// close is Node.Close: refuse new calls, wait for those in flight (so
// each is audited), then close the node (policy watcher, audit log,
// host backend).
func (s *security) close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.inFlight.Wait()
		s.closeErr = s.node.Close()
	})
	return s.closeErr
}
