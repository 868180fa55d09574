package manifests

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// DefaultImageRepository is the image every manifest runs the daemon from
// (a multi-arch index: linux/amd64, linux/arm64, windows/amd64), tagged
// with the release. deploy/README.md names it.
const DefaultImageRepository = "ghcr.io/csi-node-proxy/csi-node-proxy"

// imageTag and imageDigest are what may follow the repository: Docker's
// tag grammar, and a sha256 digest.
var (
	imageTag    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	imageDigest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// checkImage checks that a container running the daemon uses the
// project's image, pinned to a tag or digest.
func (s *Set) checkImage(p problems, cp string, c *corev1.Container) {
	if c.Image == "" {
		return // reported as missing
	}
	want := s.ImageRepository
	if want == "" {
		want = DefaultImageRepository
	}
	name, digest, hasDigest := strings.Cut(c.Image, "@")
	tag := ""
	if colon := strings.LastIndex(name, ":"); colon > strings.LastIndex(name, "/") {
		name, tag = name[:colon], name[colon+1:]
	}
	if name != want {
		p.add("%s: image %q: the daemon's image is %s:<tag>", cp, c.Image, want)
	}
	switch {
	case hasDigest && !imageDigest.MatchString(digest):
		p.add("%s: image %q: %q is not a sha256 digest", cp, c.Image, digest)
	case !hasDigest && tag == "":
		p.add("%s: image %q has no tag: pin a release", cp, c.Image)
	case tag != "" && !imageTag.MatchString(tag):
		p.add("%s: image %q: %q is not a valid tag", cp, c.Image, tag)
	case tag == "latest":
		p.add("%s: image %q: pin a release, not latest (a node would run whatever it pulled last)", cp, c.Image)
	}
}

// isLoopback reports whether a listen or probe host is the node's
// loopback only.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// metricsKey names a daemon container across checks.
func metricsKey(d *Document, container string) string { return d.String() + "/" + container }

// checkObservability checks that a daemon container serves metrics and
// health on a fixed port it declares, and that its probes reach them: the
// kubelet runs on the node, so a probe of 127.0.0.1 reaches the daemon's
// loopback listener only with the host network, and a probe without a
// host goes to the pod IP, where a loopback listener is not.
func (s *Set) checkObservability(p problems, cp string, c *corev1.Container, spec *corev1.PodSpec, values Values) {
	addr, _ := values.Last("metrics-bind-address")
	if addr == "" {
		p.add("%s: metrics are off: give --metrics-bind-address (127.0.0.1:29690 keeps them on the node); every deployment serves /metrics, /healthz and /readyz for its probes", cp)
		return
	}
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		p.add("%s: --metrics-bind-address %q: %v", cp, addr, err)
		return
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port <= 0 || port > 65535 {
		p.add("%s: --metrics-bind-address %q: probes and scrapers need a fixed port", cp, addr)
		return
	}
	if s.metricsAddr == nil {
		s.metricsAddr = map[string]string{}
	}
	s.metricsAddr[metricsKey(p.doc, c.Name)] = addr
	loopback := isLoopback(host)
	if loopback && !spec.HostNetwork {
		p.add("%s: metrics listen on %s, the pod's own loopback: nothing outside the pod, not even the kubelet's probes, reaches it", cp, addr)
	}
	if !slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool { return int(cp.ContainerPort) == port }) {
		p.add("%s: port %d of --metrics-bind-address is not among the container's ports: declare it (probes and PodMonitors name it; with the host network it also reserves the port on the node)", cp, port)
	}

	probes := []struct {
		kind, path string
		probe      *corev1.Probe
	}{{"livenessProbe", "/healthz", c.LivenessProbe}, {"readinessProbe", "/readyz", c.ReadinessProbe}}
	for _, pr := range probes {
		where := cp + ": " + pr.kind
		switch {
		case pr.probe == nil:
			p.add("%s is missing: the daemon serves %s for it", where, pr.path)
		case pr.probe.HTTPGet != nil:
			g := pr.probe.HTTPGet
			if got, ok := resolvePort(c, g.Port); !ok {
				p.add("%s: port %s is none of the container's ports", where, g.Port.String())
			} else if got != port {
				p.add("%s: probes port %d but the daemon listens on %d (--metrics-bind-address %s)", where, got, port, addr)
			}
			if g.Path != pr.path {
				p.add("%s: path %q: want %s", where, g.Path, pr.path)
			}
			if g.Scheme != "" && g.Scheme != corev1.URISchemeHTTP {
				p.add("%s: scheme %s: the daemon serves plain HTTP", where, g.Scheme)
			}
			switch {
			case loopback && !isLoopback(g.Host):
				p.add("%s: host %q: the daemon listens on %s only; the kubelet must probe 127.0.0.1", where, g.Host, addr)
			case isLoopback(g.Host) && !spec.HostNetwork:
				p.add("%s: host %q is the node's loopback, not the pod's: only a host-network pod listens there", where, g.Host)
			}
		case pr.probe.Exec != nil:
			s.checkCtlProbe(p, where, pr.probe, c, values)
		default:
			p.add("%s: want an HTTP GET of %s or an exec of csi-node-proxyctl health", where, pr.path)
		}
	}
}

// resolvePort returns the number a probe's port names.
func resolvePort(c *corev1.Container, port intstr.IntOrString) (int, bool) {
	if port.Type == intstr.Int {
		return port.IntValue(), port.IntValue() > 0
	}
	for _, cp := range c.Ports {
		if cp.Name == port.StrVal {
			return int(cp.ContainerPort), true
		}
	}
	return 0, false
}

// isCtlBinary reports whether a program path names csi-node-proxyctl.
func isCtlBinary(prog string) bool {
	base := prog[strings.LastIndexAny(prog, `/\`)+1:]
	return base == "csi-node-proxyctl" || strings.EqualFold(base, "csi-node-proxyctl.exe")
}

// ctlDefaultTimeout is csi-node-proxyctl's --timeout default.
const ctlDefaultTimeout = time.Minute

// checkCtlProbe checks an exec probe of csi-node-proxyctl health: the CLI
// from the daemon's own directory in the image, "health" with flags the
// CLI has, a --timeout the kubelet waits for, the daemon's socket
// directory, and groups the daemon serves: health exits 5 unless every
// group asked for (all six by default) is served, so a probe asking for a
// group that --apis leaves out would never succeed.
func (s *Set) checkCtlProbe(p problems, where string, probe *corev1.Probe, c *corev1.Container, values Values) {
	cmd := probe.Exec.Command
	if len(cmd) == 0 || !isCtlBinary(cmd[0]) {
		p.add("%s: exec %q: want csi-node-proxyctl health", where, cmd)
		return
	}
	if len(c.Command) > 0 {
		dir := func(prog string) string { return prog[:strings.LastIndexAny(prog, `/\`)+1] }
		if dir(cmd[0]) != dir(c.Command[0]) {
			p.add("%s: %s is not in the daemon's directory %q: the image carries both side by side", where, cmd[0], dir(c.Command[0]))
		}
	}
	var groups []string
	timeout := ctlDefaultTimeout
	socketDir := SocketDir
	fs := flag.NewFlagSet("csi-node-proxyctl", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Func("group", "", func(v string) error { groups = append(groups, v); return nil })
	fs.DurationVar(&timeout, "timeout", timeout, "")
	fs.StringVar(&socketDir, "socket-dir", socketDir, "")
	fs.String("o", "", "")
	// Global flags go before or after the command.
	args := slices.Clone(cmd[1:])
	i := slices.Index(args, "health")
	if i < 0 {
		p.add("%s: exec %q: want the health command", where, cmd)
		return
	}
	args = append(args[:i:i], args[i+1:]...)
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		p.add("%s: exec %q: %v (want health with --group, --timeout, --socket-dir or -o)", where, cmd, err)
		return
	}
	if limit := time.Duration(max(probe.TimeoutSeconds, 1)) * time.Second; timeout >= limit {
		p.add("%s: csi-node-proxyctl --timeout %s is not below the probe's timeoutSeconds (%s): the kubelet would give up first", where, timeout, limit)
	}
	if dir, ok := values.Last("socket-dir"); ok && path.Clean(dir) != path.Clean(socketDir) {
		p.add("%s: csi-node-proxyctl --socket-dir %s, the daemon's is %s", where, socketDir, dir)
	}
	served := servedGroups(values)
	if served == nil {
		return
	}
	if len(groups) == 0 {
		p.add("%s: csi-node-proxyctl health asks for all six groups but --apis serves only %q: list them with --group", where, slices.Sorted(maps.Keys(served)))
	}
	for _, g := range groups {
		if !served[g] {
			p.add("%s: --group %s: the daemon does not serve it (--apis)", where, g)
		}
	}
}

// servedGroups returns the API groups --apis serves, or nil for all.
func servedGroups(values Values) map[string]bool {
	apis, ok := values.Last("apis")
	if !ok || apis == "" {
		return nil
	}
	groups := map[string]bool{}
	for _, a := range strings.Split(apis, ",") {
		g, _, _ := strings.Cut(strings.TrimSpace(a), "-")
		groups[g] = true
	}
	return groups
}

// checkPodMonitors checks every PodMonitor against the workloads among the
// manifests: it selects some, each endpoint names a port their containers
// declare, on /metrics over HTTP, and a daemon it scrapes does not listen
// on the node's loopback only (Prometheus scrapes the pod IP).
func (s *Set) checkPodMonitors() []error {
	var errs []error
	for _, d := range s.Docs {
		pm, ok := d.Object.(*monitoringv1.PodMonitor)
		if !ok {
			continue
		}
		p := problems{d, &errs}
		sel, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector)
		if err != nil {
			p.add("spec.selector: %v", err)
			continue
		}
		if sel.Empty() {
			p.add("spec.selector is empty: it would scrape every pod of its namespaces")
			continue
		}
		inNamespace := func(ns string) bool {
			switch ns2 := pm.Spec.NamespaceSelector; {
			case ns2.Any:
				return true
			case len(ns2.MatchNames) > 0:
				return slices.Contains(ns2.MatchNames, ns)
			}
			return ns == pm.Namespace
		}
		if len(pm.Spec.PodMetricsEndpoints) == 0 {
			p.add("spec.podMetricsEndpoints is empty")
		}
		matched := 0
		for _, w := range s.Docs {
			if w.Object == nil {
				continue
			}
			tmpl, _ := podTemplate(w.Object)
			if tmpl == nil || !inNamespace(w.Object.(metav1.Object).GetNamespace()) || !sel.Matches(labels.Set(tmpl.Labels)) {
				continue
			}
			matched++
			for i, e := range pm.Spec.PodMetricsEndpoints {
				s.checkEndpoint(p, fmt.Sprintf("podMetricsEndpoints[%d]", i), e, w, &tmpl.Spec)
			}
		}
		if matched == 0 {
			p.add("spec.selector %s selects no workload's pods among the manifests", sel)
		}
	}
	return errs
}

// checkEndpoint checks one PodMonitor endpoint against a workload it
// selects.
func (s *Set) checkEndpoint(p problems, where string, e monitoringv1.PodMetricsEndpoint, w *Document, spec *corev1.PodSpec) {
	if e.Port == nil || *e.Port == "" {
		p.add("%s: name the port (port: metrics): a port number or targetPort scrapes whatever listens there", where)
		return
	}
	if e.Path != "" && e.Path != "/metrics" {
		p.add("%s: path %q: the daemon serves /metrics", where, e.Path)
	}
	if e.Scheme != nil && !strings.EqualFold(string(*e.Scheme), "http") {
		p.add("%s: scheme %s: the daemon serves plain HTTP", where, *e.Scheme)
	}
	found := false
	for _, c := range spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name != *e.Port {
				continue
			}
			found = true
			addr, ok := s.metricsAddr[metricsKey(w, c.Name)]
			if !ok {
				continue // not the daemon, or its command line is reported already
			}
			if host, _, err := net.SplitHostPort(addr); err == nil && isLoopback(host) {
				p.add("%s scrapes %s container %q, whose metrics listen on %s only: Prometheus scrapes the pod IP (listen on :%d)", where, w, c.Name, addr, cp.ContainerPort)
			}
		}
	}
	if !found {
		p.add("%s: port %q: no container of %s declares it", where, *e.Port, w)
	}
}
