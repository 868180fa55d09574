package identity

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// Workload is the Kubernetes workload a container belongs to, as the
// node's container runtime knows it. The runtime holds no ServiceAccount:
// kubelet does not pass it down the CRI (neither as a container label nor
// as a sandbox annotation), so the node cannot tell it without the API
// server.
type Workload struct {
	// Namespace is the pod's namespace.
	Namespace string
	// PodName is the pod's name.
	PodName string
	// PodUID is the pod's UID.
	PodUID string
	// ContainerName is the container's name in the pod spec.
	ContainerName string
}

// WorkloadResolver names the workload of a container by its full ID.
// Errors wrap errdefs sentinels: ErrNotFound for a container the runtime
// does not know (or knows without kubelet's labels), ErrUnavailable when
// the runtime cannot be asked.
type WorkloadResolver interface {
	Workload(ctx context.Context, containerID string) (Workload, error)
}

// The labels kubelet sets on every container it creates through the CRI
// (kubelet's types.KubernetesPodNamespaceLabel and its siblings).
const (
	labelPodNamespace  = "io.kubernetes.pod.namespace"
	labelPodName       = "io.kubernetes.pod.name"
	labelPodUID        = "io.kubernetes.pod.uid"
	labelContainerName = "io.kubernetes.container.name"
)

// CRIConfig says how to reach the node's container runtime.
type CRIConfig struct {
	// Endpoint is the runtime's CRI socket: unix:///path on Linux,
	// npipe:////./pipe/name on Windows; "" is DefaultCRIEndpoint.
	Endpoint string
	// Timeout bounds one question to the runtime; 0 is
	// DefaultCRITimeout. It is spent while a connection is identified,
	// so it is short.
	Timeout time.Duration
	// TTL is how long an answer is reused for the same container ID; 0
	// is DefaultCRITTL. A container's labels never change, so this only
	// bounds how long a removed container's answer lingers.
	TTL time.Duration
}

// Defaults of CRIConfig.
const (
	DefaultCRITimeout = 2 * time.Second
	DefaultCRITTL     = 5 * time.Minute
)

// maxCRICache bounds the cached answers; past it, expired ones are
// dropped, and if none has expired the cache starts afresh.
const maxCRICache = 4096

// CRI resolves workloads through the container runtime's CRI
// RuntimeService (ContainerStatus), caching answers per container ID.
// Failures are not cached: the next connection asks again.
type CRI struct {
	cfg    CRIConfig
	conn   *grpc.ClientConn
	client runtimeapi.RuntimeServiceClient
	now    func() time.Time

	mu    sync.Mutex
	cache map[string]criEntry
}

type criEntry struct {
	w       Workload
	expires time.Time
}

var _ WorkloadResolver = (*CRI)(nil)

// NewCRI returns a resolver that asks the runtime at cfg.Endpoint. It
// does not connect yet: a runtime that is down at start is asked again on
// each lookup.
func NewCRI(cfg CRIConfig) (*CRI, error) {
	if cfg.Endpoint == "" {
		cfg.Endpoint = DefaultCRIEndpoint
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultCRITimeout
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultCRITTL
	}
	target, opts, err := criDial(cfg.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("CRI endpoint %q: %w: %w", cfg.Endpoint, err, errdefs.ErrInvalidArgument)
	}
	conn, err := grpc.NewClient(target, opts...)
	if err != nil {
		return nil, fmt.Errorf("CRI endpoint %q: %w: %w", cfg.Endpoint, err, errdefs.ErrInvalidArgument)
	}
	return &CRI{cfg: cfg, conn: conn, client: runtimeapi.NewRuntimeServiceClient(conn), now: time.Now, cache: map[string]criEntry{}}, nil
}

// Close closes the connection to the runtime.
func (c *CRI) Close() error { return c.conn.Close() }

// fullContainerID is the only form looked up: the runtime would resolve
// a prefix to whichever container it matches.
var fullContainerID = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Workload implements WorkloadResolver.
func (c *CRI) Workload(ctx context.Context, containerID string) (Workload, error) {
	if !fullContainerID.MatchString(containerID) {
		return Workload{}, errdefs.Errorf(errdefs.ErrInvalidArgument, "container ID %q is not 64 lower-case hex digits", containerID)
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
			return Workload{}, fmt.Errorf("the container runtime does not know container %s: %w", containerID, errdefs.ErrNotFound)
		}
		return Workload{}, fmt.Errorf("ask the container runtime at %s about container %s: %w: %w", c.cfg.Endpoint, containerID, err, errdefs.ErrUnavailable)
	}
	st := resp.GetStatus()
	if st.GetId() != containerID {
		return Workload{}, fmt.Errorf("the container runtime answered for container %q when asked about %s: %w", st.GetId(), containerID, errdefs.ErrNotFound)
	}
	l := st.GetLabels()
	w := Workload{Namespace: l[labelPodNamespace], PodName: l[labelPodName], PodUID: l[labelPodUID], ContainerName: l[labelContainerName]}
	if w.Namespace == "" || w.PodName == "" || w.PodUID == "" || w.ContainerName == "" {
		return Workload{}, fmt.Errorf("container %s lacks kubelet's pod labels, so it is no container of a pod: %w", containerID, errdefs.ErrNotFound)
	}
	c.mu.Lock()
	if len(c.cache) >= maxCRICache {
		for id, e := range c.cache {
			if !now.Before(e.expires) {
				delete(c.cache, id)
			}
		}
		if len(c.cache) >= maxCRICache {
			c.cache = map[string]criEntry{}
		}
	}
	c.cache[containerID] = criEntry{w: w, expires: now.Add(c.cfg.TTL)}
	c.mu.Unlock()
	return w, nil
}

// resolveWorkload adds the workload of c's container, when o has a
// resolver and c a container. The runtime must agree with the pod the
// kernel's cgroup path names: if it does not, neither is believed beyond
// what the kernel said, and c.Incomplete says so.
func resolveWorkload(o Options, c Caller) Caller {
	if o.Workloads == nil || c.ContainerID == "" {
		return c
	}
	w, err := o.Workloads.Workload(context.Background(), c.ContainerID)
	if err != nil {
		c.Incomplete = joinIncomplete(c.Incomplete, "workload unknown: "+err.Error())
		return c
	}
	if c.PodUID != "" && normalPodUID(c.PodUID) != normalPodUID(w.PodUID) {
		c.Incomplete = joinIncomplete(c.Incomplete, fmt.Sprintf("workload unknown: the container runtime says container %s is in pod %s, its cgroup says pod %s; they disagree", c.ContainerID, w.PodUID, c.PodUID))
		return c
	}
	if c.PodUID == "" {
		c.PodUID = w.PodUID
	}
	c.PodNamespace, c.PodName, c.ContainerName = w.Namespace, w.PodName, w.ContainerName
	return c
}

// normalPodUID compares pod UIDs with and without dashes (static pods'
// UIDs have none), without case.
func normalPodUID(u string) string { return strings.ToLower(strings.ReplaceAll(u, "-", "")) }

func joinIncomplete(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// errNoEndpointScheme is criDial's answer to an endpoint it cannot use.
var errNoEndpointScheme = errors.New("want " + criEndpointForm)
