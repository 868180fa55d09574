// Package client reaches csi-node-proxy (or upstream csi-proxy) from a CSI
// driver: Dial connects to each API group's endpoint, picks the newest API
// version both sides have, and returns a Client that offers every group
// through the same Go interfaces and request/response types as library
// mode (groups.Node), so driver code does not change between the two.
//
// # Endpoints
//
// The daemon serves each group-version on its own endpoint: the named pipe
// \\.\pipe\csi-proxy-<group>-<version> on Windows, the Unix socket
// <SocketDir>/csi-proxy-<group>-<version>.sock elsewhere. The client holds
// one gRPC connection per group, reused by every call, and Close closes
// them all. A probe that does not become the group's connection is closed
// at once: unlike upstream's client, Dial leaves no connection behind.
//
// # Version negotiation
//
// The client is built with a list of versions per group (KnownVersions,
// newest first). For each group Dial tries them in that order, or in the
// order of Options.Versions when set, and keeps the first endpoint that
// answers a gRPC health check for the version's service. A daemon without
// the health service (upstream csi-proxy) counts as serving when its
// endpoint answers at all. When no version of a group answers, the error
// names the group, the versions the client tried, those the daemon serves
// and the pipe or socket of the newest version tried.
//
// # Which groups
//
// A driver's DaemonSet usually mounts only the pipes it uses (disk, volume
// and filesystem for a block-disk driver). With Options.Groups empty, Dial
// connects every group that answers and fails only if none does; a call to
// a group that did not answer fails with the error Dial got for it. With
// Options.Groups set, Dial connects exactly those groups and fails if one
// of them does not answer: list the groups a driver needs to catch a
// deployment that lacks one at start-up rather than at its first call.
//
// # Calls and errors
//
// Each call converts the model request into the negotiated version's wire
// request, calls, converts the response back, and turns the gRPC status
// into an error wrapping the matching errdefs sentinel, so errors.Is(err,
// errdefs.ErrNotFound) works as it does in library mode. A method the
// negotiated version lacks fails with errdefs.ErrUnimplemented; a request
// field it cannot carry, when set, fails with errdefs.ErrInvalidArgument
// rather than being dropped.
package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// Defaults for Options: a zero field means its default.
const (
	// DefaultSocketDir is where the daemon creates its Unix sockets unless
	// told otherwise (its --socket-dir default).
	DefaultSocketDir = "/run/csi-node-proxy"
	// DefaultPipePrefix begins every named pipe path, as upstream names
	// its pipes.
	DefaultPipePrefix = `\\.\pipe\`
	// DefaultDialTimeout bounds one probe: connecting to one endpoint and
	// its health check. A missing endpoint fails at once; the bound only
	// matters for a daemon that accepts but does not answer.
	DefaultDialTimeout = 5 * time.Second
)

// reconnectBackoff paces a connection's reconnection attempts: 100 ms
// growing to at most 1 s, with gRPC's usual factor and jitter.
var reconnectBackoff = backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second}

// Options says which daemon to reach and how. The zero value reaches the
// daemon at its default place, every group, every version.
type Options struct {
	// SocketDir is the directory of the daemon's Unix sockets (not used on
	// Windows). Default DefaultSocketDir.
	SocketDir string
	// PipePrefix begins the named pipe paths on Windows (not used
	// elsewhere): an endpoint is PipePrefix + "csi-proxy-<group>-<version>".
	// Default DefaultPipePrefix; tests set another to keep their pipes
	// apart.
	PipePrefix string
	// EndpointPrefix begins each endpoint's name,
	// <EndpointPrefix>-<group>-<version>: the daemon's --endpoint-prefix.
	// Default DefaultEndpointPrefix, upstream's csi-proxy-* names. A
	// driver moved to a csi-node-proxy running beside upstream's csi-proxy
	// during a migration (docs/migration.md, "Running both side by side")
	// gives the second daemon's prefix here, e.g. "csi-node-proxy", and
	// needs no dialer of its own. 1 to 40 ASCII letters, digits, '.', '_'
	// or '-', beginning with a letter or digit, as the daemon accepts.
	EndpointPrefix string
	// Groups are the groups the driver needs: any of disk, volume,
	// filesystem, smb, iscsi and system. Dial fails unless every group
	// listed answers, so a deployment that lacks one is caught at start-up;
	// the methods of a group not listed fail with
	// errdefs.ErrFailedPrecondition.
	//
	// Left empty, Dial connects every group that answers and needs only
	// one: a driver's DaemonSet mounts just the pipes it uses (azuredisk,
	// and examples/node-plugin/windows.yaml, mount disk, volume and
	// filesystem), so the others are missing by design. A group that did
	// not answer stays unavailable for this Client: each of its calls fails
	// with the error Dial got for it (naming the group, the endpoints and
	// the versions tried), wrapping errdefs.ErrUnavailable or
	// errdefs.ErrFailedPrecondition as Dial's own error would. Missing
	// lists them.
	Groups []string
	// Versions restricts the versions tried for a group to those listed,
	// in the order listed (put the preferred first). A group without an
	// entry tries every version the client knows, newest first. Each
	// version must be one KnownVersions lists for the group.
	Versions map[string][]string
	// DialTimeout bounds each probe of one endpoint. Default
	// DefaultDialTimeout. The ctx given to Dial bounds the whole Dial.
	DialTimeout time.Duration
	// GRPCOptions are added to the client's own dial options (its dialer,
	// plain HTTP/2), e.g. an interceptor for logging or tracing.
	GRPCOptions []grpc.DialOption
}

func (o Options) withDefaults() Options {
	if o.SocketDir == "" {
		o.SocketDir = DefaultSocketDir
	}
	if o.PipePrefix == "" {
		o.PipePrefix = DefaultPipePrefix
	}
	if o.EndpointPrefix == "" {
		o.EndpointPrefix = DefaultEndpointPrefix
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	return o
}

// GroupVersion is one API version of one group and where it is served.
type GroupVersion struct {
	// Group is the group: disk, volume, filesystem, smb, iscsi or system.
	Group string
	// Version is the API version, e.g. v1 or v1beta3.
	Version string
	// Service is the fully qualified gRPC service, e.g. v1.Disk.
	Service string
	// Address is the endpoint: a socket path, or a pipe path on Windows.
	Address string
}

// Endpoint is the name of a group-version's endpoint,
// csi-proxy-<group>-<version>, as upstream names its pipes.
func Endpoint(group, version string) string {
	return DefaultEndpointPrefix + "-" + group + "-" + version
}

// groupVersion is one entry of the generated registry (builtIn): a
// group-version this client is built with and how to make its stub.
type groupVersion struct {
	group, version, service string
	bind                    func(grpc.ClientConnInterface, *groups.Set)
}

// KnownVersions returns, for each group, the API versions this client is
// built with, newest first: the order Dial tries them in.
//
//	disk:       v1, v1beta3, v1beta2, v1beta1, v1alpha1
//	filesystem: v2alpha1, v1, v1beta2, v1beta1, v1alpha1
//	iscsi:      v1alpha2, v1alpha1
//	smb:        v1, v1beta2, v1beta1, v1alpha1
//	system:     v1alpha1
//	volume:     v2alpha1, v1, v1beta3, v1beta2, v1beta1, v1alpha1
//
// A v2alpha1 is preferred to v1 because it is v1 plus one method
// (filesystem RmdirContents, volume GetClosestVolumeIDFromTargetPath).
func KnownVersions() map[string][]string {
	out := map[string][]string{}
	for _, gv := range builtIn {
		out[gv.group] = append(out[gv.group], gv.version)
	}
	return out
}

// KnownGroups returns the groups this client can dial, in the order Dial
// dials them by default.
func KnownGroups() []string {
	var out []string
	for _, gv := range builtIn {
		if !slices.Contains(out, gv.group) {
			out = append(out, gv.group)
		}
	}
	return out
}

func lookup(group, version string) (groupVersion, bool) {
	for _, gv := range builtIn {
		if gv.group == group && gv.version == version {
			return gv, true
		}
	}
	return groupVersion{}, false
}

// Client is a connection to the daemon: one gRPC connection per dialed
// group. It implements groups.Node and is safe for concurrent use.
type Client struct {
	opts     Options
	groups   groups.Set
	conns    map[string]*grpc.ClientConn // by group
	versions map[string]string           // by group
	missing  map[string]error            // by group: why Dial could not connect it

	mu     sync.RWMutex
	closed bool
}

var _ groups.Node = (*Client)(nil)

// Dial connects to the daemon's groups, each at the newest version it and
// the daemon share; see the package documentation. With o.Groups set it
// fails if any group listed cannot be reached; with o.Groups empty it
// connects the groups that answer and fails only if none does (see
// Options.Groups). A failed Dial closes whatever it opened.
//
// The errors wrap errdefs sentinels: ErrInvalidArgument for bad Options;
// ErrUnavailable when no endpoint of a group answers (the daemon is not
// running, not yet listening, or listens elsewhere: retrying may help);
// ErrFailedPrecondition when the daemon serves the group but none of the
// versions tried (a deployment mismatch that retrying cannot fix).
func Dial(ctx context.Context, o Options) (*Client, error) {
	o = o.withDefaults()
	if err := checkEndpointPrefix(o.EndpointPrefix); err != nil {
		return nil, err
	}
	plan, err := o.plan()
	if err != nil {
		return nil, err
	}
	required := len(o.Groups) > 0
	c := &Client{opts: o, conns: map[string]*grpc.ClientConn{}, versions: map[string]string{}, missing: map[string]error{}}
	for _, p := range plan {
		cc, gv, err := c.negotiate(ctx, p)
		if err != nil {
			if required || ctx.Err() != nil {
				_ = c.closeConns() // Dial's error is what matters
				return nil, err
			}
			c.missing[p.group] = err
			continue
		}
		c.conns[p.group] = cc
		c.versions[p.group] = gv.version
		gv.bind(&guardedConn{cc: cc, c: c}, &c.groups)
	}
	if len(c.conns) == 0 {
		return nil, noGroup(plan, c.missing)
	}
	// Groups not connected answer every call with a clear error, through
	// the newest version's stub (it has every method, so each call reaches
	// the connection and its error).
	for _, g := range KnownGroups() {
		if _, ok := c.conns[g]; ok {
			continue
		}
		gv, _ := lookup(g, KnownVersions()[g][0])
		if err, ok := c.missing[g]; ok {
			gv.bind(missingGroup{group: g, err: err}, &c.groups)
			continue
		}
		gv.bind(notDialed(g), &c.groups)
	}
	return c, nil
}

// noGroup is Dial's error when no group answered at all: each group's
// reason, one per line. It wraps ErrFailedPrecondition when some group's
// endpoints answered without a usable version (retrying will not help),
// else ErrUnavailable (the daemon is not there, yet).
func noGroup(plan []groupPlan, why map[string]error) error {
	kind := errdefs.ErrUnavailable
	var msg strings.Builder
	msg.WriteString("csi-node-proxy client: no group answered")
	for _, p := range plan {
		err := why[p.group]
		if errors.Is(err, errdefs.ErrFailedPrecondition) {
			kind = errdefs.ErrFailedPrecondition
		}
		fmt.Fprintf(&msg, "\n  %v", err)
	}
	return errdefs.Errorf(kind, "%s", msg.String())
}

// groupPlan is the versions to try for one group, in order.
type groupPlan struct {
	group    string
	versions []string
	pinned   bool // from Options.Versions
}

// plan checks o and returns the groups to dial with their candidates.
func (o Options) plan() ([]groupPlan, error) {
	known := KnownVersions()
	want := o.Groups
	if len(want) == 0 {
		want = KnownGroups()
	}
	var out []groupPlan
	seen := map[string]bool{}
	for _, g := range want {
		if _, ok := known[g]; !ok {
			return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "Options.Groups: unknown group %q; known groups: %s", g, strings.Join(KnownGroups(), ", "))
		}
		if seen[g] {
			return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "Options.Groups: %s listed twice", g)
		}
		seen[g] = true
		p := groupPlan{group: g, versions: known[g]}
		if vs, ok := o.Versions[g]; ok {
			if len(vs) == 0 {
				return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "Options.Versions: no version listed for %s; leave it out to try every version", g)
			}
			for _, v := range vs {
				if !slices.Contains(known[g], v) {
					return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "Options.Versions: %s %s is not a version this client is built with (%s)", g, v, strings.Join(known[g], ", "))
				}
			}
			p.versions, p.pinned = vs, true
		}
		out = append(out, p)
	}
	for g := range o.Versions {
		if !seen[g] {
			return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "Options.Versions names %q, which is not a group being dialed", g)
		}
	}
	return out, nil
}

// address is where a group-version's endpoint is on this OS.
func (o Options) address(group, version string) string {
	return endpointAddress(o, o.endpoint(group, version))
}

// negotiate returns a connection to the first of p's versions the daemon
// serves. Every probe it does not return is closed.
func (c *Client) negotiate(ctx context.Context, p groupPlan) (*grpc.ClientConn, groupVersion, error) {
	probed := map[string]error{}
	for _, v := range p.versions {
		gv, _ := lookup(p.group, v)
		cc, err := c.opts.probe(ctx, gv)
		if err == nil {
			return cc, gv, nil
		}
		if ctx.Err() != nil {
			return nil, groupVersion{}, errdefs.Errorf(errdefs.ErrUnavailable, "%s: dialing %s: %v", p.group, c.opts.endpoint(p.group, v), ctx.Err())
		}
		probed[v] = err
	}
	return nil, groupVersion{}, c.opts.noCommonVersion(ctx, p, probed)
}

// noCommonVersion explains why no version of p answered: which versions
// were tried, and which of the client's known versions the daemon serves
// (probing those not tried yet).
func (o Options) noCommonVersion(ctx context.Context, p groupPlan, probed map[string]error) error {
	var served []string
	for _, v := range KnownVersions()[p.group] {
		if _, tried := probed[v]; tried {
			continue
		}
		gv, _ := lookup(p.group, v)
		if cc, err := o.probe(ctx, gv); err == nil {
			_ = cc.Close() // only a probe
			served = append(served, v)
		}
	}
	var msg strings.Builder
	fmt.Fprintf(&msg, "%s: no common API version: ", p.group)
	if p.pinned {
		fmt.Fprintf(&msg, "client tried %s (Options.Versions; it supports %s); ", strings.Join(p.versions, ", "), strings.Join(KnownVersions()[p.group], ", "))
	} else {
		fmt.Fprintf(&msg, "client supports %s; ", strings.Join(p.versions, ", "))
	}
	// FailedPrecondition ("retrying will not help") only when something
	// answered: a version served, an endpoint that said it does not serve
	// the version asked for, or an endpoint of a version this client does
	// not know that accepts connections. A socket file nobody listens on
	// (left by a daemon that died) answered nothing: the daemon may be
	// about to come back, so that is Unavailable.
	answered := len(served) > 0
	for _, err := range probed {
		if errors.Is(err, errNotServing) {
			answered = true
		}
	}
	others, stale := o.answering(ctx, o.unknownEndpoints(p.group))
	answered = answered || len(others) > 0
	switch {
	case len(served) > 0:
		fmt.Fprintf(&msg, "server serves %s", strings.Join(served, ", "))
	case len(others) > 0:
		fmt.Fprintf(&msg, "server serves none of them (it has %s, versions this client is not built with)", strings.Join(others, ", "))
	case answered:
		fmt.Fprintf(&msg, "server serves none of them (its endpoints answer without serving them)")
	default:
		fmt.Fprintf(&msg, "server serves none of them (no %s endpoint answered %s)", o.endpoint(p.group, "*"), o.where())
	}
	switch len(stale) {
	case 0:
	case 1:
		fmt.Fprintf(&msg, "; %s accepts no connection (a stale socket file)", stale[0])
	default:
		fmt.Fprintf(&msg, "; %s accept no connection (stale socket files)", strings.Join(stale, ", "))
	}
	kind := errdefs.ErrUnavailable
	if answered {
		kind = errdefs.ErrFailedPrecondition
	}
	// The first version's failure says why an endpoint did not answer
	// (missing, refused, permission denied, timed out).
	// Its full address names the pipe or socket exactly.
	if err := probed[p.versions[0]]; err != nil {
		fmt.Fprintf(&msg, "; %s: %v", o.address(p.group, p.versions[0]), err)
	}
	return errdefs.Errorf(kind, "%s", msg.String())
}

// errNotServing reports an endpoint that answered but does not serve the
// service asked for.
var errNotServing = errors.New("endpoint does not serve the service")

// answering splits endpoint names (in o's endpoint directory) into those
// that accept a connection and those that do not. Only a connection is
// made, no call: the versions are unknown to this client.
func (o Options) answering(ctx context.Context, names []string) (ok, refused []string) {
	for _, name := range names {
		dctx, cancel := context.WithTimeout(ctx, o.DialTimeout)
		conn, err := dial(dctx, endpointPath(o, name))
		cancel()
		if err != nil {
			refused = append(refused, name)
			continue
		}
		_ = conn.Close() // only a probe
		ok = append(ok, name)
	}
	return ok, refused
}

// probe connects to gv's endpoint and checks that it serves gv's service.
// On success the caller owns the connection; on failure it is closed.
func (o Options) probe(ctx context.Context, gv groupVersion) (*grpc.ClientConn, error) {
	addr := o.address(gv.group, gv.version)
	opts := append([]grpc.DialOption{
		grpc.WithContextDialer(dial),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		// A path is not a valid HTTP authority.
		grpc.WithAuthority("localhost"),
		// A local socket or pipe is cheap to dial: after the daemon
		// restarts, reconnect within about a second rather than after
		// gRPC's default backoff, which grows to 120 s.
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: reconnectBackoff, MinConnectTimeout: o.DialTimeout}),
	}, o.GRPCOptions...)
	// passthrough hands the address to the dialer unchanged, so pipe paths
	// need no URL escaping.
	cc, err := grpc.NewClient("passthrough:///"+addr, opts...)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, o.DialTimeout)
	defer cancel()
	resp, err := healthpb.NewHealthClient(cc).Check(pctx, &healthpb.HealthCheckRequest{Service: gv.service})
	switch {
	case err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING:
		return cc, nil
	case err == nil:
		// NOT_SERVING: a daemon shutting down (or not ready); it may serve
		// again, so this does not count as an answer for the error kind.
		err = fmt.Errorf("endpoint does not serve %s now: health %s", gv.service, resp.GetStatus())
	case status.Code(err) == codes.Unimplemented:
		// The endpoint answered gRPC but has no health service: upstream
		// csi-proxy, which serves each version on its own pipe. Reaching it
		// is the only check it allows.
		return cc, nil
	case status.Code(err) == codes.NotFound:
		err = fmt.Errorf("%w %s", errNotServing, gv.service)
	default:
		err = errors.New(status.Convert(err).Message())
	}
	_ = cc.Close() // a failed probe; its error is reported instead
	return nil, err
}

// Served probes every group-version this client knows (restricted to
// o.Groups and o.Versions when set) and returns those the daemon serves,
// by group in KnownGroups order and newest first. Every probe connection is
// closed before it returns. A daemon that serves nothing gives an empty
// list, not an error; bad Options give errdefs.ErrInvalidArgument.
func Served(ctx context.Context, o Options) ([]GroupVersion, error) {
	o = o.withDefaults()
	if err := checkEndpointPrefix(o.EndpointPrefix); err != nil {
		return nil, err
	}
	plan, err := o.plan()
	if err != nil {
		return nil, err
	}
	var out []GroupVersion
	for _, p := range plan {
		for _, v := range p.versions {
			gv, _ := lookup(p.group, v)
			cc, err := o.probe(ctx, gv)
			if err != nil {
				if ctx.Err() != nil {
					return nil, errdefs.Errorf(errdefs.ErrUnavailable, "probing %s: %v", o.endpoint(p.group, v), ctx.Err())
				}
				continue
			}
			_ = cc.Close() // only a probe
			out = append(out, GroupVersion{Group: gv.group, Version: gv.version, Service: gv.service, Address: o.address(gv.group, gv.version)})
		}
	}
	return out, nil
}

// Missing returns the groups Dial was to connect but could not, each with
// the error its calls return: only with Options.Groups empty (otherwise
// Dial fails instead). A driver may log it at start-up.
func (c *Client) Missing() map[string]error {
	out := make(map[string]error, len(c.missing))
	for g, err := range c.missing {
		out[g] = err
	}
	return out
}

// Versions returns the negotiated version of each dialed group.
func (c *Client) Versions() map[string]string {
	out := make(map[string]string, len(c.versions))
	for g, v := range c.versions {
		out[g] = v
	}
	return out
}

// Disk returns the disk group.
func (c *Client) Disk() disk.Interface { return c.groups.Disk }

// Volume returns the volume group.
func (c *Client) Volume() volume.Interface { return c.groups.Volume }

// Filesystem returns the filesystem group.
func (c *Client) Filesystem() filesystem.Interface { return c.groups.Filesystem }

// SMB returns the SMB group.
func (c *Client) SMB() smb.Interface { return c.groups.SMB }

// SMBMappings returns csi-node-proxy's own SMB mappings group, served on
// its own endpoint (csi-proxy-smbmappings-v1alpha1); upstream's daemon
// does not serve it, so there its calls fail as a missing group's do.
func (c *Client) SMBMappings() smbmappings.Interface { return c.groups.SMBMappings }

// ISCSI returns the iSCSI group.
func (c *Client) ISCSI() iscsi.Interface { return c.groups.ISCSI }

// System returns the system group.
func (c *Client) System() system.Interface { return c.groups.System }

// Close closes every connection. Calls made after Close fail with
// errdefs.ErrFailedPrecondition; calls in flight end as gRPC ends them
// (codes.Canceled). Closing twice is not an error.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	return c.closeConns()
}

func (c *Client) closeConns() error {
	var errs []error
	for _, g := range KnownGroups() {
		if cc := c.conns[g]; cc != nil {
			if err := cc.Close(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", g, err))
			}
		}
	}
	return errors.Join(errs...)
}

func (c *Client) isClosed() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.closed
}

// guardedConn is a group's connection as its stub sees it: after Close,
// calls fail with a clear error instead of gRPC's "connection is closing",
// and a request with a string that is not valid UTF-8 is refused before it
// is sent (checkUTF8).
type guardedConn struct {
	cc grpc.ClientConnInterface
	c  *Client
}

// errClosed is what a call after Close returns.
var errClosed = errdefs.Errorf(errdefs.ErrFailedPrecondition, "csi-node-proxy client: the client is closed")

// Invoke implements grpc.ClientConnInterface.
func (g *guardedConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if g.c.isClosed() {
		return errClosed
	}
	if err := checkUTF8(method, args); err != nil {
		return err
	}
	return g.cc.Invoke(ctx, method, args, reply, opts...)
}

// NewStream implements grpc.ClientConnInterface; no API has streams.
func (g *guardedConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if g.c.isClosed() {
		return nil, errClosed
	}
	return g.cc.NewStream(ctx, desc, method, opts...)
}

// notDialed is the connection of a group Dial was not asked for.
type notDialed string

// Invoke implements grpc.ClientConnInterface: it fails every call.
func (n notDialed) Invoke(context.Context, string, any, any, ...grpc.CallOption) error {
	return n.err()
}

// NewStream implements grpc.ClientConnInterface: it fails every call.
func (n notDialed) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, n.err()
}

// missingGroup is the connection of a group Dial tried and could not
// connect: every call fails with what Dial found.
type missingGroup struct {
	group string
	err   error
}

// Invoke implements grpc.ClientConnInterface: it fails every call.
func (m missingGroup) Invoke(context.Context, string, any, any, ...grpc.CallOption) error {
	return m.error()
}

// NewStream implements grpc.ClientConnInterface: it fails every call.
func (m missingGroup) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, m.error()
}

// error says the group is unavailable and why, wrapping the kind Dial's
// error had (Unavailable or FailedPrecondition).
func (m missingGroup) error() error {
	return fmt.Errorf("csi-node-proxy client: group %s is not available on this node (Dial could not connect it; list it in Options.Groups to make Dial fail instead, or Dial again once the node serves it): %w", m.group, m.err)
}

func (n notDialed) err() error {
	return errdefs.Errorf(errdefs.ErrFailedPrecondition, "csi-node-proxy client: group %s was not dialed; add it to Options.Groups", string(n))
}
