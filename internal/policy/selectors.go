package policy

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/k8sname"
)

// validateSelector checks one caller selector of a rule: at least one
// field set (or any alone), and every value in the form its field matches.
func validateSelector(c CallerSelector) []error {
	var errs []error
	set := len(c.UIDs) + len(c.GIDs) + len(c.ContainerIDs) + len(c.PodUIDs) + len(c.WindowsAccounts) + len(c.WindowsGroups) +
		len(c.Namespaces) + len(c.PodNames) + len(c.ContainerNames) + len(c.ServiceAccounts)
	switch {
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
