// Package identity tells who is on the other end of a daemon endpoint: the
// calling process and, where the platform allows, its container and pod.
//
// The daemon learns the caller once per connection, when it accepts it:
// Credentials' ServerHandshake reads the peer's identity from the
// connection and returns it as an AuthInfo. The package knows no
// transport: package grpccreds makes Credentials gRPC's transport
// credentials, so every call on a connection carries its AuthInfo, and
// puts the caller in each call's context; FromContext finds it there (a
// context made by NewContext), as library mode's calls carry the process
// itself (Self).
//
// On Linux the kernel says who connected a Unix socket (SO_PEERCRED: pid,
// uid and gid at connect time); /proc/<pid>/cgroup then names the container
// and pod, parsed by ParseCgroup for the cgroupfs, systemd and CRI-O layouts.
// Reading /proc by PID races with PID reuse, so the reads go through a
// handle on /proc/<pid> opened once, the process start time is compared
// before and after and must be no later than the accept, and where the
// kernel offers a pidfd of the peer (SO_PEERPIDFD, Linux 6.5+) the
// connecting process must still be alive after the reads, which proves
// the PID was never reused. A kernel that has the option but gives no
// pidfd says the process is gone: then /proc is not read at all.
//
// On Windows the pipe server asks for the client's process ID
// (GetNamedPipeClientProcessId), opens the process (which pins the PID) and
// checks the PID again, reads the process token (user SID and account,
// group SIDs) and finds its container from the job object that holds it
// (\Container_<id> for process-isolated containers, JobContainer_<id> for
// HostProcess containers), trusting only jobs held by the container host
// processes.
//
// A container ID names no workload that rules could rely on: it changes
// with every restart. When Options.Workloads is set (package cri asks the node's
// container runtime over its CRI socket), the container's pod namespace,
// pod name and container name are asked for, from the labels kubelet puts
// on every container, cached per container ID. The runtime is believed
// only where it agrees with the pod UID of the kernel's cgroup path; an
// unreachable runtime leaves them unknown. The pod's ServiceAccount is
// read from the token kubelet mounted into the container, found through
// the mounts the runtime reports (package cri says how it is checked).
//
// Identification never fails a connection: what cannot be learned stays
// empty and Caller.Incomplete says why. Whether an incomplete identity may
// call anything is the authorization policy's decision, and a policy rule
// that names a container, pod or account never matches a caller whose
// container, pod or account is unknown.
package identity

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// Caller is what the daemon knows about the process that opened a
// connection. Zero fields are unknown.
type Caller struct {
	// PID is the calling process's ID when it connected, as the daemon
	// sees it; 0 when unknown (for example a process in a PID namespace
	// the daemon cannot see into).
	PID int
	// Executable is the path of the caller's program, as the kernel
	// reports it (/proc/<pid>/exe; the image name on Windows); "" when
	// unknown. For audit records: a process can exec anything, so no rule
	// selects by it.
	Executable string
	// StartTime is when the caller's process started; zero when unknown.
	// With PID it names the process uniquely in audit records.
	StartTime time.Time
	// HasUnixIDs tells whether UID and GID are known (Unix sockets only).
	HasUnixIDs bool
	// UID and GID are the effective user and group IDs of the process when
	// it connected, from the kernel (SO_PEERCRED).
	UID uint32
	// GID: see UID.
	GID uint32
	// Groups are the process's supplementary group IDs, read from /proc
	// under the same guard against PID reuse as the container.
	Groups []uint32
	// ContainerID is the full ID of the caller's container; "" when the
	// caller is not in a container the daemon recognises.
	ContainerID string
	// PodUID is the UID of the caller's Kubernetes pod, with dashes; ""
	// when unknown. Windows callers never have one.
	PodUID string
	// PodNamespace, PodName and ContainerName name the caller's
	// workload, as the node's container runtime reports it for
	// ContainerID (Options.Workloads); "" when unknown. Unlike pod UIDs
	// and container IDs they survive restarts and rollouts, so rules can
	// name them. The runtime is trusted only where it agrees with the
	// pod UID the kernel's cgroup path gives.
	PodNamespace string
	// PodName: see PodNamespace.
	PodName string
	// ContainerName: see PodNamespace.
	ContainerName string
	// ServiceAccount is the name of the ServiceAccount of the caller's
	// pod (in PodNamespace), from the token kubelet mounted into the
	// caller's container (see package cri); "" when unknown. Like the
	// names above it is believed only where the runtime agrees with the
	// kernel's pod UID, and the token only where its pod UID and
	// namespace are the caller's.
	ServiceAccount string
	// Runtime names the container runtime the cgroup layout points to:
	// containerd, crio, docker, or "" when the layout does not say.
	Runtime string
	// WindowsSID is the string SID of the user of the caller's process
	// token (S-1-5-18 for LocalSystem).
	WindowsSID string
	// WindowsAccount is that user's DOMAIN\name, when it can be looked up.
	WindowsAccount string
	// WindowsGroupSIDs are the string SIDs of the enabled groups of the
	// caller's token.
	WindowsGroupSIDs []string
	// Incomplete says why some of the above could not be learned; "" when
	// everything the platform offers was found.
	Incomplete string
}

// AccountKey names the account c calls as, for what is bounded or
// rate-limited per caller (the daemon's calls in progress, the audit
// log's denial records): its container when known (many drivers share
// root), else its Unix user, else its Windows account; "" when none is
// known.
func (c Caller) AccountKey() string {
	switch {
	case c.ContainerID != "":
		return "container:" + c.ContainerID
	case c.HasUnixIDs:
		return fmt.Sprintf("uid:%d", c.UID)
	case c.WindowsSID != "":
		return "sid:" + c.WindowsSID
	}
	return ""
}

// String describes the caller for messages and logs, e.g. "pid 4242 uid
// 1000 gid 1000 container 0123456789ab pod 6f1c…". Container IDs are
// shortened to 12 characters; audit records carry them in full.
func (c Caller) String() string {
	var parts []string
	if c.PID > 0 {
		parts = append(parts, fmt.Sprintf("pid %d", c.PID))
	}
	if c.HasUnixIDs {
		parts = append(parts, fmt.Sprintf("uid %d gid %d", c.UID, c.GID))
	}
	switch {
	case c.WindowsAccount != "":
		parts = append(parts, fmt.Sprintf("account %s (%s)", c.WindowsAccount, c.WindowsSID))
	case c.WindowsSID != "":
		parts = append(parts, "account "+c.WindowsSID)
	}
	if c.ContainerID != "" {
		id := c.ContainerID
		if len(id) > 12 {
			id = id[:12]
		}
		parts = append(parts, "container "+id)
	}
	if c.PodNamespace != "" {
		parts = append(parts, "pod "+c.PodNamespace+"/"+c.PodName)
	}
	if c.ContainerName != "" {
		parts = append(parts, "container "+c.ContainerName)
	}
	if c.ServiceAccount != "" {
		parts = append(parts, "serviceaccount "+c.ServiceAccount)
	}
	if c.PodUID != "" {
		parts = append(parts, "pod "+c.PodUID)
	}
	if len(parts) == 0 {
		return "unidentified caller"
	}
	return strings.Join(parts, " ")
}

type ctxKey struct{}

// NewContext returns ctx carrying c, for handlers, policy and audit.
func NewContext(ctx context.Context, c Caller) context.Context {
	return WithCaller(ctx, &c)
}

// WithCaller is NewContext for a caller the context may point to rather
// than copy: c must not change afterwards. The call gate uses it for the
// caller it already holds, which saves every call a copy of the Caller
// on the heap.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, ctxKey{}, c)
}

// CallerKey is the key under which a context holds its call's *Caller:
// for a context type that answers several keys with one node (the call
// gate's, which spares each call the allocations of a context.WithValue
// per key). Its Value must return a *Caller that does not change
// afterwards.
func CallerKey() any { return ctxKey{} }

// FromContext returns the caller of the call ctx belongs to, the one
// NewContext or WithCaller put there; ok is false when there is none.
// (The gRPC server finds a connection's caller with
// grpccreds.FromContext, and puts it here for everything below.)
func FromContext(ctx context.Context) (Caller, bool) {
	if c, ok := ctx.Value(ctxKey{}).(*Caller); ok && c != nil {
		return *c, true
	}
	return Caller{}, false
}

// AuthType is what AuthInfo.AuthType returns.
const AuthType = "csi-node-proxy-local-peer"

// AuthInfo carries the caller of a connection: what Credentials'
// ServerHandshake returns (grpccreds.AuthInfo carries it through gRPC).
type AuthInfo struct {
	// Caller is who opened the connection.
	Caller Caller
	// process is the handle on the connecting process taken at connect,
	// for Exited; nil when there is none.
	process *process
	// desc is Caller.String(), made once per connection: the daemon's
	// call lines name the caller of every call (Describe).
	desc string
	// key is Caller.AccountKey(), made once per connection: the daemon's
	// per-caller bounds look it up on every call (Key).
	key string
}

// Key returns Caller.AccountKey(), made when the connection was
// identified.
func (a AuthInfo) Key() string {
	if a.key == "" {
		return a.Caller.AccountKey()
	}
	return a.key
}

// Describe returns Caller.String(), made when the connection was
// identified.
func (a AuthInfo) Describe() string {
	if a.desc == "" {
		return a.Caller.String()
	}
	return a.desc
}

// AuthType names the kind of AuthInfo, as gRPC's credentials.AuthInfo
// does.
func (AuthInfo) AuthType() string { return AuthType }

// PeerInfo is what ServerHandshake returns: an AuthInfo, behind the
// interface gRPC's credentials.AuthInfo also is, so that a transport
// passes it on without knowing more.
type PeerInfo interface {
	// AuthType names the kind of PeerInfo.
	AuthType() string
}

// Options says how callers are identified.
type Options struct {
	// ProcRoot is where procfs is mounted (Linux); "" means /proc. Tests
	// point it at a fixture tree.
	ProcRoot string
	// CgroupRoot is the kubelet's --cgroup-root (Linux); "" means
	// DefaultCgroupRoot, kubelet's default. Pods' cgroups are recognised
	// only below it, so a cgroup tree delegated elsewhere (an
	// unprivileged LXC container, a systemd user subtree) cannot pose as
	// a pod's. See ParseCgroup.
	CgroupRoot string
	// MaxIdentifying bounds the connections being identified at once;
	// 0 means DefaultMaxIdentifying. Identifying a Windows caller walks
	// the system's handle table, so a flood of connections must not start
	// as many walks: a connection that finds no free slot within
	// IdentifyWait is refused.
	MaxIdentifying int
	// Workloads, when set, names the pod namespace, pod name and
	// container name of a caller in a container (see package cri); nil leaves
	// them unknown, and rules that select by them never match.
	Workloads WorkloadResolver
}

// DefaultMaxIdentifying is Options.MaxIdentifying's default: far more
// than the node plugins of one node open at once.
const DefaultMaxIdentifying = 32

// IdentifyWait is how long a new connection waits for a free
// identification slot before it is refused.
const IdentifyWait = 2 * time.Second

// Credentials identifies the peer of every connection the server accepts
// and otherwise leaves the connection as it is: the endpoints speak plain
// HTTP/2, as upstream's clients expect, and their access control is the
// endpoint's own (socket mode, pipe security descriptor). It knows no
// transport; grpccreds.Credentials hands it to gRPC.
type Credentials struct {
	opts Options
	// slots holds one token per connection being identified.
	slots chan struct{}
	// identify and wait are identify and IdentifyWait, replaced by tests.
	identify func(net.Conn, Options, acceptMark) (Caller, *process)
	wait     time.Duration
}

// NewCredentials returns server credentials that identify callers.
func NewCredentials(o Options) *Credentials {
	n := o.MaxIdentifying
	if n <= 0 {
		n = DefaultMaxIdentifying
	}
	return &Credentials{opts: o, slots: make(chan struct{}, n), identify: identify, wait: IdentifyWait}
}

// ErrTooManyConnections refuses a connection while MaxIdentifying others
// are being identified.
var ErrTooManyConnections = fmt.Errorf("too many connections are being identified at once: %w", errdefs.ErrUnavailable)

// ServerHandshake identifies the process on the other end of conn and
// returns conn unchanged with an AuthInfo carrying it. It never fails:
// what cannot be learned is left out and explained in Caller.Incomplete.
//
// The handle on the connecting process stays with the connection (the
// returned conn closes it), so that each call can check, with
// CheckAlive, that the process that connected still runs.
//
// At most Options.MaxIdentifying connections are identified at once; a
// connection that finds no free slot within IdentifyWait is refused with
// an error wrapping ErrTooManyConnections (gRPC closes it).
func (c *Credentials) ServerHandshake(conn net.Conn) (net.Conn, PeerInfo, error) {
	// Taken before the wait for a slot, or at the accept itself when the
	// listener marked it: a process started after it cannot be the one
	// that connected, however long the wait.
	accepted, ok := acceptMarkOf(conn)
	if !ok {
		accepted = markAccepted()
	}
	t := time.NewTimer(c.wait)
	defer t.Stop()
	select {
	case c.slots <- struct{}{}:
	case <-t.C:
		return nil, nil, ErrTooManyConnections
	}
	caller, proc := c.identify(conn, c.opts, accepted)
	<-c.slots
	// The runtime is asked after the slot is freed: a runtime that is
	// slow or down must not let a caller with no rights, opening
	// connections from a container the runtime does not know, fill the
	// slots and get drivers' connections refused (issue 23). The
	// resolver bounds what that costs it: one question per container at
	// a time, failures remembered for seconds, each within its timeout.
	caller = resolveWorkload(c.opts, caller)
	ai := AuthInfo{Caller: caller, process: proc, desc: caller.String(), key: caller.AccountKey()}
	if proc == nil {
		return conn, ai, nil
	}
	return &identifiedConn{Conn: conn, process: proc}, ai, nil
}

// Identify returns what can be learned about the process on the other end
// of conn. conn may wrap the accepted connection in layers that expose it
// with a NetConn() net.Conn method, as the server's connection tracking
// does.
func Identify(conn net.Conn, o Options) Caller {
	c, p := identify(conn, o, markAccepted())
	p.close()
	return resolveWorkload(o, c)
}

// AcceptMark is when a connection was accepted, as identification
// compares it with the start time of the process found at the
// connection's PID: a process started later cannot be the one that
// connected. A listener that makes a connection wait before its handshake
// (the daemon paces each user's identifications) takes one at the accept
// with MarkAccepted and has a connection wrapper expose it, with an
// AcceptMark() AcceptMark method, which the handshake then uses instead
// of the time it begins.
type AcceptMark struct{ m acceptMark }

// MarkAccepted returns the mark of a connection accepted now.
func MarkAccepted() AcceptMark { return AcceptMark{markAccepted()} }

// acceptMarkOf returns the AcceptMark a layer of conn (or one beneath it,
// see unwrap) exposes.
func acceptMarkOf(conn net.Conn) (m acceptMark, found bool) {
	eachLayer(conn, func(c net.Conn) bool {
		if x, ok := c.(interface{ AcceptMark() AcceptMark }); ok {
			m, found = x.AcceptMark().m, true
		}
		return found
	})
	return m, found
}

// unwrap peels wrappers that expose the connection underneath.
func unwrap(c net.Conn) net.Conn {
	return eachLayer(c, func(net.Conn) bool { return false })
}

// eachLayer calls stop with conn and then with each connection beneath
// it, as wrappers expose them with a NetConn() net.Conn method, until
// stop returns true or there is no layer beneath; it returns the layer it
// stopped at.
func eachLayer(conn net.Conn, stop func(net.Conn) bool) net.Conn {
	c := conn
	for range 16 {
		if stop(c) {
			break
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		next := u.NetConn()
		if next == nil || next == c {
			break
		}
		c = next
	}
	return c
}
