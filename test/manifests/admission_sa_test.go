package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestAdmissionAllowsTheShippedDrivers: the admission policy
// (deploy/admission) refuses pods that mount the proxy's endpoints unless
// their ServiceAccount is listed, and the shipped node policies admit
// drivers by ServiceAccount. Both lists must name the same drivers, or an
// operator who enables a shipped rule finds the driver's pod refused at
// admission.
func TestAdmissionAllowsTheShippedDrivers(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "deploy/admission/csi-node-proxy-endpoints.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var allowed []string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var cm struct {
			Kind string            `json:"kind"`
			Data map[string]string `json:"data"`
		}
		if err := yaml.Unmarshal([]byte(doc), &cm); err != nil {
			t.Fatal(err)
		}
		if cm.Kind != "ConfigMap" {
			continue
		}
		for _, s := range strings.Split(cm.Data["allowedServiceAccounts"], ",") {
			if s = strings.TrimSpace(s); s != "" {
				allowed = append(allowed, s)
			}
		}
	}
	if len(allowed) == 0 {
		t.Fatal("the admission ConfigMap lists no allowedServiceAccounts")
	}
	for _, sp := range shippedPolicies {
		for name, d := range sp.drivers {
			if sa := d[0] + "/" + d[4]; !slices.Contains(allowed, sa) {
				t.Errorf("%s rule %s admits ServiceAccount %s, which the admission policy's allowedServiceAccounts %v refuses", sp.file, name, sa, allowed)
			}
		}
	}
}
