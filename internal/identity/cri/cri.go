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

	"google.golang.org/grpc"
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
	// DefaultTimeout. It is spent while a connection is identified,
	// so it is short.
	Timeout time.Duration
	// TTL is how long an answer is reused for the same container ID; 0
	// is DefaultTTL. A container's labels, mounts and ServiceAccount
	// never change, so this only bounds how long a removed container's
	// answer lingers.
	TTL time.Duration
	// KubeletPath is the kubelet's root directory (the daemon's
	// -kubelet-path), an absolute path of the host the daemon runs on.
	// The pod's ServiceAccount is read from the token kubelet keeps
	// below it (see serviceaccount.go); "" learns no ServiceAccounts.
	KubeletPath string
}

// Defaults of Config.
const (
	DefaultTimeout = 2 * time.Second
	DefaultTTL     = 5 * time.Minute
)

// maxCache bounds the cached answers; past it, expired ones are
// dropped, and if none has expired the cache starts afresh.
const maxCache = 4096

// Resolver resolves workloads through the container runtime's CRI
// RuntimeService (ContainerStatus), caching answers per container ID.
// A failure to ask the runtime is not cached: the next connection asks
// again. An answer is cached whole, a ServiceAccount that could not be
// learned (its reason in Workload.Incomplete) included, for Config.TTL.
type Resolver struct {
	cfg    Config
	conn   *grpc.ClientConn
	client runtimeapi.RuntimeServiceClient
	now    func() time.Time

	mu    sync.Mutex
	cache map[string]entry
}

type entry struct {
	w       identity.Workload
	expires time.Time
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
	if cfg.KubeletPath != "" {
		p, err := nativeStyle.Clean(cfg.KubeletPath)
		if err != nil {
			// Clean's errors wrap errdefs.ErrInvalidArgument.
			return nil, fmt.Errorf("kubelet directory for ServiceAccount tokens: %w", err)
		}
		cfg.KubeletPath = p
	}
	target, opts, err := dial(cfg.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("CRI endpoint %q: %w: %w", cfg.Endpoint, err, errdefs.ErrInvalidArgument)
	}
	conn, err := grpc.NewClient(target, opts...)
	if err != nil {
		return nil, fmt.Errorf("CRI endpoint %q: %w: %w", cfg.Endpoint, err, errdefs.ErrInvalidArgument)
	}
	return &Resolver{cfg: cfg, conn: conn, client: runtimeapi.NewRuntimeServiceClient(conn), now: time.Now, cache: map[string]entry{}}, nil
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
func (c *Resolver) Close() error { return c.conn.Close() }

// fullContainerID is the only form looked up: the runtime would resolve
// a prefix to whichever container it matches.
var fullContainerID = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Workload implements identity.WorkloadResolver.
func (c *Resolver) Workload(ctx context.Context, containerID string) (identity.Workload, error) {
	if !fullContainerID.MatchString(containerID) {
		return identity.Workload{}, errdefs.Errorf(errdefs.ErrInvalidArgument, "container ID %q is not 64 lower-case hex digits", containerID)
	}
	now := c.now()
	c.mu.Lock()
	e, ok := c.cache[containerID]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.w, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	resp, err := c.client.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: containerID}, grpc.WaitForReady(true))
	if err != nil {
		if status.Code(err) == codes.NotFound {
			return identity.Workload{}, fmt.Errorf("the container runtime does not know container %s: %w", containerID, errdefs.ErrNotFound)
		}
		return identity.Workload{}, fmt.Errorf("ask the container runtime at %s about container %s: %w: %w", c.cfg.Endpoint, containerID, err, errdefs.ErrUnavailable)
	}
	st := resp.GetStatus()
	if st.GetId() != containerID {
		return identity.Workload{}, fmt.Errorf("the container runtime answered for container %q when asked about %s: %w", st.GetId(), containerID, errdefs.ErrNotFound)
	}
	l := st.GetLabels()
	w := identity.Workload{Namespace: l[labelPodNamespace], PodName: l[labelPodName], PodUID: l[labelPodUID], ContainerName: l[labelContainerName]}
	if w.Namespace == "" || w.PodName == "" || w.PodUID == "" || w.ContainerName == "" {
		return identity.Workload{}, fmt.Errorf("container %s lacks kubelet's pod labels, so it is no container of a pod: %w", containerID, errdefs.ErrNotFound)
	}
	// The token is checked against the pod UID of the runtime's label;
	// on Linux identity believes none of this unless that UID is also the
	// one of the caller's cgroup (Windows has no kernel pod UID to hold
	// it to: there the runtime's answer for the job's container stands).
	var why string
	if w.ServiceAccount, why = c.serviceAccount(podRef{namespace: w.Namespace, podUID: w.PodUID}, st.GetMounts()); why != "" {
		w.Incomplete = "service account unknown: " + why
	}
	c.mu.Lock()
	if len(c.cache) >= maxCache {
		for id, e := range c.cache {
			if !now.Before(e.expires) {
				delete(c.cache, id)
			}
		}
		if len(c.cache) >= maxCache {
			c.cache = map[string]entry{}
		}
	}
	c.cache[containerID] = entry{w: w, expires: now.Add(c.cfg.TTL)}
	c.mu.Unlock()
	return w, nil
}

// errNoEndpointScheme is dial's answer to an endpoint it cannot use.
var errNoEndpointScheme = errors.New("want " + endpointForm)
