package manifests

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// checkRendered runs a rendered YAML stream through the schema and
// semantic checks as one set (it is applied as one) and returns the set.
func checkRendered(t *testing.T, name string, data []byte, configure func(*Set)) *Set {
	t.Helper()
	docs, errs := schemaFor(t).LoadBytes(name, data)
	s := &Set{Docs: docs, Daemon: daemonFor(t)}
	if configure != nil {
		configure(s)
	}
	errs = append(errs, s.Check()...)
	for _, e := range errs {
		t.Error(e)
	}
	if t.Failed() {
		t.Logf("rendered:\n%s", data)
	}
	return s
}

// kinds counts a set's documents by kind.
func kinds(s *Set) map[string]int {
	k := map[string]int{}
	for _, d := range s.Docs {
		k[d.GVK.Kind]++
	}
	return k
}

// daemonSets returns a set's DaemonSets by name.
func daemonSets(s *Set) map[string]*appsv1.DaemonSet {
	m := map[string]*appsv1.DaemonSet{}
	for _, d := range s.Docs {
		if ds, ok := d.Object.(*appsv1.DaemonSet); ok {
			m[ds.Name] = ds
		}
	}
	return m
}

// proxyContainer returns a DaemonSet's csi-node-proxy container.
func proxyContainer(t *testing.T, ds *appsv1.DaemonSet) *corev1.Container {
	t.Helper()
	for i := range ds.Spec.Template.Spec.Containers {
		if c := &ds.Spec.Template.Spec.Containers[i]; isDaemon(c) {
			return c
		}
	}
	t.Fatalf("DaemonSet %s runs no csi-node-proxy container", ds.Name)
	return nil
}

// envValue returns a container's literal env value.
func envValue(c *corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// kustomizeWant is what each kustomization under deploy/ must render: the
// kinds with their counts, and the metrics address of each DaemonSet. A new
// kustomization fails the test until it is listed here.
var kustomizeWant = map[string]struct {
	kinds   map[string]int
	metrics map[string]string
}{
	"deploy/linux": {
		kinds:   map[string]int{"ServiceAccount": 1, "DaemonSet": 1, "ConfigMap": 1},
		metrics: map[string]string{"csi-node-proxy-linux": "127.0.0.1:29690"},
	},
	"deploy/windows": {
		kinds:   map[string]int{"ServiceAccount": 1, "DaemonSet": 1, "ConfigMap": 1},
		metrics: map[string]string{"csi-node-proxy-windows": "127.0.0.1:29690"},
	},
	"deploy/admission": {
		kinds: map[string]int{"ValidatingAdmissionPolicy": 1, "ValidatingAdmissionPolicyBinding": 1, "ConfigMap": 1},
	},
	"deploy/overlays/linux-metrics": {
		kinds:   map[string]int{"ServiceAccount": 1, "DaemonSet": 1, "PodMonitor": 1, "ConfigMap": 1},
		metrics: map[string]string{"csi-node-proxy-linux": ":29690"},
	},
	"deploy/overlays/windows-metrics": {
		kinds:   map[string]int{"ServiceAccount": 1, "DaemonSet": 1, "PodMonitor": 1, "ConfigMap": 1},
		metrics: map[string]string{"csi-node-proxy-windows": ":29690"},
	},
	"deploy/overlays/linux-admission": {
		kinds:   map[string]int{"ServiceAccount": 1, "DaemonSet": 1, "ValidatingAdmissionPolicy": 1, "ValidatingAdmissionPolicyBinding": 1, "ConfigMap": 2},
		metrics: map[string]string{"csi-node-proxy-linux": "127.0.0.1:29690"},
	},
	// No CRD and no API newer than Kubernetes 1.26 (issue 25).
	"deploy/overlays/cluster": {
		kinds:   map[string]int{"ServiceAccount": 2, "DaemonSet": 2, "ConfigMap": 2},
		metrics: map[string]string{"csi-node-proxy-linux": "127.0.0.1:29690", "csi-node-proxy-windows": "127.0.0.1:29690"},
	},
	"deploy/overlays/cluster-admission": {
		kinds:   map[string]int{"ServiceAccount": 2, "DaemonSet": 2, "ValidatingAdmissionPolicy": 1, "ValidatingAdmissionPolicyBinding": 1, "ConfigMap": 3},
		metrics: map[string]string{"csi-node-proxy-linux": "127.0.0.1:29690", "csi-node-proxy-windows": "127.0.0.1:29690"},
	},
}

// TestKustomize builds every kustomization under deploy/ with kustomize's
// library, as kubectl apply -k would, and puts what it renders through the
// schema and semantic checks.
func TestKustomize(t *testing.T) {
	dirs, err := Kustomizations(root, "deploy")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, dir := range dirs {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		rel = filepath.ToSlash(rel)
		found = append(found, rel)
		t.Run(rel, func(t *testing.T) {
			want, ok := kustomizeWant[rel]
			if !ok {
				t.Fatalf("no expectations for %s in kustomizeWant", rel)
			}
			out, err := Kustomize(dir)
			if err != nil {
				t.Fatal(err)
			}
			s := checkRendered(t, "kustomize build "+rel, out, nil)
			if got := kinds(s); fmt.Sprint(got) != fmt.Sprint(want.kinds) {
				t.Errorf("rendered %v, want %v", got, want.kinds)
			}
			dss := daemonSets(s)
			for name, addr := range want.metrics {
				ds := dss[name]
				if ds == nil {
					t.Errorf("no DaemonSet %s", name)
					continue
				}
				if got := envValue(proxyContainer(t, ds), "METRICS_ADDRESS"); got != addr {
					t.Errorf("%s: METRICS_ADDRESS %q, want %q", name, got, addr)
				}
			}
			t.Logf("%s: %v", rel, kinds(s))
		})
	}
	for rel := range kustomizeWant {
		if !slices.Contains(found, rel) {
			t.Errorf("%s is not a kustomization any more", rel)
		}
	}
}

// TestClusterOverlayFitsOldestSupported: the headline kubectl apply -k
// deploy/overlays/cluster must apply to every supported Kubernetes
// (1.26+) without the Prometheus Operator: no custom resource, and no
// kind a 1.26 API server does not serve (ValidatingAdmissionPolicy v1 is
// served from 1.30; cluster-admission adds it for those clusters).
func TestClusterOverlayFitsOldestSupported(t *testing.T) {
	out, err := Kustomize(filepath.Join(root, "deploy", "overlays", "cluster"))
	if err != nil {
		t.Fatal(err)
	}
	s := checkRendered(t, "deploy/overlays/cluster", out, nil)
	for _, d := range s.Docs {
		switch {
		case d.GVK.Group == "monitoring.coreos.com":
			t.Errorf("%s: a Prometheus Operator custom resource; the overlay must need no CRD", d)
		case d.GVK.Group == "admissionregistration.k8s.io" && strings.HasPrefix(d.GVK.Kind, "ValidatingAdmissionPolicy"):
			t.Errorf("%s: served from Kubernetes 1.30 only; the overlay must fit 1.26", d)
		}
	}
}
