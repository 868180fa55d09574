package identity

import (
	"context"
	"fmt"
	"strings"
)

// Workload is the Kubernetes workload a container belongs to, as the
// node's container runtime knows it (package cri asks it over the CRI),
// and the ServiceAccount of its pod, from the token kubelet mounted into
// the container.
type Workload struct {
	// Namespace is the pod's namespace.
	Namespace string
	// PodName is the pod's name.
	PodName string
	// PodUID is the pod's UID.
	PodUID string
	// ContainerName is the container's name in the pod spec.
	ContainerName string
	// ServiceAccount is the name of the pod's ServiceAccount, in
	// Namespace; "" when unknown (no token is mounted into the
	// container, or the one mounted cannot be trusted).
	ServiceAccount string
	// Incomplete says why a field above (so far only ServiceAccount)
	// is unknown although the rest is; "" when nothing is missing.
	Incomplete string
}

// WorkloadResolver names the workload of a container by its full ID.
// Errors wrap errdefs sentinels: ErrNotFound for a container the runtime
// does not know (or knows without kubelet's labels), ErrUnavailable when
// the runtime cannot be asked. The resolver lives outside this package
// (package cri) so that identifying a caller does not drag a gRPC client
// into every program that only needs Caller.
type WorkloadResolver interface {
	Workload(ctx context.Context, containerID string) (Workload, error)
}

// ServiceAccountSource is implemented by a WorkloadResolver that can say
// up front that it learns no ServiceAccounts (cri.Resolver without a
// kubelet directory), so the daemon can warn about rules that select by
// them instead of refusing their callers without a word.
type ServiceAccountSource interface {
	// ServiceAccountsUnknown says why no ServiceAccount will be
	// learned; "" when they can be.
	ServiceAccountsUnknown() string
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
	c.PodNamespace, c.PodName, c.ContainerName, c.ServiceAccount = w.Namespace, w.PodName, w.ContainerName, w.ServiceAccount
	if w.Incomplete != "" {
		c.Incomplete = joinIncomplete(c.Incomplete, w.Incomplete)
	}
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
