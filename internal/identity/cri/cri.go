// Package cri names the Kubernetes workload of a container by asking the
// node's container runtime over its CRI socket (RuntimeService
// ContainerStatus): the pod namespace, pod name, pod UID and container
// name kubelet labels every container with. It is identity's
// identity.WorkloadResolver, kept apart from package identity so that the gRPC
// client it needs stays out of programs that only identify callers.
package cri

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

// The labels kubelet sets on every container it creates through the CRI
// (kubelet's types.KubernetesPodNamespaceLabel and its siblings).
const (
	labelPodNamespace  = "io.kubernetes.pod.namespace"
	labelPodName       = "io.kubernetes.pod.name"
	labelPodUID        = "io.kubernetes.pod.uid"
	labelContainerName = "io.kubernetes.container.name"
)

// Config says how to reach the node's container runtime.
type Config struct {
	// Endpoint is the runtime's CRI socket: unix:///path on Linux,
	// npipe:////./pipe/name on Windows; "" is DefaultEndpoint.
	Endpoint string
	// Timeout bounds one question to the runtime; 0 is
	// DefaultTimeout.
	Timeout time.Duration
	// TTL is how long an answer is reused for the same container ID; 0
	// is DefaultTTL. A container's labels, mounts and ServiceAccount
	// never change, so this only bounds how long a removed container's
	// answer lingers.
	TTL time.Duration
	// NegativeTTL is how long a runtime that could not be asked, or a
	// container it does not know, is answered from memory; 0 is
	// DefaultNegativeTTL.
	NegativeTTL time.Duration
	// KubeletPath is the kubelet's root directory (the daemon's
	// -kubelet-path), an absolute path of the host the daemon runs on.
	// The pod's ServiceAccount is read from the token kubelet keeps
	// below it (see serviceaccount.go); "" learns no ServiceAccounts.
	KubeletPath string
}

// Defaults of Config.
const (
	// DefaultTimeout bounds one lookup: 500 ms. A runtime answers
	// ContainerStatus over its local socket in a few milliseconds, so
	// this is a hundred times that for a loaded one, while a runtime
	// that is down or hung costs each new connection at most half a
	// second of its handshake (the lookup never waits for the runtime to
	// come up: no WaitForReady). It was 2 s with WaitForReady, and a
	// caller with no rights opening 40 connections/s kept drivers' new
	// connections waiting (issue 23).
	DefaultTimeout = 500 * time.Millisecond
	// DefaultTTL bounds how long a container's answer is reused.
	DefaultTTL = 5 * time.Minute
	// DefaultNegativeTTL is how long a failure is reused: 3 s. While
	// the runtime cannot be asked, every lookup in that time fails at
	// once instead of waiting DefaultTimeout again; a container the
	// runtime does not know (not one of a pod: a flooding caller's) is
	// not asked about again in that time. A runtime that comes back is
	// asked again at most 3 s later.
	DefaultNegativeTTL = 3 * time.Second
)

// maxCache bounds the cached answers; past it, expired ones are
// dropped, and if none has expired the cache starts afresh.
const maxCache = 4096

// Resolver resolves workloads through the container runtime's CRI
// RuntimeService (ContainerStatus), caching answers per container ID.
// An answer is cached whole, a ServiceAccount that could not be learned
// (its reason in Workload.Incomplete) included, for Config.TTL; a
// container the runtime does not know, and the runtime being
// unreachable, for Config.NegativeTTL. Lookups of the same container
// at the same time share one question to the runtime. When the
// runtime's socket file is replaced (the runtime restarted), the
// connection to the old one is dropped and the new one dialled.
type Resolver struct {
	cfg  Config
	rt   *runtimeConn
	now  func() time.Time
	stat Stats

	mu       sync.Mutex
	cache    map[string]entry
	down     entry // the runtime could not be asked, until down.expires
	inflight map[string]*lookup
}

// entry is a cached answer: a workload, or the error asking gave.
type entry struct {
	w       identity.Workload
	err     error
	expires time.Time
}

// lookup is a question to the runtime in progress; others asking about
// the same container wait for done and take its answer.
type lookup struct {
	done chan struct{}
	e    entry
}

var _ identity.WorkloadResolver = (*Resolver)(nil)

// New returns a resolver that asks the runtime at cfg.Endpoint. It
// does not connect yet: a runtime that is down at start is asked again on
// each lookup.
func New(cfg Config) (*Resolver, error) {
	if cfg.Endpoint == "" {
		cfg.Endpoint = DefaultEndpoint
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.NegativeTTL <= 0 {
		cfg.NegativeTTL = DefaultNegativeTTL
	}
	if cfg.KubeletPath != "" {
		p, err := nativeStyle.Clean(cfg.KubeletPath)
		if err != nil {
			// Clean's errors wrap errdefs.ErrInvalidArgument.
			return nil, fmt.Errorf("kubelet directory for ServiceAccount tokens: %w", err)
		}
		cfg.KubeletPath = p
	}
	rt, err := newRuntimeConn(cfg.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("CRI endpoint %q: %w: %w", cfg.Endpoint, err, errdefs.ErrInvalidArgument)
	}
	return &Resolver{cfg: cfg, rt: rt, now: time.Now, cache: map[string]entry{}, inflight: map[string]*lookup{}}, nil
}

var _ identity.ServiceAccountSource = (*Resolver)(nil)

// ServiceAccountsUnknown implements identity.ServiceAccountSource.
func (c *Resolver) ServiceAccountsUnknown() string {
	if c.cfg.KubeletPath == "" {
		return "no kubelet directory is configured, so no ServiceAccount token is read"
	}
	return ""
}

// Close closes the connection to the runtime.
func (c *Resolver) Close() error { return c.rt.close() }

// fullContainerID is the only form looked up: the runtime would resolve
// a prefix to whichever container it matches.
var fullContainerID = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Workload implements identity.WorkloadResolver. It returns within
// Config.Timeout, or sooner when ctx ends.
func (c *Resolver) Workload(ctx context.Context, containerID string) (identity.Workload, error) {
	if !fullContainerID.MatchString(containerID) {
		return identity.Workload{}, errdefs.Errorf(errdefs.ErrInvalidArgument, "container ID %q is not 64 lower-case hex digits", containerID)
	}
	c.stat.Lookups.Add(1)
	now := c.now()
	c.mu.Lock()
	if e, ok := c.cache[containerID]; ok && now.Before(e.expires) {
		c.mu.Unlock()
		if e.err != nil {
			c.stat.NegativeHits.Add(1)
		}
		return e.w, e.err
	}
	if now.Before(c.down.expires) {
		err := c.down.err
		c.mu.Unlock()
		c.stat.NegativeHits.Add(1)
		return identity.Workload{}, err
	}
	l, asking := c.inflight[containerID]
	if !asking {
		l = &lookup{done: make(chan struct{})}
		c.inflight[containerID] = l
	}
	c.mu.Unlock()
	if asking {
		select {
		case <-l.done:
			return l.e.w, l.e.err
		case <-ctx.Done():
			return identity.Workload{}, fmt.Errorf("wait for the container runtime's answer about container %s: %w: %w", containerID, ctx.Err(), errdefs.ErrUnavailable)
		}
	}
	l.e = c.ask(ctx, containerID)
	c.mu.Lock()
	delete(c.inflight, containerID)
	c.remember(containerID, l.e)
	c.mu.Unlock()
	close(l.done)
	return l.e.w, l.e.err
}

// remember caches e for containerID, or, when the runtime could not be
// asked, for every container. c.mu is held.
func (c *Resolver) remember(containerID string, e entry) {
	if errors.Is(e.err, errdefs.ErrUnavailable) {
		c.down = e
		return
	}
	if len(c.cache) >= maxCache {
		now := c.now()
		for id, old := range c.cache {
			if !now.Before(old.expires) {
				delete(c.cache, id)
			}
		}
		if len(c.cache) >= maxCache {
			c.cache = map[string]entry{}
		}
	}
	c.cache[containerID] = e
}

// ask asks the runtime about containerID, within Config.Timeout, and
// returns the answer with its expiry.
func (c *Resolver) ask(ctx context.Context, containerID string) entry {
	c.stat.Asked.Add(1)
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	fail := func(err error) entry { return entry{err: err, expires: c.now().Add(c.cfg.NegativeTTL)} }
	client, err := c.rt.client(&c.stat)
	if err != nil {
		return fail(fmt.Errorf("ask the container runtime at %s about container %s: %w: %w", c.cfg.Endpoint, containerID, err, errdefs.ErrUnavailable))
	}
	resp, err := client.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: containerID})
	if err != nil {
		switch status.Code(err) {
		case codes.NotFound:
			return fail(fmt.Errorf("the container runtime does not know container %s: %w", containerID, errdefs.ErrNotFound))
		case codes.Canceled:
			// The caller gave up, which says nothing of the runtime:
			// nothing is cached (the entry has expired already).
			return entry{err: fmt.Errorf("ask the container runtime about container %s: %w: %w", containerID, err, errdefs.ErrUnavailable)}
		case codes.Unavailable, codes.DeadlineExceeded:
			// Without this, gRPC would wait out its reconnection
			// backoff (up to two minutes) after the runtime is back.
			c.rt.resetBackoff()
			return fail(fmt.Errorf("ask the container runtime at %s about container %s: %w: %w", c.cfg.Endpoint, containerID, err, errdefs.ErrUnavailable))
		}
		return fail(fmt.Errorf("ask the container runtime at %s about container %s: %w: %w", c.cfg.Endpoint, containerID, err, errdefs.ErrNotFound))
	}
	st := resp.GetStatus()
	if st.GetId() != containerID {
		return fail(fmt.Errorf("the container runtime answered for container %q when asked about %s: %w", st.GetId(), containerID, errdefs.ErrNotFound))
	}
	l := st.GetLabels()
	w := identity.Workload{Namespace: l[labelPodNamespace], PodName: l[labelPodName], PodUID: l[labelPodUID], ContainerName: l[labelContainerName]}
	if w.Namespace == "" || w.PodName == "" || w.PodUID == "" || w.ContainerName == "" {
		return fail(fmt.Errorf("container %s lacks kubelet's pod labels, so it is no container of a pod: %w", containerID, errdefs.ErrNotFound))
	}
	// The token is checked against the pod UID of the runtime's label;
	// on Linux identity believes none of this unless that UID is also the
	// one of the caller's cgroup (Windows has no kernel pod UID to hold
	// it to: there the runtime's answer for the job's container stands).
	var why string
	if w.ServiceAccount, why = c.serviceAccount(podRef{namespace: w.Namespace, podUID: w.PodUID}, st.GetMounts()); why != "" {
		w.Incomplete = "service account unknown: " + why
	}
	return entry{w: w, expires: c.now().Add(c.cfg.TTL)}
}

// errNoEndpointScheme is dial's answer to an endpoint it cannot use.
var errNoEndpointScheme = errors.New("want " + endpointForm)
