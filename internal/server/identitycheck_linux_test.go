//go:build linux

package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity/cri"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// fakeProc makes a procfs with only self/ns/pid and self/ns/cgroup links
// to the given namespaces.
func fakeProc(t *testing.T, pidNS, cgroupNS string) string {
	t.Helper()
	root := t.TempDir()
	ns := filepath.Join(root, "self", "ns")
	if err := os.MkdirAll(ns, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"pid": pidNS, "cgroup": cgroupNS} {
		if err := os.Symlink(target, filepath.Join(ns, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestIdentityWarnings(t *testing.T) {
	parse := func(y string) *policy.Policy {
		p, err := policy.Parse([]byte(y), policy.Options{Style: hostpath.POSIX})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	byGroup := parse("rules:\n- {name: drivers, callers: [{gids: [2000]}], allow: [{methods: ['*']}]}\n")
	byUID := parse("rules:\n- {name: root, callers: [{uids: [0]}], allow: [{methods: ['*']}]}\n")
	foreign := identity.Options{ProcRoot: fakeProc(t, "pid:[4026532000]", "cgroup:[4026531835]")}
	host := identity.Options{ProcRoot: fakeProc(t, "pid:[4026531836]", "cgroup:[4026531835]")}

	w := IdentityWarnings(byGroup, foreign)
	if len(w) != 1 || !strings.Contains(w[0], "hostPID") || !strings.Contains(w[0], "rule drivers: gids") {
		t.Errorf("gids rule, foreign PID namespace: %q", w)
	}
	if w := IdentityWarnings(byGroup, host); w != nil {
		t.Errorf("gids rule, host PID namespace: %q", w)
	}
	if w := IdentityWarnings(byUID, foreign); w != nil {
		t.Errorf("uids rule needs no process: %q", w)
	}
	if w := IdentityWarnings(nil, foreign); w != nil {
		t.Errorf("no policy: %q", w)
	}
}

// A policy naming namespaces, pod names or container names warns when no
// container runtime is asked, since those rules could never match.
func TestIdentityWarningsWorkload(t *testing.T) {
	p, err := policy.Parse([]byte("rules:\n- {name: azuredisk, callers: [{namespaces: [kube-system]}], allow: [{methods: ['*']}]}\n"), policy.Options{Style: hostpath.POSIX})
	if err != nil {
		t.Fatal(err)
	}
	host := identity.Options{ProcRoot: fakeProc(t, "pid:[4026531836]", "cgroup:[4026531835]")}
	w := IdentityWarnings(p, host)
	if len(w) != 1 || !strings.Contains(w[0], "container runtime") || !strings.Contains(w[0], "rule azuredisk: namespaces") {
		t.Errorf("no runtime configured: %q", w)
	}
	r, err := cri.New(cri.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	host.Workloads = r
	if w := IdentityWarnings(p, host); w != nil {
		t.Errorf("runtime configured, host namespaces: %q", w)
	}
}

// A policy naming serviceAccounts warns when the runtime is asked but no
// token will be read (no kubelet directory), and not once one will.
func TestIdentityWarningsServiceAccounts(t *testing.T) {
	p, err := policy.Parse([]byte("rules:\n- {name: azuredisk, callers: [{serviceAccounts: [kube-system/csi-azuredisk-node-sa]}], allow: [{methods: ['*']}]}\n"), policy.Options{Style: hostpath.POSIX})
	if err != nil {
		t.Fatal(err)
	}
	host := identity.Options{ProcRoot: fakeProc(t, "pid:[4026531836]", "cgroup:[4026531835]")}
	if w := IdentityWarnings(p, host); len(w) != 1 || !strings.Contains(w[0], "ServiceAccounts") || !strings.Contains(w[0], "rule azuredisk: serviceAccounts") {
		t.Errorf("no runtime configured: %q", w)
	}
	blind, err := cri.New(cri.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer blind.Close()
	host.Workloads = blind
	if w := IdentityWarnings(p, host); len(w) != 1 || !strings.Contains(w[0], "no kubelet directory") || !strings.Contains(w[0], "rule azuredisk: serviceAccounts") {
		t.Errorf("runtime without a kubelet directory: %q", w)
	}
	seeing, err := cri.New(cri.Config{KubeletPath: "/var/lib/kubelet"})
	if err != nil {
		t.Fatal(err)
	}
	defer seeing.Close()
	host.Workloads = seeing
	if w := IdentityWarnings(p, host); w != nil {
		t.Errorf("runtime and kubelet directory configured: %q", w)
	}
}
