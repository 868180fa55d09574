package manifests

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	"helm.sh/helm/v3/pkg/chart"
)

// chartDir is the Helm chart, relative to this module.
var chartDir = filepath.Join(root, "deploy", "helm", "csi-node-proxy")

// loadChart loads the chart once per test.
func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := LoadChart(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// values parses YAML values as helm --values would.
func values(t *testing.T, y string) map[string]any {
	t.Helper()
	v := map[string]any{}
	if err := yaml.Unmarshal([]byte(y), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// renderChart renders the chart into one YAML stream, as helm template
// prints it.
func renderChart(t *testing.T, release string, vals map[string]any) ([]byte, string) {
	t.Helper()
	files, notes, err := RenderChart(loadChart(t), release, "kube-system", vals)
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, f := range files {
		all = append(all, []byte("---\n# Source: "+f.Name+"\n")...)
		all = append(all, f.Data...)
		all = append(all, '\n')
	}
	return all, notes
}

// allLinux turns every option on for a release serving Linux nodes only,
// with a name and ServiceAccount of its own.
const allLinux = `
nameOverride: node-proxy
serviceAccount: {create: true, name: csi-proxy-sa}
image: {repository: registry.example.com/mirror/csi-node-proxy, tag: v9.8.7, pullPolicy: Always}
imagePullSecrets: [{name: mirror}]
apis: [disk-v1, volume, filesystem-v1]
verbosity: 4
extraArgs: [--shutdown-timeout=40s]
linux:
  kubeletPath: /var/lib/k8s/kubelet
  workingDirs: [/var/lib/csi-extra, /mnt/csi]
  allowedServices: [iscsid.service]
  auditDir: /var/log/csi-audit
  socketDir: /run/csi-node-proxy-b
  socketGroup: "2000"
  socketMode: "0660"
  filesystem: xfs
  hostPID: true
  nodeSelector: {storage: "true", kubernetes.io/os: windows}
  tolerations: [{key: storage, operator: Exists, effect: NoSchedule}]
  resources: {requests: {cpu: 100m, memory: 128Mi}}
  podLabels: {tier: node, app.kubernetes.io/name: not-the-selector}
  podAnnotations: {team: storage-linux}
windows: {enabled: false}
policy:
  enabled: true
  reloadInterval: 30s
  mode: audit-only
  presets: [node-admin, smb]
  rules:
    - name: node-plugins
      callers: [{gids: [2000]}]
      allow: [{groups: [disk, volume, filesystem], methods: ["*"]}]
      pathRoots: [/var/lib/k8s/kubelet/plugins, /var/lib/k8s/kubelet/pods]
auditLog: {enabled: true, reads: true}
metrics:
  port: 9888
  podMonitor: {enabled: true, labels: {release: prometheus}, interval: 15s}
priorityClassName: system-cluster-critical
podLabels: {cost-center: "42", tier: everything}
podAnnotations: {team: storage, owner: sre}
terminationGracePeriodSeconds: 45
`

// allWindows turns every option on for a release serving Windows nodes
// only, under a name given whole and an existing ServiceAccount.
const allWindows = `
fullnameOverride: storage-proxy
serviceAccount: {create: false, name: node-sa}
image: {repository: registry.example.com/mirror/csi-node-proxy, tag: v9.8.7}
apis: [disk-v1, volume-v1, smb]
linux: {enabled: false}
windows:
  pipeGroup: csi-drivers
  kubeletPath: 'D:\kubelet'
  workingDirs: ['C:\csi']
  allowedServices: [csi-helper]
  auditDir: 'D:\audit'
policy:
  enabled: true
  rules:
    - name: csi-drivers
      callers: [{windowsGroups: ["S-1-5-21-1004336348-1177238915-682003330-1013"]}]
      allow: [{groups: [disk, volume, smb], methods: ["*"]}]
      pathRoots: ['D:\kubelet']
auditLog: {enabled: true, reads: true}
metrics: {host: 0.0.0.0, podMonitor: {enabled: true}}
`

// existingSA is the ServiceAccount allWindows names and does not create.
const existingSA = `---
apiVersion: v1
kind: ServiceAccount
metadata: {name: node-sa, namespace: kube-system}
`

// onlyOS is the values of a release that serves the nodes of one OS.
func onlyOS(nodeOS string) map[string]any {
	return map[string]any{
		"linux":   map[string]any{"enabled": nodeOS == "linux"},
		"windows": map[string]any{"enabled": nodeOS == "windows"},
	}
}

// helmCase is one rendering of the chart and what it must contain.
type helmCase struct {
	release string
	values  string
	// ds is the DaemonSet whose daemon is checked.
	ds string
	// extra is YAML applied with the release: objects it expects to exist.
	extra string
	// repo is the image repository the daemon must run from.
	repo string
	// args must all be in the daemon's command line; absent must not.
	args, absent []string
	kinds        map[string]int
	// metrics is METRICS_ADDRESS.
	metrics string
}

var helmCases = map[string]helmCase{
	"linux defaults": {
		release: "csi-node-proxy", values: `{windows: {enabled: false}}`, ds: "csi-node-proxy-linux",
		args: []string{"--host=linux", "--socket-dir=/run/csi-node-proxy", "--kubelet-path=/var/lib/kubelet", "--linux-filesystem=ext4", "--metrics-bind-address=$(METRICS_ADDRESS)", "-v=2",
			"--policy=/etc/csi-node-proxy/policy.yaml", "--audit-log=/var/log/csi-node-proxy/audit.log", "--cri-endpoint=unix:///run/containerd/containerd.sock"},
		absent:  []string{"--apis", "--working-dir", "--socket-group", "--audit-reads"},
		kinds:   map[string]int{"ServiceAccount": 1, "DaemonSet": 1, "ConfigMap": 1},
		metrics: "127.0.0.1:29690",
	},
	"windows defaults": {
		release: "csi-node-proxy", values: `{linux: {enabled: false}}`, ds: "csi-node-proxy-windows",
		args: []string{"--host=windows", `--kubelet-path=C:\var\lib\kubelet`, "--metrics-bind-address=$(METRICS_ADDRESS)", "-v=2",
			`--policy=C:\etc\csi-node-proxy\policy.yaml`, `--audit-log=C:\var\log\csi-node-proxy\audit.log`},
		absent:  []string{"--apis", "--pipe-group", "--pipe-sddl", "--socket-dir", "--cri-endpoint"},
		kinds:   map[string]int{"ServiceAccount": 1, "DaemonSet": 1, "ConfigMap": 1},
		metrics: "127.0.0.1:29690",
	},
	"linux, every option": {
		release: "proxy", values: allLinux, ds: "proxy-node-proxy-linux", repo: "registry.example.com/mirror/csi-node-proxy",
		args: []string{
			"--host=linux", "--socket-dir=/run/csi-node-proxy-b", "--socket-group=2000", "--socket-mode=0660",
			"--linux-filesystem=xfs", "--kubelet-path=/var/lib/k8s/kubelet", "--working-dir=/var/lib/csi-extra",
			"--working-dir=/mnt/csi", "--allowed-service=iscsid.service", "--apis=disk-v1,volume,filesystem-v1",
			"--policy=/etc/csi-node-proxy/policy.yaml", "--policy-reload-interval=30s",
			"--audit-log=/var/log/csi-audit/audit.log", "--audit-reads", "-v=4", "--shutdown-timeout=40s",
		},
		kinds:   map[string]int{"ServiceAccount": 1, "DaemonSet": 1, "ConfigMap": 1, "PodMonitor": 1},
		metrics: ":9888",
	},
	"windows, every option": {
		release: "proxy-windows", values: allWindows, ds: "storage-proxy-windows", repo: "registry.example.com/mirror/csi-node-proxy",
		extra: existingSA,
		args: []string{
			"--host=windows", "--pipe-group=csi-drivers", `--kubelet-path=D:\kubelet`, `--working-dir=C:\csi`,
			"--allowed-service=csi-helper", "--apis=disk-v1,volume-v1,smb",
			`--policy=C:\etc\csi-node-proxy\policy.yaml`, `--audit-log=D:\audit\audit.log`, "--audit-reads",
		},
		absent:  []string{"--pipe-sddl", "--socket-dir"},
		kinds:   map[string]int{"ServiceAccount": 1, "DaemonSet": 1, "ConfigMap": 1, "PodMonitor": 1},
		metrics: "0.0.0.0:29690",
	},
	"windows, pipe SDDL": {
		release: "proxy-sddl", values: `{linux: {enabled: false}, windows: {pipeSDDL: "D:P(A;;GA;;;BA)(A;;GA;;;SY)(A;;GRGW;;;S-1-5-32-545)"}}`, ds: "proxy-sddl-csi-node-proxy-windows",
		args:    []string{"--pipe-sddl=D:P(A;;GA;;;BA)(A;;GA;;;SY)(A;;GRGW;;;S-1-5-32-545)"},
		absent:  []string{"--pipe-group"},
		kinds:   map[string]int{"ServiceAccount": 1, "DaemonSet": 1, "ConfigMap": 1},
		metrics: "127.0.0.1:29690",
	},
	"mixed cluster defaults, linux": {
		release: "csi-node-proxy", values: `{}`, ds: "csi-node-proxy-linux",
		args:    []string{"--host=linux", "--kubelet-path=/var/lib/kubelet", "--policy=/etc/csi-node-proxy/policy.yaml"},
		absent:  []string{"--pipe-group"},
		kinds:   map[string]int{"ServiceAccount": 1, "DaemonSet": 2, "ConfigMap": 1},
		metrics: "127.0.0.1:29690",
	},
	"mixed cluster defaults, windows": {
		release: "csi-node-proxy", values: `{}`, ds: "csi-node-proxy-windows",
		args:    []string{"--host=windows", `--kubelet-path=C:\var\lib\kubelet`, `--policy=C:\etc\csi-node-proxy\policy.yaml`},
		absent:  []string{"--socket-dir", "--cri-endpoint"},
		kinds:   map[string]int{"ServiceAccount": 1, "DaemonSet": 2, "ConfigMap": 1},
		metrics: "127.0.0.1:29690",
	},
}

// daemonArgs is the daemon's command line after the program.
func daemonArgs(c *corev1.Container) []string {
	return append(slices.Clone(c.Command[1:]), c.Args...)
}

// hasFlag reports whether args has the flag (name, or name=value).
func hasFlag(args []string, flag string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return a == flag || strings.HasPrefix(a, flag+"=") })
}

// TestHelm renders the chart with its Go library (helm template without a
// cluster) with default values and with every option, for each OS, and
// puts every rendered object through the schema and semantic checks.
func TestHelm(t *testing.T) {
	for name, hc := range helmCases {
		t.Run(name, func(t *testing.T) {
			out, notes := renderChart(t, hc.release, values(t, hc.values))
			out = append(out, hc.extra...)
			s := checkRendered(t, "helm template "+name, out, func(s *Set) { s.ImageRepository = hc.repo })
			if got := kinds(s); !equality.Semantic.DeepEqual(got, hc.kinds) {
				t.Errorf("rendered %v, want %v", got, hc.kinds)
			}
			ds := daemonSets(s)[hc.ds]
			if ds == nil {
				t.Fatalf("no DaemonSet %s", hc.ds)
			}
			c := proxyContainer(t, ds)
			args := daemonArgs(c)
			for _, a := range hc.args {
				if !slices.Contains(args, a) {
					t.Errorf("command line %q lacks %s", args, a)
				}
			}
			for _, a := range hc.absent {
				if hasFlag(args, a) {
					t.Errorf("command line %q has %s", args, a)
				}
			}
			if got := envValue(c, "METRICS_ADDRESS"); got != hc.metrics {
				t.Errorf("METRICS_ADDRESS %q, want %q", got, hc.metrics)
			}
			if !strings.Contains(notes, "rollout status ds/"+hc.ds) {
				t.Errorf("NOTES.txt does not say how to follow the rollout:\n%s", notes)
			}
			t.Logf("%v\nNOTES.txt:\n%s", kinds(s), notes)
		})
	}
}

// TestHelmEveryOption looks closer at what the options produce beyond the
// command line: mounts, the policy ConfigMap, the PodMonitor, scheduling.
func TestHelmEveryOption(t *testing.T) {
	out, _ := renderChart(t, "proxy", values(t, allLinux))
	docs, errs := schemaFor(t).LoadBytes("linux, every option", out)
	for _, e := range errs {
		t.Fatal(e)
	}
	var ds *appsv1.DaemonSet
	var cm *corev1.ConfigMap
	var pm *monitoringv1.PodMonitor
	for _, d := range docs {
		switch o := d.Object.(type) {
		case *appsv1.DaemonSet:
			ds = o
		case *corev1.ConfigMap:
			cm = o
		case *monitoringv1.PodMonitor:
			pm = o
		}
	}
	if ds == nil || cm == nil || pm == nil {
		t.Fatalf("DaemonSet %v, ConfigMap %v, PodMonitor %v", ds != nil, cm != nil, pm != nil)
	}
	spec := ds.Spec.Template.Spec
	c := proxyContainer(t, ds)

	// The policy is the rules given, in the file the daemon is told.
	var policy struct {
		Mode    string           `json:"mode"`
		Presets []string         `json:"presets"`
		Rules   []map[string]any `json:"rules"`
	}
	if err := yaml.UnmarshalStrict([]byte(cm.Data["policy.yaml"]), &policy); err != nil {
		t.Fatalf("policy.yaml: %v\n%s", err, cm.Data["policy.yaml"])
	}
	if len(policy.Rules) != 1 || policy.Rules[0]["name"] != "node-plugins" || policy.Mode != "audit-only" || strings.Join(policy.Presets, ",") != "node-admin,smb" {
		t.Errorf("policy.yaml mode %q presets %v rules %v", policy.Mode, policy.Presets, policy.Rules)
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m
	}
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	if m, v := mounts["policy"], vols["policy"]; m.MountPath != "/etc/csi-node-proxy" || !m.ReadOnly || v.ConfigMap == nil || v.ConfigMap.Name != cm.Name || *v.ConfigMap.DefaultMode != 0o444 {
		t.Errorf("policy mount %+v, volume %+v", m, v)
	}
	// Audit directory and working directories are host directories at the
	// same path; working directories propagate mounts to the host.
	if m, v := mounts["audit-dir"], vols["audit-dir"]; m.MountPath != "/var/log/csi-audit" || v.HostPath == nil || v.HostPath.Path != "/var/log/csi-audit" {
		t.Errorf("audit mount %+v, volume %+v", m, v)
	}
	for i, dir := range []string{"/var/lib/csi-extra", "/mnt/csi"} {
		name := "working-dir-" + string(rune('0'+i))
		m, v := mounts[name], vols[name]
		if m.MountPath != dir || m.MountPropagation == nil || *m.MountPropagation != corev1.MountPropagationBidirectional || v.HostPath == nil || v.HostPath.Path != dir {
			t.Errorf("%s: mount %+v, volume %+v", name, m, v)
		}
	}
	if m := mounts["kubelet-dir"]; m.MountPath != "/var/lib/k8s/kubelet" {
		t.Errorf("kubelet-dir mounted at %s", m.MountPath)
	}
	// Scheduling: the OS is the release's whatever nodeSelector says.
	if spec.NodeSelector["kubernetes.io/os"] != "linux" || spec.NodeSelector["storage"] != "true" {
		t.Errorf("nodeSelector %v", spec.NodeSelector)
	}
	if len(spec.Tolerations) != 1 || spec.Tolerations[0].Key != "storage" || !spec.HostPID || spec.PriorityClassName != "system-cluster-critical" {
		t.Errorf("tolerations %v, hostPID %v, priority %q", spec.Tolerations, spec.HostPID, spec.PriorityClassName)
	}
	if c.Image != "registry.example.com/mirror/csi-node-proxy:v9.8.7" || c.ImagePullPolicy != corev1.PullAlways || len(spec.ImagePullSecrets) != 1 {
		t.Errorf("image %s %s, pull secrets %v", c.Image, c.ImagePullPolicy, spec.ImagePullSecrets)
	}
	// Per-OS pod labels and annotations win over the release-wide ones;
	// neither replaces the labels the selector needs.
	if a := ds.Spec.Template.Annotations; a["team"] != "storage-linux" || a["owner"] != "sre" || a["csi-node-proxy.io/policy-checksum"] == "" {
		t.Errorf("pod annotations %v", a)
	}
	if l := ds.Spec.Template.Labels; l["tier"] != "node" || l["cost-center"] != "42" || l["app.kubernetes.io/name"] != "node-proxy" || l["csi-node-proxy.io/os"] != "linux" {
		t.Errorf("pod labels %v", l)
	}
	// nameOverride names the objects and the app; the ServiceAccount is
	// the one named.
	if ds.Name != "proxy-node-proxy-linux" || cm.Name != "proxy-node-proxy-policy" || spec.ServiceAccountName != "csi-proxy-sa" || spec.TerminationGracePeriodSeconds == nil || *spec.TerminationGracePeriodSeconds != 45 {
		t.Errorf("DaemonSet %s, ConfigMap %s, ServiceAccount %s, grace %v", ds.Name, cm.Name, spec.ServiceAccountName, spec.TerminationGracePeriodSeconds)
	}
	if q := c.Resources.Requests[corev1.ResourceCPU]; q.String() != "100m" {
		t.Errorf("resources %v", c.Resources)
	}
	if pm.Labels["release"] != "prometheus" || string(pm.Spec.PodMetricsEndpoints[0].Interval) != "15s" {
		t.Errorf("PodMonitor labels %v, endpoints %+v", pm.Labels, pm.Spec.PodMetricsEndpoints)
	}
}

// TestHelmWindowsProbe checks that the readiness probe of a Windows release
// serving some APIs asks csi-node-proxyctl only for the groups served: it
// exits 5 for a group not served, and the pod would never be ready.
func TestHelmWindowsProbe(t *testing.T) {
	out, _ := renderChart(t, "proxy-windows", values(t, allWindows))
	out = append(out, existingSA...)
	s := checkRendered(t, "windows, every option", out, func(s *Set) { s.ImageRepository = "registry.example.com/mirror/csi-node-proxy" })
	c := proxyContainer(t, daemonSets(s)["storage-proxy-windows"])
	want := []string{`%CONTAINER_SANDBOX_MOUNT_POINT%\csi-node-proxyctl.exe`, "health", "--timeout=5s", "--group=disk", "--group=volume", "--group=smb"}
	if c.ReadinessProbe == nil || c.ReadinessProbe.Exec == nil || !slices.Equal(c.ReadinessProbe.Exec.Command, want) {
		t.Errorf("readiness probe %+v, want exec %q", c.ReadinessProbe, want)
	}
}

// TestHelmMatchesKustomize keeps the chart's defaults and the kustomize
// bases from drifting apart: the same volumes, mounts, probes, ports, env
// and security settings, and the same command line (the chart also states
// the default --linux-filesystem).
func TestHelmMatchesKustomize(t *testing.T) {
	// One release with the defaults serves both OSes, as deploy/overlays/
	// cluster does with the two bases.
	out, _ := renderChart(t, "csi-node-proxy", values(t, `{}`))
	h := checkRendered(t, "helm defaults", out, nil)
	for _, tc := range []struct{ os, base, release string }{
		{"linux", "linux", "csi-node-proxy-linux"},
		{"windows", "windows", "csi-node-proxy-windows"},
	} {
		t.Run(tc.os, func(t *testing.T) {
			k, err := Kustomize(filepath.Join(root, "deploy", tc.base))
			if err != nil {
				t.Fatal(err)
			}
			ks := checkRendered(t, "kustomize "+tc.base, k, nil)
			hd, kd := daemonSets(h)[tc.release], daemonSets(ks)[tc.release]
			if hd == nil || kd == nil {
				t.Fatalf("DaemonSet %s: helm %v, kustomize %v", tc.release, hd != nil, kd != nil)
			}
			hs, kspec := hd.Spec.Template.Spec, kd.Spec.Template.Spec
			// The chart's one policy ConfigMap serves both OSes; each base
			// has its own (csi-node-proxy-<os>-policy).
			hs.Volumes = slices.Clone(hs.Volumes)
			for i, v := range hs.Volumes {
				if v.ConfigMap != nil && v.ConfigMap.Name == "csi-node-proxy-policy" {
					cm := *v.ConfigMap
					cm.Name = "csi-node-proxy-" + tc.os + "-policy"
					hs.Volumes[i].ConfigMap = &cm
				}
			}
			hc, kc := proxyContainer(t, hd), proxyContainer(t, kd)
			ha := slices.DeleteFunc(daemonArgs(hc), func(a string) bool { return a == "--linux-filesystem=ext4" })
			kargs := daemonArgs(kc)
			// The Windows base spells upstream's flags as upstream does
			// (-kubelet-path); Go's flag package reads both the same.
			for _, args := range [][]string{ha, kargs} {
				for i, a := range args {
					args[i] = "-" + strings.TrimLeft(a, "-")
				}
				slices.Sort(args)
			}
			for _, cmp := range []struct {
				what string
				a, b any
			}{
				{"command line", ha, kargs},
				{"program", hc.Command[0], kc.Command[0]},
				{"volumes", hs.Volumes, kspec.Volumes},
				{"mounts", hc.VolumeMounts, kc.VolumeMounts},
				{"liveness probe", hc.LivenessProbe, kc.LivenessProbe},
				{"readiness probe", hc.ReadinessProbe, kc.ReadinessProbe},
				{"ports", hc.Ports, kc.Ports},
				{"env", hc.Env, kc.Env},
				{"resources", hc.Resources, kc.Resources},
				{"container security", hc.SecurityContext, kc.SecurityContext},
				{"pod security", hs.SecurityContext, kspec.SecurityContext},
				{"host network", hs.HostNetwork, kspec.HostNetwork},
				{"tolerations", hs.Tolerations, kspec.Tolerations},
				{"priority class", hs.PriorityClassName, kspec.PriorityClassName},
				{"node selector", hs.NodeSelector, kspec.NodeSelector},
				{"image", hc.Image, kc.Image},
			} {
				if !equality.Semantic.DeepEqual(cmp.a, cmp.b) {
					t.Errorf("%s: helm %+v, kustomize %+v", cmp.what, cmp.a, cmp.b)
				}
			}
		})
	}
}

// TestHelmRefuses checks that values that cannot work fail at helm
// install time, with a message that says why.
func TestHelmRefuses(t *testing.T) {
	for vals, want := range map[string]string{
		`{os: linux}`: "'os' not allowed",
		`{linux: {enabled: false}, windows: {enabled: false}}`:      "both false",
		`{metrics: {host: 127.0.0.1, podMonitor: {enabled: true}}}`: "could not scrape",
		`{windows: {pipeGroup: a, pipeSDDL: "D:P"}}`:                "give one",
		`{metrics: {podmonitor: {enabled: true}}}`:                  "podmonitor",
		`{policy: {presets: [node-admin, example]}}`:                "Linux nodes only",
		`{windows: {kubeletPath: /var/lib/kubelet}}`:                "kubeletPath",
		`{linux: {auditDir: 'C:\audit'}}`:                           "auditDir",
		`{policy: {mode: audit}}`:                                   "mode",
		`{policy: {presets: [azure-disk]}}`:                         "presets",
		`{apis: [disk_v1]}`:                                         "apis",
	} {
		_, _, err := RenderChart(loadChart(t), "csi-node-proxy", "kube-system", values(t, vals))
		switch {
		case err == nil:
			t.Errorf("%s rendered; want an error mentioning %q", vals, want)
		case !strings.Contains(err.Error(), want):
			t.Errorf("%s: %v; want it to mention %q", vals, err, want)
		default:
			t.Logf("%s: %v", vals, err)
		}
	}
}

// valuesKey is a key line of values.yaml at the top level or one below.
var valuesKey = regexp.MustCompile(`^( {0,2})([A-Za-z][A-Za-z0-9]*):`)

// TestHelmValuesDocumented requires a comment above every key of
// values.yaml down to the second level (and under resources, which is a
// Kubernetes type, only the key itself), and that values.yaml and
// values.schema.json name the same top-level keys.
func TestHelmValuesDocumented(t *testing.T) {
	f, err := os.Open(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var keys []string
	prev, parent := "", ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := valuesKey.FindStringSubmatch(line); m != nil {
			if m[1] == "" {
				parent = m[2]
				keys = append(keys, m[2])
			}
			if (m[1] == "" || parent != "resources") && !strings.HasPrefix(strings.TrimSpace(prev), "#") {
				t.Errorf("values.yaml:%d: %s has no comment above it", n, strings.TrimSpace(line))
			}
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	var inSchema []string
	for k := range schema.Properties {
		inSchema = append(inSchema, k)
	}
	slices.Sort(keys)
	slices.Sort(inSchema)
	if !slices.Equal(keys, inSchema) {
		t.Errorf("values.yaml keys %v, values.schema.json properties %v", keys, inSchema)
	}
}

// mixedCluster sets each OS's scheduling, resources, image and pod
// metadata differently, as a cluster with both kinds of nodes might.
const mixedCluster = `
image: {repository: registry.example.com/mirror/csi-node-proxy, tag: v9.8.7}
imagePullSecrets: [{name: mirror}]
priorityClassName: system-cluster-critical
podLabels: {team: storage}
podAnnotations: {owner: sre}
linux:
  image: {tag: v9.8.7-debian}
  nodeSelector: {pool: linux-storage}
  tolerations: [{key: storage, operator: Exists, effect: NoSchedule}]
  resources: {requests: {cpu: 100m, memory: 96Mi}}
  podLabels: {os-pool: lin}
  podAnnotations: {owner: linux-sre}
windows:
  image: {tag: v9.8.7-ltsc2022}
  nodeSelector: {pool: windows-storage}
  tolerations: [{key: node.kubernetes.io/os, operator: Equal, value: windows, effect: NoSchedule}]
  resources: {requests: {cpu: 200m, memory: 128Mi}}
  podLabels: {os-pool: win}
  podAnnotations: {os-note: hostprocess}
`
