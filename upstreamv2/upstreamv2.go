// Package upstreamv2 is upstream csi-proxy's v2 library (KEP-3636,
// github.com/kubernetes-csi/csi-proxy/v2) on csi-node-proxy's library mode:
// the packages below it, pkg/<group> and pkg/<group>/hostapi, have the
// layout, names and call shapes of upstream's (branch library-development
// at e776c65; disk with PR #438's SetDiskReadOnly and GetDiskReadOnly,
// commit 874f535), so a driver written against upstream's library moves
// by changing its import prefix
//
//	github.com/kubernetes-csi/csi-proxy/v2 -> github.com/csi-node-proxy/csi-node-proxy/upstreamv2
//
// or, without touching its code, by one replace line naming the module
// v2compat, whose packages forward to these (docs/driver-migration.md,
// "From upstream's v2 library").
//
// Every call goes through one library-mode node (package inprocess), the
// daemon's group Services behind its call gate: validation, path
// confinement, the policy and the audit log are the daemon's. Where
// upstream's hostapi.New() calls Windows directly, ours returns a handle
// on that node, which the first pkg/<group>.New builds with the Options
// given to Configure, or, without Configure, inprocess's defaults (the
// real backend of this OS, the kubelet's directory) with the policy file
// and audit log named by $CSI_NODE_PROXY_POLICY and
// $CSI_NODE_PROXY_AUDIT_LOG, so that a driver switched by a replace line
// alone can still be confined and audited.
package upstreamv2

import (
	"context"
	"errors"
	"os"
	"sync"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
)

// Environment variables read when Configure was not called.
const (
	// EnvPolicy names the policy file (inprocess.Options.PolicyFile).
	EnvPolicy = "CSI_NODE_PROXY_POLICY"
	// EnvAuditLog names the audit log (inprocess.Options.AuditLog).
	EnvAuditLog = "CSI_NODE_PROXY_AUDIT_LOG"
)

// shared is the process's node: upstream's constructors take no
// arguments, so every hostapi.New() of a process shares one.
var shared struct {
	mu    sync.Mutex
	opts  *inprocess.Options // Configure's, or nil
	node  groups.Node        // built or given; nil until first use
	owned bool               // node was built here, so Close closes it
}

// errConfigured refuses a Configure or Use that comes too late.
var errConfigured = errdefs.Errorf(errdefs.ErrFailedPrecondition,
	"csi-node-proxy upstreamv2: the node is in use already; call Configure or Use before the first pkg/<group>.New, or Close first")

// Configure sets the library-mode Options of the node the hostapi
// handles share. Call it before the first pkg/<group>.New; later it fails
// with errdefs.ErrFailedPrecondition until Close.
func Configure(o inprocess.Options) error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.node != nil {
		return errConfigured
	}
	shared.opts = &o
	return nil
}

// Use makes the hostapi handles share a node the caller built (with
// inprocess.New, or any groups.Node); Close does not close it.
func Use(n groups.Node) error {
	if n == nil {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "csi-node-proxy upstreamv2: Use(nil)")
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.node != nil {
		return errConfigured
	}
	shared.node, shared.owned = n, false
	return nil
}

// Close closes the shared node if it was built here and forgets it and
// Configure's Options: the next pkg/<group>.New builds a new one. Groups
// made before keep the closed node, whose calls fail.
func Close() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	n, owned := shared.node, shared.owned
	shared.node, shared.owned, shared.opts = nil, false, nil
	if n != nil && owned {
		return n.Close()
	}
	return nil
}

// SharedNode returns the shared node, building it on first use.
func SharedNode() (groups.Node, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.node != nil {
		return shared.node, nil
	}
	o := inprocess.Options{PolicyFile: os.Getenv(EnvPolicy), AuditLog: os.Getenv(EnvAuditLog)}
	if shared.opts != nil {
		o = *shared.opts
	}
	n, err := inprocess.New(context.Background(), o)
	if err != nil {
		return nil, errors.Join(errors.New("csi-node-proxy upstreamv2: build the library-mode node"), err)
	}
	shared.node, shared.owned = n, true
	return n, nil
}

// Host is what pkg/<group>/hostapi.New returns and pkg/<group>.New takes:
// the way to one group of a node. Upstream's HostAPI interfaces list
// Windows operations; ours resolves to the group's Interface, so a test
// can hand pkg/<group>.New any implementation of it.
type Host[G any] interface {
	// Group returns the group, building the shared node if need be.
	Group() (G, error)
}

// SharedHost returns the Host of one group of the shared node; pick
// chooses the group (groups.Node.Disk, ...).
func SharedHost[G any](pick func(groups.Node) G) Host[G] { return sharedHost[G]{pick} }

// NodeHost returns the Host of one group of the node n.
func NodeHost[G any](n groups.Node, pick func(groups.Node) G) Host[G] {
	return nodeHost[G]{n: n, pick: pick}
}

type sharedHost[G any] struct{ pick func(groups.Node) G }

// Group implements Host.
func (h sharedHost[G]) Group() (G, error) {
	n, err := SharedNode()
	if err != nil {
		var zero G
		return zero, err
	}
	return h.pick(n), nil
}

type nodeHost[G any] struct {
	n    groups.Node
	pick func(groups.Node) G
}

// Group implements Host.
func (h nodeHost[G]) Group() (G, error) { return h.pick(h.n), nil }
