package policy

import "slices"

// ProcessSelectors lists, as "rule <name>: <field>", every selector field
// of the policy that only matches when the daemon can read the caller's
// process (its supplementary groups, container or pod): gids,
// containerIDs, podUIDs, and the workload fields (WorkloadSelectors),
// which start from the container. uids come from the kernel with the
// connection and need nothing more. The daemon warns at start when it
// names any of these and cannot see its callers' processes
// (identity.CheckVisibility).
func (p *Policy) ProcessSelectors() []string {
	return p.selectors(func(s CallerSelector) []selectorField {
		return append([]selectorField{{"gids", len(s.GIDs) > 0}, {"containerIDs", len(s.ContainerIDs) > 0}, {"podUIDs", len(s.PodUIDs) > 0}}, s.workloadFields()...)
	})
}

// WorkloadSelectors lists, as ProcessSelectors does, the selector fields
// that need the container runtime's answer (identity.Options.Workloads):
// namespaces, podNames, containerNames, serviceAccounts.
func (p *Policy) WorkloadSelectors() []string {
	return p.selectors(CallerSelector.workloadFields)
}

// ServiceAccountSelectors lists, as ProcessSelectors does, the
// serviceAccounts selector fields, which also need the ServiceAccount
// token of the caller's container (identity.ServiceAccountSource).
func (p *Policy) ServiceAccountSelectors() []string {
	return p.selectors(func(s CallerSelector) []selectorField {
		return []selectorField{{"serviceAccounts", len(s.ServiceAccounts) > 0}}
	})
}

type selectorField struct {
	name string
	set  bool
}

func (s CallerSelector) workloadFields() []selectorField {
	return []selectorField{{"namespaces", len(s.Namespaces) > 0}, {"podNames", len(s.PodNames) > 0}, {"containerNames", len(s.ContainerNames) > 0}, {"serviceAccounts", len(s.ServiceAccounts) > 0}}
}

func (p *Policy) selectors(fields func(CallerSelector) []selectorField) []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, r := range p.rules {
		for _, s := range r.Callers {
			for _, f := range fields(s) {
				if f.set && !slices.Contains(out, "rule "+r.Name+": "+f.name) {
					out = append(out, "rule "+r.Name+": "+f.name)
				}
			}
		}
	}
	return out
}
