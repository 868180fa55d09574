package policy

import (
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

const workloadPolicy = `
rules:
- name: azuredisk
  callers:
  - namespaces: [kube-system]
    podNames: ["csi-azuredisk-node-*"]
    containerNames: [azuredisk]
  allow:
  - methods: ["*"]
- name: smb
  callers:
  - namespaces: [csi-smb]
  allow:
  - methods: ["smb.*"]
`

// Rules select callers by namespace, pod name pattern and container name,
// every given field must match, and a caller whose workload is unknown
// matches none of them.
func TestWorkloadSelectors(t *testing.T) {
	p := mustParse(t, workloadPolicy)
	azure := func(c *identity.Caller) {
		c.PodNamespace, c.PodName, c.ContainerName = "kube-system", "csi-azuredisk-node-x7k2p", "azuredisk"
	}
	for _, tc := range []struct {
		name   string
		caller identity.Caller
		group  string
		method string
		rule   string // "" = denied
	}{
		{"the driver", root(azure), "disk", "PartitionDisk", "azuredisk"},
		{"its sidecar", root(azure, func(c *identity.Caller) { c.ContainerName = "liveness-probe" }), "disk", "PartitionDisk", ""},
		{"another pod in its namespace", root(azure, func(c *identity.Caller) { c.PodName = "debug" }), "disk", "PartitionDisk", ""},
		{"same names in another namespace", root(azure, func(c *identity.Caller) { c.PodNamespace = "default" }), "disk", "PartitionDisk", ""},
		{"the pattern is not a prefix match", root(azure, func(c *identity.Caller) { c.PodName = "xcsi-azuredisk-node-1" }), "disk", "PartitionDisk", ""},
		{"workload unknown", root(), "disk", "PartitionDisk", ""},
		{"namespace only", root(func(c *identity.Caller) { c.PodNamespace, c.PodName, c.ContainerName = "csi-smb", "x", "y" }), "smb", "NewSmbGlobalMapping", "smb"},
		{"namespace only, other group", root(func(c *identity.Caller) { c.PodNamespace, c.PodName, c.ContainerName = "csi-smb", "x", "y" }), "disk", "PartitionDisk", ""},
		{"namespace case matters", root(func(c *identity.Caller) { c.PodNamespace = "CSI-SMB" }), "smb", "NewSmbGlobalMapping", ""},
	} {
		d := p.Decide(Call{Caller: tc.caller, Group: tc.group, Version: "v1", Method: tc.method})
		if d.Allowed != (tc.rule != "") || d.Rule != tc.rule {
			t.Errorf("%s: %+v, want rule %q", tc.name, d, tc.rule)
		}
	}
}

func TestWorkloadSelectorValidation(t *testing.T) {
	for _, tc := range []struct{ sel, want string }{
		{`namespaces: [Kube-System]`, "not a namespace"},
		{`namespaces: [""]`, "not a namespace"},
		{`podNames: ["csi-[x"]`, "podNames"},
		{`podNames: ["UPPER"]`, "podNames"},
		{`containerNames: ["a_b"]`, "not a container name"},
		{`namespaces: [kube-system], any: true`, "any cannot be combined"},
	} {
		_, err := Parse([]byte("rules:\n- name: r\n  callers:\n  - {"+tc.sel+"}\n  allow: [{methods: ['*']}]\n"), Options{Style: hostpath.POSIX})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.sel, err, tc.want)
		}
	}
}

// Workload selectors need the caller's container (from its process) and
// the runtime's answer for it.
func TestWorkloadSelectorsListed(t *testing.T) {
	p := mustParse(t, workloadPolicy)
	got := strings.Join(p.ProcessSelectors(), ",")
	for _, want := range []string{"rule azuredisk: namespaces", "rule azuredisk: podNames", "rule azuredisk: containerNames", "rule smb: namespaces"} {
		if !strings.Contains(got, want) {
			t.Errorf("ProcessSelectors() = %s, lacks %s", got, want)
		}
	}
	if w := p.WorkloadSelectors(); len(w) != 4 {
		t.Errorf("WorkloadSelectors() = %v", w)
	}
	if w := mustParse(t, example).WorkloadSelectors(); len(w) != 0 {
		t.Errorf("WorkloadSelectors() of a policy without them = %v", w)
	}
}
