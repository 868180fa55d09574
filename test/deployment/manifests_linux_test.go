package deployment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// unit is what the test takes from the shipped systemd unit.
type unit struct {
	// args is ExecStart's command line without the program.
	args []string
	// bounding is CapabilityBoundingSet=, in setpriv's spelling
	// (sys_admin, ...).
	bounding []string
}

// unitDirectivesNotReproduced are unit settings that would change how
// callers are seen (user, PID namespace, capabilities) and that this test
// does not reproduce: the test refuses to pass while the unit has them.
var unitDirectivesNotReproduced = []string{"User=", "Group=", "DynamicUser=", "PrivatePIDs=", "AmbientCapabilities=", "SupplementaryGroups="}

// shippedFile reads one of the shipped Linux deployment files
// (deploy/linux).
func shippedFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "deploy", "linux", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readUnit(t *testing.T) unit {
	t.Helper()
	b := shippedFile(t, "csi-node-proxy.service")
	var u unit
	for line := range strings.SplitSeq(string(b), "\n") {
		for _, d := range unitDirectivesNotReproduced {
			if strings.HasPrefix(line, d) {
				t.Fatalf("the unit sets %q, which this test does not reproduce: teach it to", line)
			}
		}
		if v, ok := strings.CutPrefix(line, "CapabilityBoundingSet="); ok {
			for _, c := range strings.Fields(v) {
				u.bounding = append(u.bounding, strings.ToLower(strings.TrimPrefix(c, "CAP_")))
			}
		}
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			f := strings.Fields(v)
			if len(f) < 2 || filepath.Base(f[0]) != "csi-node-proxy" {
				t.Fatalf("unexpected ExecStart= %q", v)
			}
			u.args = f[1:]
		}
	}
	if u.args == nil || u.bounding == nil {
		t.Fatal("the unit lacks ExecStart= or CapabilityBoundingSet=")
	}
	return u
}

// daemonSet is what the test takes from the shipped DaemonSet manifest.
type daemonSet struct {
	hostPID    bool
	privileged bool
	args       []string
	// policy is the policy file its ConfigMap mounts.
	policy string
}

// manifest is the part of the manifest's documents the test reads.
type manifest struct {
	Kind string            `json:"kind"`
	Data map[string]string `json:"data"`
	Spec struct {
		Template struct {
			Spec struct {
				HostPID    bool `json:"hostPID"`
				Containers []struct {
					Name            string   `json:"name"`
					Command         []string `json:"command"`
					Args            []string `json:"args"`
					SecurityContext struct {
						Privileged bool `json:"privileged"`
					} `json:"securityContext"`
				} `json:"containers"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

func readDaemonSet(t *testing.T) daemonSet {
	t.Helper()
	b := shippedFile(t, "csi-node-proxy.yaml")
	var ds daemonSet
	found := false
	for doc := range strings.SplitSeq(string(b), "\n---\n") {
		var m manifest
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		switch m.Kind {
		case "ConfigMap":
			if p, ok := m.Data["policy.yaml"]; ok {
				ds.policy = p
			}
		case "DaemonSet":
			cs := m.Spec.Template.Spec.Containers
			if len(cs) != 1 || len(cs[0].Command) != 1 || filepath.Base(cs[0].Command[0]) != "csi-node-proxy" {
				t.Fatalf("the DaemonSet's containers are not the one csi-node-proxy this test reproduces: %+v", cs)
			}
			found = true
			ds.hostPID = m.Spec.Template.Spec.HostPID
			ds.privileged = cs[0].SecurityContext.Privileged
			ds.args = cs[0].Args
		}
	}
	if !found || ds.policy == "" {
		t.Fatal("the manifest lacks the DaemonSet or its policy ConfigMap")
	}
	return ds
}

// addPreset adds a driver's preset to a shipped policy's presets line,
// as its header tells an operator to ("presets: [node-admin, azuredisk]").
func addPreset(t *testing.T, policy, name string) string {
	t.Helper()
	const line = "\npresets: [node-admin]\n"
	if strings.Count(policy, line) != 1 {
		t.Fatalf("the shipped policy has no line %q to add the preset %s to", strings.TrimSpace(line), name)
	}
	return strings.Replace(policy, line, "\npresets: [node-admin, "+name+"]\n", 1)
}
