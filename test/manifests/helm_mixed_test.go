package manifests

// The chart for a mixed cluster, an empty rule list, and the packaged
// chart with its repository index.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/csi-node-proxy/csi-node-proxy/hack/helmchart"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
)

// TestHelmMixedCluster renders one release for Linux and Windows nodes
// and checks that each DaemonSet takes its own OS's values and the
// release-wide ones, selects only its own pods, and that both share the
// ServiceAccount and the policy ConfigMap.
func TestHelmMixedCluster(t *testing.T) {
	out, notes := renderChart(t, "csi-node-proxy", values(t, mixedCluster))
	s := checkRendered(t, "mixed cluster", out, func(s *Set) { s.ImageRepository = "registry.example.com/mirror/csi-node-proxy" })
	if got, want := kinds(s), map[string]int{"ServiceAccount": 1, "DaemonSet": 2, "ConfigMap": 1}; !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("rendered %v, want %v", got, want)
	}
	dss := daemonSets(s)
	type want struct {
		image, pool, toleration, cpu, osPool, owner string
		hostProcess                                 bool
	}
	for name, w := range map[string]want{
		"csi-node-proxy-linux":   {"registry.example.com/mirror/csi-node-proxy:v9.8.7-debian", "linux-storage", "storage", "100m", "lin", "linux-sre", false},
		"csi-node-proxy-windows": {"registry.example.com/mirror/csi-node-proxy:v9.8.7-ltsc2022", "windows-storage", "node.kubernetes.io/os", "200m", "win", "sre", true},
	} {
		ds := dss[name]
		if ds == nil {
			t.Errorf("no DaemonSet %s", name)
			continue
		}
		nodeOS := strings.TrimPrefix(name, "csi-node-proxy-")
		spec := ds.Spec.Template.Spec
		c := proxyContainer(t, ds)
		if c.Image != w.image {
			t.Errorf("%s: image %s, want %s", name, c.Image, w.image)
		}
		if spec.NodeSelector["pool"] != w.pool || spec.NodeSelector["kubernetes.io/os"] != nodeOS || len(spec.NodeSelector) != 2 {
			t.Errorf("%s: nodeSelector %v", name, spec.NodeSelector)
		}
		if len(spec.Tolerations) != 1 || spec.Tolerations[0].Key != w.toleration {
			t.Errorf("%s: tolerations %v", name, spec.Tolerations)
		}
		if q := c.Resources.Requests[corev1.ResourceCPU]; q.String() != w.cpu {
			t.Errorf("%s: resources %v", name, c.Resources)
		}
		l, a := ds.Spec.Template.Labels, ds.Spec.Template.Annotations
		if l["team"] != "storage" || l["os-pool"] != w.osPool || l["csi-node-proxy.io/os"] != nodeOS || a["owner"] != w.owner {
			t.Errorf("%s: pod labels %v, annotations %v", name, l, a)
		}
		if ds.Spec.Selector.MatchLabels["csi-node-proxy.io/os"] != nodeOS {
			t.Errorf("%s: selector %v does not tell the OSes apart", name, ds.Spec.Selector.MatchLabels)
		}
		if spec.PriorityClassName != "system-cluster-critical" || len(spec.ImagePullSecrets) != 1 || spec.ServiceAccountName != "csi-node-proxy" {
			t.Errorf("%s: priority %q, pull secrets %v, ServiceAccount %q", name, spec.PriorityClassName, spec.ImagePullSecrets, spec.ServiceAccountName)
		}
		hostProcess := spec.SecurityContext != nil && spec.SecurityContext.WindowsOptions != nil && spec.SecurityContext.WindowsOptions.HostProcess != nil && *spec.SecurityContext.WindowsOptions.HostProcess
		if hostProcess != w.hostProcess || spec.HostPID == w.hostProcess {
			t.Errorf("%s: hostProcess %v, hostPID %v", name, hostProcess, spec.HostPID)
		}
		var policyVolume string
		for _, v := range spec.Volumes {
			if v.ConfigMap != nil {
				policyVolume = v.ConfigMap.Name
			}
		}
		if policyVolume != "csi-node-proxy-policy" {
			t.Errorf("%s: policy volume from ConfigMap %q", name, policyVolume)
		}
		if !strings.Contains(notes, "rollout status ds/"+name) {
			t.Errorf("NOTES.txt does not name %s:\n%s", name, notes)
		}
	}
	// An OS's image.repository replaces the release's for that OS only
	// (decoded without the checks, which want one repository).
	out, _ = renderChart(t, "csi-node-proxy", values(t, `{image: {tag: v1.2.3}, windows: {image: {repository: registry.example.com/win/csi-node-proxy}}}`))
	docs, errs := schemaFor(t).LoadBytes("windows image", out)
	for _, e := range errs {
		t.Fatal(e)
	}
	images := map[string]string{}
	for _, d := range docs {
		if ds, ok := d.Object.(*appsv1.DaemonSet); ok {
			images[ds.Name] = proxyContainer(t, ds).Image
		}
	}
	if images["csi-node-proxy-linux"] != DefaultImageRepository+":v1.2.3" || images["csi-node-proxy-windows"] != "registry.example.com/win/csi-node-proxy:v1.2.3" {
		t.Errorf("images %v", images)
	}
}

// TestHelmEmptyRules: policy.rules: [] is the default and renders the
// same release as leaving it out; with no presets either, the chart still
// renders (the policy admits no driver, as the default does) and the
// daemon's own parser reads both policies and both deny a driver's call.
func TestHelmEmptyRules(t *testing.T) {
	def, _ := renderChart(t, "csi-node-proxy", values(t, `{}`))
	empty, _ := renderChart(t, "csi-node-proxy", values(t, `{policy: {rules: []}}`))
	if string(def) != string(empty) {
		t.Errorf("policy.rules: [] renders differently from the default")
	}
	methods, err := server.GroupMethods(adapter.All())
	if err != nil {
		t.Fatal(err)
	}
	for _, vals := range []string{`{}`, `{policy: {presets: [], rules: []}}`} {
		out, notes := renderChart(t, "csi-node-proxy", values(t, vals))
		if !strings.Contains(notes, "WARNING: the policy admits no driver") {
			t.Errorf("%s: NOTES do not warn that the policy admits no driver:\n%s", vals, notes)
		}
		docs, errs := schemaFor(t).LoadBytes(vals, out)
		for _, e := range errs {
			t.Fatal(e)
		}
		var data string
		for _, d := range docs {
			if cm, ok := d.Object.(*corev1.ConfigMap); ok {
				data = cm.Data["policy.yaml"]
			}
		}
		for _, style := range []hostpath.Style{hostpath.POSIX, hostpath.Windows} {
			p, err := policy.Parse([]byte(data), policy.Options{Style: style, Methods: methods})
			if err != nil {
				t.Fatalf("%s: the daemon refuses the policy %q: %v", vals, data, err)
			}
			dir := "/var/lib/kubelet/plugins/disk.csi.azure.com"
			if style == hostpath.Windows {
				dir = `C:\var\lib\kubelet\plugins\disk.csi.azure.com`
			}
			if dec := p.Decide(pathCall("kube-system", "csi-azuredisk-node-7x2kq", "azuredisk", "csi-azuredisk-node-sa", dir)); dec.Allowed {
				t.Errorf("%s: the policy %q admits azuredisk by rule %s", vals, data, dec.Rule)
			}
		}
	}
}

// TestHelmPackage packages the chart as make release does (hack/helmchart,
// no helm binary) and loads the archive with Helm's own loader, as helm
// install <chart>.tgz would: the same files as the chart directory, and
// it renders both DaemonSets. index.yaml's entry passes Helm's metadata
// validation and names the version and the archive's digest.
func TestHelmPackage(t *testing.T) {
	when := time.Unix(1767225600, 0)
	p, err := helmchart.Build(chartDir, "0.1.0", "v0.1.0", when)
	if err != nil {
		t.Fatal(err)
	}
	packaged, err := loader.LoadArchive(bytes.NewReader(p.Archive))
	if err != nil {
		t.Fatalf("helm cannot load %s: %v", p.FileName, err)
	}
	dir := loadChart(t)
	if packaged.Metadata.Name != dir.Metadata.Name || packaged.Metadata.Version != "0.1.0" || packaged.Metadata.AppVersion != "v0.1.0" {
		t.Errorf("packaged metadata %+v", packaged.Metadata)
	}
	names := func(c *chart.Chart) []string {
		var n []string
		for _, f := range c.Templates {
			n = append(n, f.Name)
		}
		slices.Sort(n)
		return n
	}
	if !slices.Equal(names(packaged), names(dir)) || string(packaged.Schema) != string(dir.Schema) || len(packaged.Raw) != len(dir.Raw) {
		t.Errorf("packaged templates %v, the directory's %v (schema equal %v)", names(packaged), names(dir), string(packaged.Schema) == string(dir.Schema))
	}
	files, _, err := RenderChart(packaged, "csi-node-proxy", "kube-system", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var rendered []string
	for _, f := range files {
		rendered = append(rendered, f.Name)
	}
	for _, want := range []string{"csi-node-proxy/templates/daemonset-linux.yaml", "csi-node-proxy/templates/daemonset-windows.yaml"} {
		if !slices.Contains(rendered, want) {
			t.Errorf("the packaged chart renders %v, not %s", rendered, want)
		}
	}

	data, err := helmchart.Index([]*helmchart.Package{p}, "", when)
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		APIVersion string `json:"apiVersion"`
		Entries    map[string][]struct {
			chart.Metadata
			URLs    []string `json:"urls"`
			Created string   `json:"created"`
			Digest  string   `json:"digest"`
		} `json:"entries"`
		Generated string `json:"generated"`
	}
	if err := yaml.UnmarshalStrict(data, &idx); err != nil {
		t.Fatalf("index.yaml: %v\n%s", err, data)
	}
	e := idx.Entries["csi-node-proxy"]
	if idx.APIVersion != "v1" || len(e) != 1 {
		t.Fatalf("index.yaml:\n%s", data)
	}
	if err := e[0].Validate(); err != nil {
		t.Errorf("index entry: %v", err)
	}
	sum := sha256.Sum256(p.Archive)
	if e[0].Version != "0.1.0" || e[0].Digest != hex.EncodeToString(sum[:]) || !slices.Equal(e[0].URLs, []string{"csi-node-proxy-0.1.0.tgz"}) {
		t.Errorf("index entry version %s digest %s urls %v", e[0].Version, e[0].Digest, e[0].URLs)
	}
	t.Logf("%s: %d bytes, sha256:%s", p.FileName, len(p.Archive), p.Digest)
}
