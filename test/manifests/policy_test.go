package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
)

// shippedPolicy is a policy file shipped for one node OS, and the example
// driver each of its commented rules is for.
type shippedPolicy struct {
	os, file, kubelet string
	style             hostpath.Style
	// drivers: rule name → the driver's node plugin (namespace, pod,
	// container), its plugin directory's name, and its ServiceAccount's
	// name, as the driver's own manifests and chart deploy it (sources in
	// docs/security.md, "The shipped driver rules").
	drivers map[string][5]string
}

var shippedPolicies = []shippedPolicy{
	{os: "linux", file: "deploy/linux/policy.yaml", kubelet: "/var/lib/kubelet", style: hostpath.POSIX, drivers: map[string][5]string{
		"azuredisk": {"kube-system", "csi-azuredisk-node-7x2kq", "azuredisk", "disk.csi.azure.com", "csi-azuredisk-node-sa"},
		"aws-ebs":   {"kube-system", "ebs-csi-node-abcde", "ebs-plugin", "ebs.csi.aws.com", "ebs-csi-node-sa"},
		"gcp-pd":    {"gce-pd-csi-driver", "csi-gce-pd-node-x1y2z", "gce-pd-driver", "pd.csi.storage.gke.io", "csi-gce-pd-node-sa"},
		"vsphere":   {"vmware-system-csi", "vsphere-csi-node-q8w7e", "vsphere-csi-node", "csi.vsphere.vmware.com", "vsphere-csi-node"},
		"smb":       {"kube-system", "csi-smb-node-9zzk4", "smb", "smb.csi.k8s.io", "csi-smb-node-sa"},
		"azurefile": {"kube-system", "csi-azurefile-node-4kq2x", "azurefile", "file.csi.azure.com", "csi-azurefile-node-sa"},
		"example":   {"kube-system", "localdisk-csi-7tq9m", "localdisk-csi", "localdisk.example.csi-node-proxy.io", "csi-node-proxy-example"},
	}},
	{os: "windows", file: "deploy/windows/policy.yaml", kubelet: `C:\var\lib\kubelet`, style: hostpath.Windows, drivers: map[string][5]string{
		"azuredisk": {"kube-system", "csi-azuredisk-node-win-7x2kq", "azuredisk", "disk.csi.azure.com", "csi-azuredisk-node-sa"},
		"aws-ebs":   {"kube-system", "ebs-csi-node-windows-abcde", "ebs-plugin", "ebs.csi.aws.com", "ebs-csi-node-sa"},
		// gcp-pd's Windows node plugin has a ServiceAccount of its own.
		"gcp-pd":    {"gce-pd-csi-driver", "csi-gce-pd-node-win-x1y2z", "gce-pd-driver", "pd.csi.storage.gke.io", "csi-gce-pd-node-sa-win"},
		"vsphere":   {"vmware-system-csi", "vsphere-csi-node-windows-q8w7e", "vsphere-csi-node", "csi.vsphere.vmware.com", "vsphere-csi-node"},
		"smb":       {"kube-system", "csi-smb-node-win-9zzk4", "smb", "smb.csi.k8s.io", "csi-smb-node-sa"},
		"azurefile": {"kube-system", "csi-azurefile-node-win-4kq2x", "azurefile", "file.csi.azure.com", "csi-azurefile-node-sa"},
	}},
}

// eachShippedPolicy runs check on every shipped policy file, in a subtest
// named for its OS, with the file's text and the methods the daemon
// serves (which a policy's rules are checked against).
func eachShippedPolicy(t *testing.T, check func(t *testing.T, sp shippedPolicy, data []byte, methods map[string][]string)) {
	t.Helper()
	methods, err := server.GroupMethods(adapter.All())
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range shippedPolicies {
		t.Run(sp.os, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root, sp.file))
			if err != nil {
				t.Fatal(err)
			}
			check(t, sp, data, methods)
		})
	}
}

// withDriverPresets adds the presets of every driver of sp to the shipped
// policy's presets line, as an operator who runs them all would (the
// policy's header says how).
func withDriverPresets(t *testing.T, sp shippedPolicy, data []byte) []byte {
	t.Helper()
	const line = "\npresets: [node-admin]\n"
	if strings.Count(string(data), line) != 1 {
		t.Fatalf("%s has no line %q to add presets to", sp.file, strings.TrimSpace(line))
	}
	names := []string{"node-admin"}
	for name := range sp.drivers {
		names = append(names, name)
	}
	slices.Sort(names)
	return []byte(strings.Replace(string(data), line, "\npresets: ["+strings.Join(names, ", ")+"]\n", 1))
}

// pathCall is filesystem PathExists under dir by a caller in the pod,
// whose ServiceAccount (named in ns; "" for none known) is sa.
func pathCall(ns, pod, container, sa, dir string) policy.Call {
	return policy.Call{
		Caller:  identity.Caller{PID: 4242, HasUnixIDs: true, PodNamespace: ns, PodName: pod, ContainerName: container, ServiceAccount: sa, PodUID: "6f1c2d3e-0000-4000-8000-000000000001", ContainerID: strings.Repeat("ab", 32)},
		Group:   "filesystem",
		Version: "v1",
		Method:  "PathExists",
		// The arguments the call gate reads from the model request.
		Inspected: true,
		Args:      []policy.Arg{{Field: "path", Kind: policy.ArgPath, Value: dir}},
	}
}

// TestShippedPolicies parses the shipped policy files with the daemon's
// own parser, as the daemon would load them: as shipped they admit no
// driver (the daemon's warning says so), nor a root pod or one in
// kube-system; with the drivers' presets added each driver's node plugin
// may act in its own plugin directory and a foreign pod still may not.
func TestShippedPolicies(t *testing.T) {
	eachShippedPolicy(t, func(t *testing.T, sp shippedPolicy, data []byte, methods map[string][]string) {
		o := policy.Options{Style: sp.style, Methods: methods}
		p, err := policy.Parse(data, o)
		if err != nil {
			t.Fatalf("%s: %v", sp.file, err)
		}
		sep := string(rune(sp.kubelet[len(sp.kubelet)-len("kubelet")-1]))
		pods := sp.kubelet + sep + "pods" + sep + "x"
		for name, d := range sp.drivers {
			for _, c := range []policy.Call{
				pathCall(d[0], d[1], d[2], d[4], sp.kubelet+sep+"plugins"+sep+d[3]),
				pathCall(d[0], d[1], d[2], d[4], pods),
			} {
				list := c
				list.Method = "ListDiskIDs"
				list.Group = "disk"
				list.Args = nil // ListDiskIDs names no path
				for _, c := range []policy.Call{c, list} {
					if dec := p.Decide(c); dec.Allowed {
						t.Errorf("%s as shipped allows %s (the %s example's caller) %s.%s by rule %s; it must admit no one", sp.file, c.Caller, name, c.Group, c.Method, dec.Rule)
					}
				}
			}
		}

		if w := server.PolicyWarnings(p); len(w) != 1 || !strings.Contains(w[0], server.PolicyAdmitsNobodyCheck+" failed") {
			t.Errorf("%s as shipped: the daemon's warnings %q, want the one that it admits no driver", sp.file, w)
		}
		examples, err := policy.Parse(withDriverPresets(t, sp, data), o)
		if err != nil {
			t.Fatalf("%s with the drivers' presets: %v", sp.file, err)
		}
		names := examples.Rules()
		slices.Sort(names)
		want := []string{"node-admin"}
		for name := range sp.drivers {
			want = append(want, name)
		}
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Fatalf("%s with the drivers' presets has rules %v, want %v", sp.file, names, want)
		}
		if w := server.PolicyWarnings(examples); len(w) != 0 {
			t.Errorf("%s with the drivers' presets: warnings %q", sp.file, w)
		}
		// Every driver's rule names its ServiceAccount: a pod
		// name is whatever the pod's creator writes.
		saRules := examples.ServiceAccountSelectors()
		for name, d := range sp.drivers {
			if !slices.Contains(saRules, "rule "+name+": serviceAccounts") {
				t.Errorf("%s example %s names no ServiceAccount (serviceAccounts: [%s/%s]); rules naming one: %v", sp.file, name, d[0], d[4], saRules)
			}
			own := sp.kubelet + sep + "plugins" + sep + d[3] + sep + "mount"
			if dec := examples.Decide(pathCall(d[0], d[1], d[2], d[4], own)); !dec.Allowed || dec.Rule != name {
				t.Errorf("%s example %s: its node plugin, with ServiceAccount %s/%s, may not check a path in its own plugin directory: %+v", sp.file, name, d[0], d[4], dec)
			}
			if dec := examples.Decide(pathCall(d[0], d[1], d[2], d[4], sp.kubelet+sep+"plugins"+sep+"other.csi.example.com")); dec.Allowed {
				t.Errorf("%s example %s allows a path in another driver's plugin directory", sp.file, name)
			}
			if dec := examples.Decide(pathCall(d[0], "intruder-0", d[2], d[4], own)); dec.Allowed {
				t.Errorf("%s example %s allows a foreign pod in %s with the driver's container name and ServiceAccount", sp.file, name, d[0])
			}
			if dec := examples.Decide(pathCall(d[0], d[1], "csi-node-driver-registrar", d[4], own)); dec.Allowed {
				t.Errorf("%s example %s allows the driver's sidecar", sp.file, name)
			}
			// The driver's pod name and container, run as another
			// ServiceAccount, as none known (no token mounted), and
			// as one of the same name in another namespace.
			for _, c := range []struct{ ns, sa string }{{d[0], "default"}, {d[0], ""}, {"tenant-a", d[4]}} {
				if dec := examples.Decide(pathCall(c.ns, d[1], d[2], c.sa, own)); dec.Allowed {
					t.Errorf("%s example %s allows pod %s/%s container %s with ServiceAccount %q", sp.file, name, c.ns, d[1], d[2], c.sa)
				}
			}
		}
	})
}

// TestShippedPoliciesAgree: the policy is shipped three times per OS (the
// file for the systemd unit or a hand install, the ConfigMap of the plain
// manifest and kustomize base, and the chart's default rules); they must
// be the same policy.
func TestShippedPoliciesAgree(t *testing.T) {
	for _, sp := range shippedPolicies {
		t.Run(sp.os, func(t *testing.T) {
			file, err := os.ReadFile(filepath.Join(root, sp.file))
			if err != nil {
				t.Fatal(err)
			}
			var want any
			if err := yaml.Unmarshal(file, &want); err != nil {
				t.Fatal(err)
			}
			base := filepath.Join(root, "deploy", sp.os)
			k, err := Kustomize(base)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := renderChart(t, "csi-node-proxy", onlyOS(sp.os))
			for what, rendered := range map[string][]byte{"kustomize " + base: k, "the chart's defaults": out} {
				docs, errs := schemaFor(t).LoadBytes(what, rendered)
				for _, e := range errs {
					t.Fatal(e)
				}
				var cm *corev1.ConfigMap
				for _, d := range docs {
					if o, ok := d.Object.(*corev1.ConfigMap); ok && strings.HasSuffix(o.Name, "-policy") {
						cm = o
					}
				}
				if cm == nil {
					t.Fatalf("%s: no policy ConfigMap", what)
				}
				if what != "the chart's defaults" && cm.Data["policy.yaml"] != string(file) {
					t.Errorf("%s: the ConfigMap's policy.yaml differs from %s", what, sp.file)
				}
				var got any
				if err := yaml.Unmarshal([]byte(cm.Data["policy.yaml"]), &got); err != nil {
					t.Fatal(err)
				}
				if !equality.Semantic.DeepEqual(got, want) {
					t.Errorf("%s: the policy's rules %v differ from %s's %v", what, got, sp.file, want)
				}
			}
		})
	}
}
