package manifests

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"
)

// shippedDaemonSet renders the kustomize base of one OS and returns its
// DaemonSet.
func shippedDaemonSet(t *testing.T, os string) *appsv1.DaemonSet {
	t.Helper()
	out, err := Kustomize(filepath.Join(root, "deploy", os))
	if err != nil {
		t.Fatal(err)
	}
	docs, errs := schemaFor(t).LoadBytes("deploy/"+os, out)
	for _, e := range errs {
		t.Fatal(e)
	}
	for _, d := range docs {
		if ds, ok := d.Object.(*appsv1.DaemonSet); ok {
			return ds
		}
	}
	t.Fatalf("deploy/%s renders no DaemonSet", os)
	return nil
}

// loopbackPort matches a loopback address with a port in prose.
var loopbackPort = regexp.MustCompile(`(?:127\.0\.0\.1|localhost):([0-9]+)`)

// TestReadmeClaimsMatchManifests keeps what the deploy READMEs say about
// the manifests equal to them (issue #25: deploy/linux/README said "No
// hostPID" while the DaemonSet set it): the hostPID and hostNetwork
// bullets of deploy/linux/README.md follow the DaemonSet; every loopback
// port the READMEs name is the DaemonSets' metrics port; the policy file
// the Linux README installs is the one the unit's --policy names; and the
// --kubelet-path the README says both pass, both pass.
func TestReadmeClaimsMatchManifests(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	linuxReadme := read("deploy/linux/README.md")
	linux := shippedDaemonSet(t, "linux")
	windows := shippedDaemonSet(t, "windows")
	spec := linux.Spec.Template.Spec

	for _, c := range []struct {
		field string
		set   bool
	}{{"hostPID", spec.HostPID}, {"hostNetwork", spec.HostNetwork}} {
		claims := strings.Contains(linuxReadme, "- **"+c.field+"**")
		denies := strings.Contains(linuxReadme, "No "+c.field)
		if c.set && (!claims || denies) || !c.set && claims {
			t.Errorf("deploy/linux/README.md: the DaemonSet sets %s: %v, the README has a \"- **%s**\" bullet: %v and says \"No %s\": %v",
				c.field, c.set, c.field, claims, c.field, denies)
		}
	}

	var ports []string
	for _, ds := range []*appsv1.DaemonSet{linux, windows} {
		for _, p := range proxyContainer(t, ds).Ports {
			ports = append(ports, strconv.Itoa(int(p.ContainerPort)))
		}
	}
	if len(ports) == 0 {
		t.Fatal("the DaemonSets declare no port")
	}
	for _, f := range []string{"deploy/README.md", "deploy/linux/README.md", "deploy/windows/README.md"} {
		for _, m := range loopbackPort.FindAllStringSubmatch(read(f), -1) {
			if !slices.Contains(ports, m[1]) {
				t.Errorf("%s names %s, but the DaemonSets' metrics ports are %v", f, m[0], ports)
			}
		}
	}

	u, err := ParseUnit(filepath.Join(root, "deploy", "linux", "csi-node-proxy.service"))
	if err != nil {
		t.Fatal(err)
	}
	starts := u.Get("Service", "ExecStart")
	if len(starts) != 1 {
		t.Fatalf("the unit has %d ExecStart=", len(starts))
	}
	execStart := strings.Fields(starts[0].Value)
	var policyFlag string
	for _, a := range execStart {
		if v, ok := strings.CutPrefix(a, "--policy="); ok {
			policyFlag = v
		}
	}
	if !strings.Contains(linuxReadme, "install -m 0644 deploy/linux/policy.yaml "+policyFlag+"\n") || policyFlag == "" {
		t.Errorf("deploy/linux/README.md does not install deploy/linux/policy.yaml at %q, the unit's --policy", policyFlag)
	}
	const kubelet = "--kubelet-path=/var/lib/kubelet"
	if strings.Contains(linuxReadme, "Both pass `"+kubelet+"`") {
		if !slices.Contains(execStart, kubelet) || !slices.Contains(proxyContainer(t, linux).Args, kubelet) {
			t.Errorf("deploy/linux/README.md says both pass %s: unit %q, DaemonSet %q", kubelet, execStart, proxyContainer(t, linux).Args)
		}
	} else {
		t.Errorf("deploy/linux/README.md no longer says which --kubelet-path both pass: update this test")
	}
}

// TestHelmPresetsRenderShippedPolicy: the chart with a driver preset
// renders the policy test/deployment runs the DaemonSet with: the
// shipped Linux policy with the preset added to its presets line, and the
// same DaemonSet command line as the kustomize base (TestHelmMatchesKustomize).
func TestHelmPresetsRenderShippedPolicy(t *testing.T) {
	file, err := os.ReadFile(filepath.Join(root, "deploy", "linux", "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(string(file), "\npresets: [node-admin]\n", "\npresets: [node-admin, azuredisk]\n", 1)
	out, notes := renderChart(t, "csi-node-proxy", map[string]any{"windows": map[string]any{"enabled": false}, "policy": map[string]any{"presets": []any{"node-admin", "azuredisk"}}})
	if strings.Contains(notes, "admits no driver") {
		t.Errorf("NOTES with a driver preset warn:\n%s", notes)
	}
	for _, vals := range []map[string]any{{}, {"linux": map[string]any{"enabled": false}, "policy": map[string]any{"rules": []any{}, "presets": []any{}}}} {
		if _, notes := renderChart(t, "csi-node-proxy", vals); !strings.Contains(notes, "WARNING: the policy admits no driver") {
			t.Errorf("NOTES of %v do not warn that the policy admits no driver:\n%s", vals, notes)
		}
	}
	_, notes = renderChart(t, "csi-node-proxy", map[string]any{"policy": map[string]any{"mode": "audit-only", "presets": []any{"node-admin", "smb"}}})
	if !strings.Contains(notes, "audit-only") || strings.Contains(notes, "admits no driver") {
		t.Errorf("NOTES of an audit-only policy with smb:\n%s", notes)
	}
	docs, errs := schemaFor(t).LoadBytes("chart with the azuredisk preset", out)
	for _, e := range errs {
		t.Fatal(e)
	}
	var got string
	for _, d := range docs {
		if cm, ok := d.Object.(*corev1.ConfigMap); ok && strings.HasSuffix(cm.Name, "-policy") {
			got = cm.Data["policy.yaml"]
		}
	}
	var g, w any
	if err := yaml.Unmarshal([]byte(got), &g); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(g, w) {
		t.Errorf("the chart's policy %v, want the shipped one with the preset %v", g, w)
	}
}
