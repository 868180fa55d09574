package manifests

// The checks that span objects for the admission policy: bindings that
// refer to what the manifests hold, selectors that do not overlap, and
// the allowlist admitting every pod that mounts the endpoints.

import (
	"fmt"
	"path"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// checkBinding checks that a ValidatingAdmissionPolicyBinding refers to a
// policy and a parameter object that are among the manifests.
func (s *Set) checkBinding(p problems, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	var policy *admissionregistrationv1.ValidatingAdmissionPolicy
	for _, d := range s.Docs {
		if vap, ok := d.Object.(*admissionregistrationv1.ValidatingAdmissionPolicy); ok && vap.Name == b.Spec.PolicyName {
			policy = vap
		}
	}
	if policy == nil {
		p.add("spec.policyName %q: no such ValidatingAdmissionPolicy among the manifests", b.Spec.PolicyName)
		return
	}
	if len(b.Spec.ValidationActions) == 0 {
		p.add("spec.validationActions is empty: the API server requires at least one")
	}
	if pk, ref := policy.Spec.ParamKind, b.Spec.ParamRef; pk != nil {
		if ref == nil {
			p.add("policy %s has paramKind %s but the binding has no paramRef", policy.Name, pk.Kind)
		} else if ref.Name != "" && !s.has(pk.Kind, ref.Namespace, ref.Name) {
			p.add("paramRef %s/%s: no %s among the manifests", ref.Namespace, ref.Name, pk.Kind)
		}
	}
}

// checkSelectorOverlap refuses two workloads in one namespace whose
// selectors select each other's pods: their controllers would fight.
func (s *Set) checkSelectorOverlap() []error {
	var errs []error
	type workload struct {
		d   *Document
		ns  string
		sel labels.Selector
		tl  labels.Set
	}
	var ws []workload
	for _, d := range s.Docs {
		if d.Object == nil {
			continue
		}
		tmpl, sel := podTemplate(d.Object)
		if tmpl == nil || sel == nil {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil || selector.Empty() {
			continue // reported by checkWorkload
		}
		ws = append(ws, workload{d, d.Object.(metav1.Object).GetNamespace(), selector, labels.Set(tmpl.Labels)})
	}
	for i, a := range ws {
		for _, b := range ws[i+1:] {
			if a.ns == b.ns && a.d.String() != b.d.String() && (a.sel.Matches(b.tl) || b.sel.Matches(a.tl)) && !sameObject(a.d, b.d) {
				errs = append(errs, fmt.Errorf("%s and %s: their selectors select each other's pods", a.d, b.d))
			}
		}
	}
	return errs
}

// sameObject reports whether two documents are the same object (kind,
// namespace, name), as the same manifest in two files would be.
func sameObject(a, b *Document) bool {
	ma, mb := a.Object.(metav1.Object), b.Object.(metav1.Object)
	return a.GVK == b.GVK && ma.GetNamespace() == mb.GetNamespace() && ma.GetName() == mb.GetName()
}

// checkAdmission checks that the admission policy's ConfigMap lets every
// pod here that mounts the proxy's endpoints do so (deploy/admission).
func (s *Set) checkAdmission() []error {
	ns, name, _ := strings.Cut(AdmissionConfigMap, "/")
	var cm *corev1.ConfigMap
	for _, d := range s.Docs {
		if c, ok := d.Object.(*corev1.ConfigMap); ok && c.Namespace == ns && c.Name == name {
			cm = c
		}
	}
	if cm == nil {
		return nil // not part of this set
	}
	allowed := map[string]bool{}
	for _, a := range strings.Split(cm.Data["allowedServiceAccounts"], ",") {
		if a = strings.TrimSpace(a); a != "" {
			allowed[a] = true
		}
	}
	var errs []error
	needed := map[string]bool{}
	for _, d := range s.Docs {
		if d.Object == nil {
			continue
		}
		tmpl, _ := podTemplate(d.Object)
		if tmpl == nil || !mountsEndpoints(&tmpl.Spec) {
			continue
		}
		sa := tmpl.Spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		id := d.Object.(metav1.Object).GetNamespace() + "/" + sa
		needed[id] = true
		switch {
		case allowed[id]:
		case s.AdmissionGaps[id] != "":
			s.Notes = append(s.Notes, fmt.Sprintf("%s mounts the proxy's endpoints as %s, which %s does not list yet: %s", d, id, AdmissionConfigMap, s.AdmissionGaps[id]))
		default:
			errs = append(errs, fmt.Errorf("%s mounts the proxy's endpoints as ServiceAccount %s, which the admission ConfigMap %s does not allow: the pods would be refused", d, id, AdmissionConfigMap))
		}
	}
	for id := range s.AdmissionGaps {
		if allowed[id] || !needed[id] {
			errs = append(errs, fmt.Errorf("AdmissionGaps lists %s, but it is no gap any more: remove it", id))
		}
	}
	return errs
}

// mountsEndpoints reports whether a pod mounts a csi-node-proxy pipe or
// the socket directory (or a directory above it, which exposes it too).
func mountsEndpoints(spec *corev1.PodSpec) bool {
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if v.HostPath == nil {
			continue
		}
		if isPipe(v) {
			return true
		}
		p := path.Clean(v.HostPath.Path)
		for _, dir := range []string{SocketDir, "/var" + SocketDir} {
			if p == dir || strings.HasPrefix(dir, p+"/") || p == "/" || strings.HasPrefix(p, dir+"/") {
				return true
			}
		}
	}
	return false
}
