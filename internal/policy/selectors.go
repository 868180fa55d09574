package policy

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/k8sname"
)

// validateSelector checks one caller selector of a rule: at least one
// field set (or any alone), and every value in the form its field matches.
func validateSelector(c CallerSelector) []error {
	var errs []error
	set := len(c.UIDs) + len(c.GIDs) + len(c.ContainerIDs) + len(c.PodUIDs) + len(c.WindowsAccounts) + len(c.WindowsGroups) +
		len(c.Namespaces) + len(c.PodNames) + len(c.ContainerNames) + len(c.ServiceAccounts)
	pods := len(c.ContainerIDs) + len(c.PodUIDs) + len(c.Namespaces) + len(c.PodNames) + len(c.ContainerNames) + len(c.ServiceAccounts)
	if c.NodeProcess {
		set++
	}
	switch {
	case c.NodeProcess && pods > 0:
		errs = append(errs, errors.New("nodeProcess matches callers in no pod or container: it cannot be combined with pod or container fields"))
	case c.Any && set > 0:
		errs = append(errs, errors.New("any cannot be combined with other fields"))
	case !c.Any && set == 0:
		errs = append(errs, errors.New("empty: name namespaces, podNames, containerNames, serviceAccounts, uids, gids, containerIDs, podUIDs, windowsAccounts or windowsGroups, or say any: true"))
	}
	for _, n := range c.Namespaces {
		if !k8sname.IsDNSLabel(n) {
			errs = append(errs, fmt.Errorf("namespaces: %q is not a namespace (lower-case RFC 1123 label)", n))
		}
	}
	for _, n := range c.PodNames {
		if _, err := path.Match(n, ""); err != nil || !podNamePattern.MatchString(n) {
			errs = append(errs, fmt.Errorf("podNames: %q is not a pod name or pattern (lower-case letters, digits, '-', '.', and * ? [...])", n))
		}
	}
	for _, n := range c.ContainerNames {
		if !k8sname.IsDNSLabel(n) {
			errs = append(errs, fmt.Errorf("containerNames: %q is not a container name (lower-case RFC 1123 label)", n))
		}
	}
	for _, sa := range c.ServiceAccounts {
		ns, name, ok := strings.Cut(sa, "/")
		if !ok || !k8sname.IsDNSLabel(ns) || !k8sname.IsDNSSubdomain(name) {
			errs = append(errs, fmt.Errorf("serviceAccounts: %q is not namespace/name (a namespace, '/', and a ServiceAccount name: lower-case RFC 1123 subdomain)", sa))
		}
	}
	for _, id := range c.ContainerIDs {
		if !hex64.MatchString(id) {
			errs = append(errs, fmt.Errorf("containerIDs: %q is not a full container ID (64 lower-case hex digits)", id))
		}
	}
	for _, u := range c.PodUIDs {
		if !k8sname.IsPodUID(u) {
			errs = append(errs, fmt.Errorf("podUIDs: %q is not a pod UID", u))
		}
	}
	for _, a := range c.WindowsAccounts {
		if strings.TrimSpace(a) == "" || strings.TrimSpace(a) != a {
			errs = append(errs, fmt.Errorf("windowsAccounts: %q: want DOMAIN\\name or a SID", a))
		}
	}
	for _, g := range c.WindowsGroups {
		if !sidForm.MatchString(g) {
			errs = append(errs, fmt.Errorf("windowsGroups: %q is not a SID (S-1-5-32-544 ...); groups are matched by SID", g))
		}
	}
	return errs
}

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
