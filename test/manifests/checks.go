package manifests

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The endpoints csi-node-proxy serves, as node plugins mount them.
const (
	// PipePrefix starts every Windows endpoint (lower case).
	PipePrefix = `\\.\pipe\csi-proxy-`
	// SocketDir holds the Linux endpoints.
	SocketDir = "/run/csi-node-proxy"
	// AdmissionConfigMap is the admission policy's parameter ConfigMap
	// (deploy/admission), namespace/name.
	AdmissionConfigMap = "kube-system/csi-node-proxy-admission"
)

// clusterScoped are the kinds without a namespace that may appear here.
var clusterScoped = map[string]bool{
	"Namespace": true, "ClusterRole": true, "ClusterRoleBinding": true, "PriorityClass": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
	"MutatingAdmissionPolicy": true, "MutatingAdmissionPolicyBinding": true,
	"ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true,
	"CSIDriver": true, "StorageClass": true, "RuntimeClass": true, "PersistentVolume": true,
}

// builtinPriorityClasses exist in every cluster.
var builtinPriorityClasses = map[string]bool{"system-node-critical": true, "system-cluster-critical": true}

// validHostPathTypes are the values the API server accepts for
// hostPath.type ("" is "no check").
var validHostPathTypes = map[corev1.HostPathType]bool{
	corev1.HostPathUnset: true, corev1.HostPathDirectoryOrCreate: true, corev1.HostPathDirectory: true,
	corev1.HostPathFileOrCreate: true, corev1.HostPathFile: true, corev1.HostPathSocket: true,
	corev1.HostPathCharDev: true, corev1.HostPathBlockDev: true,
}

// hostProcessUsers are the built-in accounts a HostProcess container may run
// as; anything without a backslash is taken as a local group name.
var hostProcessUsers = []string{`NT AUTHORITY\SYSTEM`, `NT AUTHORITY\Local service`, `NT AUTHORITY\NetworkService`}

// Set is every document of the manifests under test, for checks that look
// across documents.
type Set struct {
	Docs   []*Document
	Daemon *Daemon
	// AdmissionGaps are ServiceAccounts (namespace/name) that mount the
	// endpoints although the admission ConfigMap does not list them yet:
	// reported, not failed, until the ConfigMap lists them; then listing
	// them here is an error.
	AdmissionGaps map[string]string
	// Notes collects what the checks report without failing.
	Notes []string
	// ImageRepository is the repository every container running the
	// daemon must take its image from; "" means DefaultImageRepository.
	ImageRepository string

	// metricsAddr is each daemon container's --metrics-bind-address, by
	// metricsKey, for the PodMonitor checks.
	metricsAddr map[string]string
}

// problems collects errors for one document.
type problems struct {
	doc  *Document
	errs *[]error
}

func (p problems) add(format string, args ...any) {
	*p.errs = append(*p.errs, fmt.Errorf("%s: %s", p.doc, fmt.Sprintf(format, args...)))
}

// Check runs the semantic checks on every decoded document and across
// them.
func (s *Set) Check() []error {
	var errs []error
	type key struct{ gvk, ns, name string }
	seen := map[key]*Document{}
	for _, d := range s.Docs {
		if d.Object == nil {
			continue // its decoding error is reported already
		}
		p := problems{d, &errs}
		meta, ok := d.Object.(metav1.Object)
		if !ok {
			p.add("not an object with metadata")
			continue
		}
		s.checkMeta(p, meta)
		k := key{d.GVK.String(), meta.GetNamespace(), meta.GetName()}
		if prev := seen[k]; prev != nil && !equality.Semantic.DeepEqual(prev.Object, d.Object) {
			p.add("differs from the same object in %s: applying both would flip it back and forth", prev)
		}
		seen[k] = d
		if tmpl, sel := podTemplate(d.Object); tmpl != nil {
			s.checkWorkload(p, meta, tmpl, sel)
		}
		if b, ok := d.Object.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding); ok {
			s.checkBinding(p, b)
		}
	}
	errs = append(errs, s.checkSelectorOverlap()...)
	errs = append(errs, s.checkAdmission()...)
	errs = append(errs, s.checkPodMonitors()...)
	return errs
}

// checkMeta checks names, namespaces and labels as the API server would.
func (s *Set) checkMeta(p problems, meta metav1.Object) {
	if meta.GetName() == "" {
		p.add("metadata.name is missing")
	} else if msgs := validation.IsDNS1123Subdomain(meta.GetName()); len(msgs) > 0 {
		p.add("metadata.name %q: %s", meta.GetName(), strings.Join(msgs, "; "))
	}
	if clusterScoped[p.doc.GVK.Kind] {
		if meta.GetNamespace() != "" {
			p.add("%s is cluster-scoped but has metadata.namespace", p.doc.GVK.Kind)
		}
	} else if meta.GetNamespace() == "" {
		p.add("metadata.namespace is missing: kubectl apply would put it in whatever namespace is current")
	}
	for _, e := range metav1validation.ValidateLabels(meta.GetLabels(), field.NewPath("metadata", "labels")) {
		p.add("%v", e)
	}
}

// podTemplate returns the pod template of a workload, with its selector
// (nil for a bare Pod), or nil for anything else.
func podTemplate(obj runtime.Object) (*corev1.PodTemplateSpec, *metav1.LabelSelector) {
	switch o := obj.(type) {
	case *appsv1.DaemonSet:
		return &o.Spec.Template, selectorOrEmpty(o.Spec.Selector)
	case *appsv1.Deployment:
		return &o.Spec.Template, selectorOrEmpty(o.Spec.Selector)
	case *appsv1.StatefulSet:
		return &o.Spec.Template, selectorOrEmpty(o.Spec.Selector)
	case *batchv1.Job:
		return &o.Spec.Template, nil
	case *corev1.Pod:
		return &corev1.PodTemplateSpec{ObjectMeta: o.ObjectMeta, Spec: o.Spec}, nil
	}
	return nil, nil
}

// selectorOrEmpty makes a missing selector an empty one, which the
// workload checks refuse.
func selectorOrEmpty(s *metav1.LabelSelector) *metav1.LabelSelector {
	if s == nil {
		return &metav1.LabelSelector{}
	}
	return s
}

// checkWorkload checks a workload's selector and pod template.
func (s *Set) checkWorkload(p problems, meta metav1.Object, tmpl *corev1.PodTemplateSpec, sel *metav1.LabelSelector) {
	if sel != nil {
		selector, err := metav1.LabelSelectorAsSelector(sel)
		switch {
		case err != nil:
			p.add("spec.selector: %v", err)
		case selector.Empty():
			p.add("spec.selector is empty: the API server requires one that selects the template's labels")
		case !selector.Matches(labels.Set(tmpl.Labels)):
			p.add("spec.selector %s does not match the template's labels %v", selector, tmpl.Labels)
		}
		for _, e := range metav1validation.ValidateLabels(tmpl.Labels, field.NewPath("spec", "template", "metadata", "labels")) {
			p.add("%v", e)
		}
	}
	if ds, ok := p.doc.Object.(*appsv1.DaemonSet); ok {
		switch ds.Spec.UpdateStrategy.Type {
		case "", appsv1.RollingUpdateDaemonSetStrategyType, appsv1.OnDeleteDaemonSetStrategyType:
		default:
			p.add("spec.updateStrategy.type %q: want RollingUpdate or OnDelete", ds.Spec.UpdateStrategy.Type)
		}
	}
	s.checkPod(p, meta.GetNamespace(), &tmpl.Spec)
}

// checkPod checks a pod spec.
func (s *Set) checkPod(p problems, namespace string, spec *corev1.PodSpec) {
	nodeOS := spec.NodeSelector[corev1.LabelOSStable]
	if nodeOS != "linux" && nodeOS != "windows" {
		p.add("nodeSelector %s is %q: in a cluster with Linux and Windows nodes every pod here must choose (linux or windows)", corev1.LabelOSStable, nodeOS)
	}
	switch {
	case spec.OS == nil:
		p.add("spec.os.name is not set: set it to %q, so the API server refuses fields that mean nothing there and the kubelet refuses the pod elsewhere", nodeOS)
	case string(spec.OS.Name) != nodeOS:
		p.add("spec.os.name %q but nodeSelector %s %q", spec.OS.Name, corev1.LabelOSStable, nodeOS)
	}
	if sa := spec.ServiceAccountName; sa != "" && sa != "default" && !s.has("ServiceAccount", namespace, sa) {
		p.add("serviceAccountName %q: no ServiceAccount %s/%s among the manifests", sa, namespace, sa)
	}
	if pc := spec.PriorityClassName; pc != "" && !builtinPriorityClasses[pc] && !s.has("PriorityClass", "", pc) {
		p.add("priorityClassName %q is neither built in nor among the manifests", pc)
	}

	volumes := map[string]*corev1.Volume{}
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if msgs := validation.IsDNS1123Label(v.Name); len(msgs) > 0 {
			p.add("volume %q: %s", v.Name, strings.Join(msgs, "; "))
		}
		if volumes[v.Name] != nil {
			p.add("volume %q defined twice", v.Name)
		}
		volumes[v.Name] = v
		if hp := v.HostPath; hp != nil {
			s.checkHostPath(p, v.Name, hp, nodeOS)
		}
	}

	hostProcess := isHostProcess(spec)
	if hostProcess {
		s.checkHostProcess(p, spec, nodeOS)
	}
	if nodeOS == "windows" {
		checkNoLinuxFields(p, spec)
	}
	if nodeOS == "linux" {
		checkNoWindowsFields(p, spec)
	}

	all := append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
	if len(spec.Containers) == 0 {
		p.add("no containers")
	}
	names := map[string]bool{}
	for i := range all {
		c := &all[i]
		cp := fmt.Sprintf("container %q", c.Name)
		if msgs := validation.IsDNS1123Label(c.Name); len(msgs) > 0 {
			p.add("%s: name: %s", cp, strings.Join(msgs, "; "))
		}
		if names[c.Name] {
			p.add("%s defined twice", cp)
		}
		names[c.Name] = true
		if c.Image == "" {
			p.add("%s has no image", cp)
		} else if strings.TrimSpace(c.Image) != c.Image || strings.ContainsAny(c.Image, " \t\n") {
			p.add("%s: image %q contains white space", cp, c.Image)
		}
		privileged := c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged
		for _, m := range c.VolumeMounts {
			v := volumes[m.Name]
			if v == nil {
				p.add("%s mounts volume %q, which the pod does not define", cp, m.Name)
				continue
			}
			if m.MountPropagation != nil {
				switch *m.MountPropagation {
				case corev1.MountPropagationNone, corev1.MountPropagationHostToContainer:
				case corev1.MountPropagationBidirectional:
					if !privileged {
						p.add("%s mounts %q with Bidirectional propagation but is not privileged: the API server refuses that", cp, m.Name)
					}
				default:
					p.add("%s: mountPropagation %q of %q: want None, HostToContainer or Bidirectional", cp, *m.MountPropagation, m.Name)
				}
			}
			if isPipe(v) && m.MountPath != v.HostPath.Path && !strings.EqualFold(m.MountPath, v.HostPath.Path) {
				p.add("%s mounts pipe %s at %s: a pipe is reached by its own name, mount it at the same path", cp, v.HostPath.Path, m.MountPath)
			}
		}
		if spec.HostNetwork {
			for _, port := range c.Ports {
				if port.HostPort != 0 && port.HostPort != port.ContainerPort {
					p.add("%s: port %q: hostPort %d differs from containerPort %d: with the host network the API server requires them equal", cp, port.Name, port.HostPort, port.ContainerPort)
				}
			}
		}
		if isDaemon(c) {
			s.checkImage(p, cp, c)
			s.checkDaemon(p, cp, c, spec, nodeOS)
		}
	}
}

// has reports whether an object of kind with that namespace and name is
// among the manifests.
func (s *Set) has(kind, namespace, name string) bool {
	for _, d := range s.Docs {
		if m, ok := d.Object.(metav1.Object); ok && d.GVK.Kind == kind && m.GetNamespace() == namespace && m.GetName() == name {
			return true
		}
	}
	return false
}

// isPipe reports whether v is a hostPath volume of a csi-node-proxy pipe.
func isPipe(v *corev1.Volume) bool {
	return v.HostPath != nil && strings.HasPrefix(strings.ToLower(strings.ReplaceAll(v.HostPath.Path, "/", `\`)), PipePrefix)
}

// checkHostPath checks a hostPath volume: its type, and for the proxy's
// endpoints, that they are what the daemon serves and mounted as they
// must be.
func (s *Set) checkHostPath(p problems, name string, hp *corev1.HostPathVolumeSource, nodeOS string) {
	typ := corev1.HostPathUnset
	if hp.Type != nil {
		typ = *hp.Type
	}
	if !validHostPathTypes[typ] {
		p.add("volume %q: hostPath type %q: want one of \"\", DirectoryOrCreate, Directory, FileOrCreate, File, Socket, CharDevice, BlockDevice", name, typ)
	}
	if hp.Path == "" {
		p.add("volume %q: hostPath has no path", name)
	}
	windowsPath := strings.ToLower(strings.ReplaceAll(hp.Path, "/", `\`))
	switch {
	case strings.HasPrefix(windowsPath, PipePrefix):
		api := strings.TrimPrefix(windowsPath, PipePrefix)
		if s.Daemon != nil && !s.Daemon.APIs[api] {
			p.add("volume %q: pipe %s: the daemon serves no API %q", name, hp.Path, api)
		}
		if typ != corev1.HostPathUnset {
			p.add("volume %q: pipe %s: hostPath type must be \"\" (kubelet checks no type of a named pipe)", name, hp.Path)
		}
		if nodeOS != "windows" {
			p.add("volume %q: pipe %s on a pod for %q nodes", name, hp.Path, nodeOS)
		}
	case strings.HasPrefix(windowsPath, `\\.\pipe\`):
		// Another program's pipe.
	case path.Clean(hp.Path) == SocketDir:
		if typ != corev1.HostPathDirectory && typ != corev1.HostPathDirectoryOrCreate {
			p.add("volume %q: %s: hostPath type must be Directory or DirectoryOrCreate", name, hp.Path)
		}
		if nodeOS != "linux" {
			p.add("volume %q: %s on a pod for %q nodes", name, hp.Path, nodeOS)
		}
	case strings.HasPrefix(path.Clean(hp.Path), SocketDir+"/"):
		p.add("volume %q: %s: mount the directory %s, not a socket in it: a restarted daemon re-creates its sockets, and a bind-mounted socket would be the old one", name, hp.Path, SocketDir)
	}
}

// isHostProcess reports whether the pod, or any container, asks for
// HostProcess.
func isHostProcess(spec *corev1.PodSpec) bool {
	if sc := spec.SecurityContext; sc != nil && sc.WindowsOptions != nil && sc.WindowsOptions.HostProcess != nil && *sc.WindowsOptions.HostProcess {
		return true
	}
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		if sc := c.SecurityContext; sc != nil && sc.WindowsOptions != nil && sc.WindowsOptions.HostProcess != nil && *sc.WindowsOptions.HostProcess {
			return true
		}
	}
	return false
}

// checkHostProcess applies the rules of HostProcess pods (KEP-1981, and
// the API server's validation of them).
func (s *Set) checkHostProcess(p problems, spec *corev1.PodSpec, nodeOS string) {
	if !spec.HostNetwork {
		p.add("HostProcess pod without hostNetwork: true: the API server refuses it")
	}
	if nodeOS != "windows" {
		p.add("HostProcess pod for %q nodes", nodeOS)
	}
	var podHP *bool
	var podUser *string
	if sc := spec.SecurityContext; sc != nil && sc.WindowsOptions != nil {
		podHP, podUser = sc.WindowsOptions.HostProcess, sc.WindowsOptions.RunAsUserName
	}
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		hp, user := podHP, podUser
		if sc := c.SecurityContext; sc != nil && sc.WindowsOptions != nil {
			if sc.WindowsOptions.HostProcess != nil {
				hp = sc.WindowsOptions.HostProcess
			}
			if sc.WindowsOptions.RunAsUserName != nil {
				user = sc.WindowsOptions.RunAsUserName
			}
		}
		if hp == nil || !*hp {
			p.add("container %q is not HostProcess in a HostProcess pod: all containers of such a pod must be", c.Name)
		}
		switch {
		case user == nil || *user == "":
			p.add("container %q: a HostProcess container needs runAsUserName (e.g. NT AUTHORITY\\SYSTEM)", c.Name)
		case strings.Contains(*user, `\`) && !slices.ContainsFunc(hostProcessUsers, func(u string) bool { return strings.EqualFold(u, *user) }):
			p.add("container %q: runAsUserName %q: a HostProcess container runs as one of %q or a local group", c.Name, *user, hostProcessUsers)
		}
	}
	for _, v := range spec.Volumes {
		if isPipe(&v) {
			p.add("volume %q: a HostProcess pod cannot mount named pipes (and needs none: it opens %s by name)", v.Name, v.HostPath.Path)
		}
	}
}

// checkNoLinuxFields refuses fields that mean nothing on Windows (the API
// server refuses them when spec.os.name is windows).
func checkNoLinuxFields(p problems, spec *corev1.PodSpec) {
	if sc := spec.SecurityContext; sc != nil {
		if sc.RunAsUser != nil || sc.RunAsGroup != nil || sc.FSGroup != nil || sc.SeccompProfile != nil || sc.SELinuxOptions != nil || len(sc.Sysctls) > 0 || len(sc.SupplementalGroups) > 0 || sc.AppArmorProfile != nil {
			p.add("pod securityContext sets Linux-only fields on a Windows pod")
		}
	}
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		if sc := c.SecurityContext; sc != nil {
			if sc.Privileged != nil || sc.Capabilities != nil || sc.RunAsUser != nil || sc.RunAsGroup != nil || sc.SeccompProfile != nil || sc.SELinuxOptions != nil || sc.ReadOnlyRootFilesystem != nil || sc.AllowPrivilegeEscalation != nil || sc.ProcMount != nil || sc.AppArmorProfile != nil {
				p.add("container %q sets Linux-only securityContext fields on a Windows pod", c.Name)
			}
		}
	}
}

// checkNoWindowsFields refuses windowsOptions on Linux pods.
func checkNoWindowsFields(p problems, spec *corev1.PodSpec) {
	if sc := spec.SecurityContext; sc != nil && sc.WindowsOptions != nil {
		p.add("pod securityContext.windowsOptions on a Linux pod")
	}
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		if sc := c.SecurityContext; sc != nil && sc.WindowsOptions != nil {
			p.add("container %q: securityContext.windowsOptions on a Linux pod", c.Name)
		}
	}
}

// isDaemon reports whether c runs csi-node-proxy: its command is the
// binary, or it has no command and its image is csi-node-proxy's.
func isDaemon(c *corev1.Container) bool {
	if len(c.Command) > 0 {
		return isDaemonBinary(c.Command[0])
	}
	repo, _, _ := strings.Cut(c.Image, ":")
	return path.Base(repo) == "csi-node-proxy"
}

// isDaemonBinary reports whether a program path names csi-node-proxy.
func isDaemonBinary(prog string) bool {
	base := prog[strings.LastIndexAny(prog, `/\`)+1:]
	return base == "csi-node-proxy" || strings.EqualFold(base, "csi-node-proxy.exe")
}

// envRef is a $(VAR) reference that kubelet expands in command and args.
var envRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)`)

// checkDaemon checks a csi-node-proxy container's command line against the
// daemon and the pod it runs in.
func (s *Set) checkDaemon(p problems, cp string, c *corev1.Container, spec *corev1.PodSpec, nodeOS string) {
	if s.Daemon == nil {
		return
	}
	var args []string
	if len(c.Command) > 0 {
		args = append(args, c.Command[1:]...)
	}
	args = append(args, c.Args...)
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		} else {
			env[e.Name] = "x" // known only at run time
		}
	}
	for i, a := range args {
		args[i] = envRef.ReplaceAllStringFunc(a, func(ref string) string {
			if v, ok := env[envRef.FindStringSubmatch(ref)[1]]; ok {
				return v
			}
			return ref // kubelet leaves unknown references as they are
		})
	}
	// The audit records' "node" field: one log shipped off many nodes
	// must still say where each call ran.
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
		return e.Name == "NODE_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName"
	}) {
		p.add("%s: no NODE_NAME from fieldRef spec.nodeName: audit records would not name their node", cp)
	}
	values, err := s.Daemon.Check(args)
	if err != nil {
		p.add("%s: %v", cp, err)
		return
	}
	checkDaemonValues(func(format string, a ...any) { p.add(cp+": "+format, a...) }, values, nodeOS)
	s.checkObservability(p, cp, c, spec, values)

	if nodeOS == "linux" {
		// The sockets must land on the host, at the path node plugins
		// mount: socket-dir must be a hostPath volume mounted at the same
		// path.
		dir, ok := values.Last("socket-dir")
		if !ok {
			dir = SocketDir
		}
		found := false
		for _, m := range c.VolumeMounts {
			for _, v := range spec.Volumes {
				if v.Name == m.Name && v.HostPath != nil && path.Clean(m.MountPath) == path.Clean(dir) && path.Clean(v.HostPath.Path) == path.Clean(dir) {
					found = true
				}
			}
		}
		if !found {
			p.add("%s: its sockets (--socket-dir %s) are not in a hostPath volume mounted at the same path, so node plugins could not reach them", cp, dir)
		}
		checkRuntimeMount(func(format string, a ...any) { p.add(cp+": "+format, a...) }, values, c, spec)
	}
}

// checkRuntimeMount: the container runtime's socket (--cri-endpoint) must
// reach the daemon through a hostPath mount of its directory, never of
// the socket file. The runtime makes a new socket each time it starts; a
// file bind mount keeps the old inode, so after a runtime restart the
// daemon could not ask it again until its pod restarted (issue #23).
func checkRuntimeMount(add func(string, ...any), values Values, c *corev1.Container, spec *corev1.PodSpec) {
	endpoint, ok := values.Last("cri-endpoint")
	if !ok || endpoint == "" {
		return
	}
	sock := strings.TrimPrefix(endpoint, "unix://")
	for _, m := range c.VolumeMounts {
		mp := path.Clean(m.MountPath)
		if mp != sock && !strings.HasPrefix(sock, mp+"/") {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name != m.Name || v.HostPath == nil {
				continue
			}
			if mp == sock || (v.HostPath.Type != nil && *v.HostPath.Type == corev1.HostPathSocket) {
				add("--cri-endpoint %s is mounted as a file (volume %q): mount its directory, which a restarted runtime's new socket shows through", endpoint, v.Name)
			} else if path.Clean(v.HostPath.Path) != mp {
				add("--cri-endpoint %s: volume %q mounts host %s at %s; mount the runtime's directory at the same path", endpoint, v.Name, v.HostPath.Path, mp)
			}
			return
		}
	}
	add("--cri-endpoint %s is not in any hostPath mount: the daemon could not reach the runtime", endpoint)
}

// checkDaemonValues checks flag values that depend on where the daemon
// runs, for containers and systemd units alike.
func checkDaemonValues(add func(string, ...any), values Values, nodeOS string) {
	host, ok := values.Last("host")
	if !ok {
		add("give --host=%s explicitly: its default depends on the OS the binary was built for", nodeOS)
	} else if host != nodeOS {
		add("--host=%s on a %s node", host, nodeOS)
	}
	// Secure by default (issue 16): without --policy every caller that
	// can open an endpoint may call everything, and without --audit-log
	// nothing records what was done to the node.
	if _, ok := values.Last("policy"); !ok {
		add("no --policy: every caller that can open an endpoint could call everything; ship a policy that admits only the callers an operator names (deploy/%s/policy.yaml)", nodeOS)
	}
	if _, ok := values.Last("audit-log"); !ok {
		add("no --audit-log: nothing would record the calls that change the node")
	}
	kubelet, ok := values.Last("kubelet-path")
	switch nodeOS {
	case "linux":
		if !ok {
			add(`--kubelet-path is required on Linux: its default is upstream's C:\var\lib\kubelet`)
		} else if !strings.HasPrefix(kubelet, "/") {
			add("--kubelet-path %q is not an absolute POSIX path", kubelet)
		}
		for _, w := range values["working-dir"] {
			if !strings.HasPrefix(w, "/") {
				add("--working-dir %q is not an absolute POSIX path", w)
			}
		}
	case "windows":
		if ok && !regexp.MustCompile(`^[A-Za-z]:\\`).MatchString(kubelet) {
			add(`-kubelet-path %q is not an absolute Windows path such as C:\var\lib\kubelet`, kubelet)
		}
		if _, ok := values.Last("socket-dir"); ok {
			add("--socket-dir means nothing on Windows: endpoints are named pipes")
		}
	}
}
