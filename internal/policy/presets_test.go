package policy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/callgate"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// styles are the two node OSes' path styles, by name.
var styles = map[string]hostpath.Style{"linux": hostpath.POSIX, "windows": hostpath.Windows}

// wantPresets are the presets each node OS must ship: the drivers of
// issue #25, the example driver (Linux only) and node-admin.
var wantPresets = map[string]string{
	"linux":   "aws-ebs azuredisk azurefile example gcp-pd local-static-provisioner node-admin smb vsphere",
	"windows": "aws-ebs azuredisk azurefile gcp-pd local-static-provisioner node-admin smb vsphere",
}

// TestPresetsCompile loads every preset alone, under the methods the
// daemon serves, and checks the set each OS ships.
func TestPresetsCompile(t *testing.T) {
	for os, style := range styles {
		names := policy.PresetNames(style)
		if got := strings.Join(names, " "); got != wantPresets[os] {
			t.Errorf("%s presets: %s, want %s", os, got, wantPresets[os])
		}
		for _, name := range names {
			p, err := policy.Parse([]byte("presets: ["+name+"]\nrules: []\n"), policy.Options{Style: style, Methods: callgate.Methods})
			if err != nil {
				t.Errorf("%s preset %s: %v", os, name, err)
				continue
			}
			if got := strings.Join(p.Rules(), ","); got != name {
				t.Errorf("%s preset %s: rules %s, want the one rule named for it", os, name, got)
			}
		}
	}
}

// TestNodeAdminOnlyReads: the node-admin preset allows every method
// that only reads and none that changes the node (audit.Classify, the
// audit log's own classification), on both OSes.
func TestNodeAdminOnlyReads(t *testing.T) {
	for os, style := range styles {
		p, err := policy.Parse([]byte("presets: [node-admin]\n"), policy.Options{Style: style, Methods: callgate.Methods})
		if err != nil {
			t.Fatal(err)
		}
		for group, methods := range callgate.Methods {
			for _, m := range methods {
				read := audit.Classify(m) == audit.Read
				if got := p.AllowsMethod(group, m); got != read {
					t.Errorf("%s node-admin allows %s.%s: %v, want %v (reads only)", os, group, m, got, read)
				}
			}
		}
	}
}

// TestPresetFlagAndFile: presets named in Options (the daemon's
// --policy-preset) add to the file's, each once.
func TestPresetFlagAndFile(t *testing.T) {
	p, err := policy.Parse([]byte("presets: [node-admin, smb]\nrules: []\n"),
		policy.Options{Style: hostpath.POSIX, Methods: callgate.Methods, Presets: []string{"smb", "azuredisk"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Presets(), ","); got != "node-admin,smb,azuredisk" {
		t.Errorf("presets %s", got)
	}
	if _, err := policy.Parse([]byte("rules: []\n"), policy.Options{Style: hostpath.Windows, Presets: []string{"example"}}); err == nil ||
		!strings.Contains(err.Error(), "no such preset for Windows nodes") {
		t.Errorf("the Linux-only example preset on Windows: %v", err)
	}
}

// TestAuditOnlyMode: an audit-only policy lets through what its rules
// deny, marked WouldDeny with the rules' reason, and leaves what they
// allow as it was; enforce (and no mode) denies.
func TestAuditOnlyMode(t *testing.T) {
	root := identity.Caller{PID: 42, HasUnixIDs: true, UID: 0}
	other := identity.Caller{PID: 43, HasUnixIDs: true, UID: 1000}
	mutate := policy.Call{Caller: root, Group: "disk", Version: "v1", Method: "PartitionDisk"}
	read := policy.Call{Caller: root, Group: "disk", Version: "v1", Method: "ListDiskLocations"}
	for _, mode := range []string{"", "mode: enforce\n", "mode: audit-only\n"} {
		p, err := policy.Parse([]byte(mode+"presets: [node-admin]\nrules: []\n"), policy.Options{Style: hostpath.POSIX, Methods: callgate.Methods})
		if err != nil {
			t.Fatal(err)
		}
		audit := mode == "mode: audit-only\n"
		if p.AuditOnly() != audit {
			t.Errorf("%q: AuditOnly %v", mode, p.AuditOnly())
		}
		d := p.DecideContext(context.Background(), &mutate)
		if d.Allowed != audit || d.WouldDeny != audit || d.Reason != policy.NoRuleReason || d.Rule != "" {
			t.Errorf("%q: root's PartitionDisk: %+v", mode, d)
		}
		d = p.DecideContext(context.Background(), &read)
		if !d.Allowed || d.WouldDeny || d.Rule != "node-admin" {
			t.Errorf("%q: root's ListDiskLocations: %+v", mode, d)
		}
		o := read
		o.Caller = other
		d = p.DecideContext(context.Background(), &o)
		if d.Allowed != audit || d.WouldDeny != audit {
			t.Errorf("%q: uid 1000's ListDiskLocations: %+v", mode, d)
		}
	}
}

// TestEmptyRulesDenyAll: "rules: []" is a policy (the Helm chart's
// policy.rules: [] and no presets), which denies every call and allows
// no method anywhere.
func TestEmptyRulesDenyAll(t *testing.T) {
	p, err := policy.Parse([]byte("rules: []\n"), policy.Options{Style: hostpath.POSIX, Methods: callgate.Methods})
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Decide(policy.Call{Caller: identity.Caller{HasUnixIDs: true}, Group: "disk", Method: "ListDiskLocations"}); d.Allowed {
		t.Errorf("allowed: %+v", d)
	}
	if p.AllowsMethod("disk", "ListDiskLocations") {
		t.Error("AllowsMethod without rules")
	}
}

// TestPresetPathRootsFollowKubelet: a preset confines its driver below
// the node's kubelet directory (Options.KubeletPath), kubelet's default
// when none is given, on both OSes.
func TestPresetPathRootsFollowKubelet(t *testing.T) {
	sa := identity.Caller{PodNamespace: "kube-system", PodName: "csi-smb-node-x", ContainerName: "smb", ServiceAccount: "csi-smb-node-sa"}
	for _, tc := range []struct {
		style       hostpath.Style
		kubelet     string
		inside, out string
	}{
		{hostpath.POSIX, "", "/var/lib/kubelet/pods/p/volumes/v", "/var/snap/microk8s/common/var/lib/kubelet/pods/p"},
		{hostpath.POSIX, "/var/snap/microk8s/common/var/lib/kubelet/", "/var/snap/microk8s/common/var/lib/kubelet/pods/p", "/var/lib/kubelet/pods/p"},
		{hostpath.Windows, "", `C:\var\lib\kubelet\pods\p`, `D:\kubelet\pods\p`},
		{hostpath.Windows, `D:\it's\kubelet`, `D:\it's\kubelet\pods\p`, `C:\var\lib\kubelet\pods\p`},
	} {
		p, err := policy.Parse([]byte("presets: [smb]\n"), policy.Options{Style: tc.style, Methods: callgate.Methods, KubeletPath: tc.kubelet})
		if err != nil {
			t.Fatalf("%q: %v", tc.kubelet, err)
		}
		caller := sa
		if tc.style == hostpath.Windows {
			caller.PodName = "csi-smb-node-win-x"
		}
		c := policy.Call{Caller: caller, Group: "filesystem", Version: "v1", Method: "Mkdir", Inspected: true}
		c.Args = []policy.Arg{{Field: "path", Kind: policy.ArgPath, Value: tc.inside}}
		if d := p.Decide(c); !d.Allowed || d.Rule != "smb" {
			t.Errorf("%q: Mkdir %s: %+v", tc.kubelet, tc.inside, d)
		}
		c.Args[0].Value = tc.out
		if d := p.Decide(c); d.Allowed {
			t.Errorf("%q: Mkdir %s allowed", tc.kubelet, tc.out)
		}
	}
	if _, err := policy.Parse([]byte("presets: [smb]\n"), policy.Options{Style: hostpath.POSIX, KubeletPath: "/"}); err == nil {
		t.Error("a preset below / was accepted")
	}
}

// TestNodeAdminOnlyNodeProcesses: node-admin admits root's processes on
// the node and not a root pod (uid 0 in a container, pod or runtime
// cgroup), nor a caller the daemon could not fully identify (no PID: no
// host PID namespace; Incomplete).
func TestNodeAdminOnlyNodeProcesses(t *testing.T) {
	p, err := policy.Parse([]byte("presets: [node-admin]\n"), policy.Options{Style: hostpath.POSIX, Methods: callgate.Methods})
	if err != nil {
		t.Fatal(err)
	}
	node := identity.Caller{PID: 42, HasUnixIDs: true}
	for name, tc := range map[string]struct {
		edit func(*identity.Caller)
		want bool
	}{
		"root's shell":      {func(*identity.Caller) {}, true},
		"root in a pod":     {func(c *identity.Caller) { c.PodUID = "6f1c2d3e-0000-4000-8000-000000000001" }, false},
		"root in container": {func(c *identity.Caller) { c.ContainerID = strings.Repeat("ab", 32) }, false},
		"runtime's cgroup":  {func(c *identity.Caller) { c.Runtime = "containerd" }, false},
		"pid unknown":       {func(c *identity.Caller) { c.PID = 0 }, false},
		"incomplete":        {func(c *identity.Caller) { c.Incomplete = "cgroup unreadable" }, false},
		"not root":          {func(c *identity.Caller) { c.UID = 1000 }, false},
	} {
		c := node
		tc.edit(&c)
		if d := p.Decide(policy.Call{Caller: c, Group: "disk", Version: "v1", Method: "ListDiskLocations"}); d.Allowed != tc.want {
			t.Errorf("%s: %+v, want allowed %v", name, d, tc.want)
		}
	}
	if _, err := policy.Parse([]byte("rules:\n- {name: r, callers: [{nodeProcess: true, podNames: [x]}], allow: [{methods: ['*']}]}\n"),
		policy.Options{Style: hostpath.POSIX}); err == nil || !strings.Contains(err.Error(), "nodeProcess") {
		t.Errorf("nodeProcess with podNames: %v", err)
	}
}
