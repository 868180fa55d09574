package server

import (
	"fmt"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// IdentityWarnings returns one warning per reason the daemon cannot see
// what the policy's rules select callers by: a rule naming gids,
// containers or pods never matches a caller whose process the daemon
// cannot read (a PID or cgroup namespace of its own, procfs with
// hidepid), and every call of a legitimate driver is then refused without
// a word. nil when the policy names none of these, or the daemon can see
// them. Rules naming namespaces, pod names, container names or
// ServiceAccounts also need the container runtime
// (identity.Options.Workloads), and ServiceAccounts a resolver that reads
// tokens (identity.ServiceAccountSource). The daemon logs
// these at start and after each policy reload, and readiness reports
// them.
func IdentityWarnings(p *policy.Policy, o identity.Options) []string {
	needs := p.ProcessSelectors()
	if len(needs) == 0 {
		return nil
	}
	var out []string
	if w := p.WorkloadSelectors(); len(w) > 0 && o.Workloads == nil {
		out = append(out, fmt.Sprintf("no container runtime (CRI) endpoint is configured, so callers' pod namespaces, pod names, container names and ServiceAccounts are unknown; the policy selects callers by them (%s), so those rules will not match", strings.Join(w, ", ")))
	}
	if sa := p.ServiceAccountSelectors(); len(sa) > 0 && o.Workloads != nil {
		if src, ok := o.Workloads.(identity.ServiceAccountSource); ok {
			if why := src.ServiceAccountsUnknown(); why != "" {
				out = append(out, fmt.Sprintf("callers' ServiceAccounts are unknown: %s; the policy selects callers by them (%s), so those rules will not match", why, strings.Join(sa, ", ")))
			}
		}
	}
	for _, problem := range identity.CheckVisibility(o) {
		out = append(out, fmt.Sprintf("%s; the policy selects callers by what this hides (%s), so those rules will not match", problem, strings.Join(needs, ", ")))
	}
	return out
}
