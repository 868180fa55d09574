package policy

import (
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

const serviceAccountPolicy = `
rules:
- name: azuredisk
  callers:
  - serviceAccounts: [kube-system/csi-azuredisk-node-sa, kube-system/csi.azuredisk.v2]
    containerNames: [azuredisk]
  allow:
  - methods: ["*"]
`

// A rule naming serviceAccounts matches only a caller whose pod's
// ServiceAccount is known and listed, in its own namespace; with
// another selector both must match.
func TestServiceAccountSelector(t *testing.T) {
	p := mustParse(t, serviceAccountPolicy)
	driver := func(c *identity.Caller) {
		c.PodNamespace, c.PodName, c.ContainerName, c.ServiceAccount = "kube-system", "csi-azuredisk-node-x7k2p", "azuredisk", "csi-azuredisk-node-sa"
	}
	for _, tc := range []struct {
		name   string
		caller identity.Caller
		rule   string // "" = denied
	}{
		{"the driver", root(driver), "azuredisk"},
		{"a dotted name", root(driver, func(c *identity.Caller) { c.ServiceAccount = "csi.azuredisk.v2" }), "azuredisk"},
		{"ServiceAccount unknown", root(driver, func(c *identity.Caller) { c.ServiceAccount = "" }), ""},
		{"another ServiceAccount", root(driver, func(c *identity.Caller) { c.ServiceAccount = "default" }), ""},
		{"same name in another namespace", root(driver, func(c *identity.Caller) { c.PodNamespace = "default" }), ""},
		{"namespace unknown", root(driver, func(c *identity.Caller) { c.PodNamespace = "" }), ""},
		{"its sidecar", root(driver, func(c *identity.Caller) { c.ContainerName = "liveness-probe" }), ""},
		{"case matters", root(driver, func(c *identity.Caller) { c.ServiceAccount = "CSI-azuredisk-node-sa" }), ""},
		{"not a prefix match", root(driver, func(c *identity.Caller) { c.ServiceAccount = "csi-azuredisk-node-sa-2" }), ""},
		{"workload unknown", root(), ""},
	} {
		d := p.Decide(Call{Caller: tc.caller, Group: "disk", Version: "v1", Method: "PartitionDisk"})
		if d.Allowed != (tc.rule != "") || d.Rule != tc.rule {
			t.Errorf("%s: %+v, want rule %q", tc.name, d, tc.rule)
		}
	}
	if w := strings.Join(p.WorkloadSelectors(), ","); !strings.Contains(w, "rule azuredisk: serviceAccounts") {
		t.Errorf("WorkloadSelectors() = %s, lacks serviceAccounts", w)
	}
}

// Entries are namespace/name, both lower-case RFC 1123, nothing else.
func TestServiceAccountSelectorValidation(t *testing.T) {
	for _, bad := range []string{
		`""`, `kube-system`, `/csi-sa`, `kube-system/`, `kube-system/csi-sa/x`, `Kube-System/csi-sa`,
		`kube-system/CSI-SA`, `kube-system/csi_sa`, `kube-system/*`, `"*/csi-sa"`, `kube-system/csi-sa-`,
		`kube-system/.csi`, `kube-system/csi..sa`, `"kube-system/csi-sa "`, `" kube-system/csi-sa"`,
		`"kube-system:csi-sa"`, `system:serviceaccount:kube-system:csi-sa`,
		`kube-system/` + strings.Repeat("a", 254),
	} {
		_, err := Parse([]byte("rules:\n- name: r\n  callers:\n  - serviceAccounts: ["+bad+"]\n  allow: [{methods: ['*']}]\n"), Options{Style: hostpath.POSIX})
		if err == nil || !strings.Contains(err.Error(), "serviceAccounts") {
			t.Errorf("serviceAccounts: [%s]: %v, want refused", bad, err)
		}
	}
	for _, good := range []string{`kube-system/default`, `csi/csi.driver.example.com`, `a/b`, `kube-system/` + strings.Repeat("a", 253)} {
		if _, err := Parse([]byte("rules:\n- name: r\n  callers:\n  - serviceAccounts: ["+good+"]\n  allow: [{methods: ['*']}]\n"), Options{Style: hostpath.POSIX}); err != nil {
			t.Errorf("serviceAccounts: [%s]: %v", good, err)
		}
	}
	// The key is case-sensitive and the selector not empty-able.
	for _, sel := range []string{`serviceaccounts: [a/b]`, `serviceAccounts: []`, `serviceAccount: [a/b]`} {
		if _, err := Parse([]byte("rules:\n- name: r\n  callers:\n  - {"+sel+"}\n  allow: [{methods: ['*']}]\n"), Options{Style: hostpath.POSIX}); err == nil {
			t.Errorf("%s: accepted", sel)
		}
	}
}
