package identity

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Container is what a process's cgroup says about its container.
type Container struct {
	// ID is the container's full ID (64 hex digits); "" when the process
	// is in no recognised container.
	ID string
	// PodUID is the Kubernetes pod's UID with dashes; "" when the
	// container is not a pod's.
	PodUID string
	// Runtime is containerd, crio or docker when the layout names it.
	Runtime string
}

// ErrNamespacedCgroup reports cgroup paths relative to the daemon's own
// cgroup namespace ("/../.."): they cannot be tied to a pod safely, so the
// daemon must run in the host cgroup namespace to identify containers.
var ErrNamespacedCgroup = errors.New("cgroup paths are relative to the daemon's cgroup namespace; run the daemon in the host cgroup namespace to identify containers")

var (
	hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// podUID is a pod UID as it appears in a cgroup name: a UUID (dashes
	// or, in systemd slice names, underscores) or, for static pods, 32
	// hex digits.
	podUID = regexp.MustCompile(`^(?:[0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12}|[0-9a-f]{32})$`)
	// scope is a systemd container scope: cri-containerd-<id>.scope,
	// crio-<id>.scope or docker-<id>.scope. crio-conmon-<id>.scope (the
	// monitor, not the container) does not match.
	scope = regexp.MustCompile(`^(cri-containerd|crio|docker)-([0-9a-f]{64})\.scope$`)
	// cgroupfsContainer is a container's cgroup under a cgroupfs pod:
	// <id> (containerd, cri-dockerd) or crio-<id>.
	cgroupfsContainer = regexp.MustCompile(`^(?:(crio)-)?([0-9a-f]{64})$`)
)

// runtimes maps a layout's prefix to the runtime name Container reports.
var runtimes = map[string]string{"cri-containerd": "containerd", "crio": "crio", "docker": "docker"}

// DefaultCgroupRoot is kubelet's default --cgroup-root: with its QoS
// cgroups (the default --cgroups-per-qos), kubelet puts pods below "/"
// when the flag is left empty, so their cgroups are /kubepods/... under
// cgroupfs and /kubepods.slice/... under systemd.
const DefaultCgroupRoot = "/"

// cgroupRootElem is an element of a kubelet cgroup root: a plain name, or
// one written as a systemd slice (name.slice). A "-" would be a level of
// the systemd hierarchy, so it is not allowed within a name.
var cgroupRootElem = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.]*$`)

// CgroupRootElems checks a kubelet --cgroup-root ("" or "/" for kubelet's
// default, or /name[/name...]) and returns its elements as plain names
// (a trailing .slice dropped): "/kubelet" and "/kubelet.slice" both give
// [kubelet].
func CgroupRootElems(root string) ([]string, error) {
	if root == "" || root == "/" {
		return nil, nil
	}
	if !strings.HasPrefix(root, "/") {
		return nil, fmt.Errorf("cgroup root %q is not an absolute cgroup path", root)
	}
	var elems []string
	for e := range strings.SplitSeq(strings.Trim(root, "/"), "/") {
		name := strings.TrimSuffix(e, ".slice")
		if !cgroupRootElem.MatchString(name) || name == "docker" || name == "kubepods" || strings.HasSuffix(name, ".scope") || strings.HasSuffix(name, ".service") {
			return nil, fmt.Errorf("cgroup root %q: %q is not a plain cgroup name (letters, digits, '_' and '.'; not docker, kubepods, a scope or a service)", root, e)
		}
		elems = append(elems, name)
	}
	return elems, nil
}

// ParseCgroup reads a /proc/<pid>/cgroup file (cgroup v1, v2 or hybrid)
// and returns the container it places the process in, for pods below the
// kubelet cgroup root cgroupRoot (its --cgroup-root; "" is
// DefaultCgroupRoot). A process in no recognised container gets a zero
// Container and no error.
//
// Recognised layouts, each anchored at the cgroup root and at kubelet's
// configured cgroup root, so that a process that may create cgroups of
// its own (a delegated systemd subtree, an unprivileged LXC container, a
// container with a writable cgroup) cannot forge another pod's path
// below its own:
//
//   - cgroupfs driver: <root>/kubepods[/burstable|/besteffort]/pod<uid>/<id>,
//     with <id> or crio-<id> as the container (/kubepods/... under the
//     default root, /kube/kubepods/... under --cgroup-root=/kube);
//   - kind on cgroup v1: either of these below the node container's
//     /docker/<node-id>/ (/docker/<node-id>/kubelet/kubepods/... under
//     kind's --cgroup-root=/kubelet);
//   - systemd driver: the slices systemd makes for the root and
//     kubepods, from the cgroup root down (kubepods.slice under the
//     default root, kubelet.slice/kubelet-kubepods.slice under
//     --cgroup-root=/kubelet), then an optional QoS slice
//     (…-kubepods-burstable.slice), the pod slice
//     …-pod<uid_with_underscores>.slice, and the container scope
//     cri-containerd-<id>.scope, crio-<id>.scope or docker-<id>.scope;
//   - plain Docker: /docker/<id> and /system.slice/docker-<id>.scope.
//
// Anything below the container's own cgroup (a runtime's "container"
// sub-cgroup, cgroups the container made) is ignored. When several lines
// name a container they must agree, or the result is an error: an
// ambiguous identity is no identity.
func ParseCgroup(data []byte, cgroupRoot string) (Container, error) {
	root, err := CgroupRootElems(cgroupRoot)
	if err != nil {
		return Container{}, err
	}
	var found Container
	lines := 0
	namespaced := false
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		// hierarchy-ID:controller-list:cgroup-path; the path may itself
		// contain colons.
		parts := strings.SplitN(string(line), ":", 3)
		if len(parts) != 3 || !strings.HasPrefix(parts[2], "/") {
			return Container{}, fmt.Errorf("malformed cgroup line %q", line)
		}
		lines++
		path := parts[2]
		if path == "/.." || strings.HasPrefix(path, "/../") {
			namespaced = true
			continue
		}
		c := parseCgroupPath(strings.Split(strings.Trim(path, "/"), "/"), root)
		if c.ID == "" {
			continue
		}
		if found.ID != "" && found != c {
			return Container{}, fmt.Errorf("cgroup lines disagree: container %s (pod %q) and %s (pod %q)", found.ID, found.PodUID, c.ID, c.PodUID)
		}
		found = c
	}
	if lines == 0 {
		return Container{}, errors.New("no cgroup lines")
	}
	if found.ID == "" && namespaced {
		return Container{}, ErrNamespacedCgroup
	}
	return found, nil
}

// parseCgroupPath recognises the elements of one cgroup path below the
// kubelet cgroup root elements root; see ParseCgroup.
func parseCgroupPath(segs, root []string) Container {
	if len(segs) < 2 {
		return Container{}
	}
	n := len(root)
	switch {
	case len(segs) > n+1 && slices.Equal(segs[:n], root) && segs[n] == "kubepods":
		return parseCgroupfs(segs[n+1:])
	case segs[0] == "docker":
		if !hex64.MatchString(segs[1]) {
			break
		}
		// kind on cgroup v1: the node is a Docker container and its
		// pods' cgroups lie below it (/docker/<node>/kubelet/kubepods/
		// ...). Creating cgroups there takes a privileged container,
		// which is root on the node anyway.
		if len(segs) > 2 {
			if c := parseCgroupPath(segs[2:], root); c.PodUID != "" {
				return c
			}
		}
		return Container{ID: segs[1], Runtime: "docker"}
	case segs[0] == "system.slice":
		if m := scope.FindStringSubmatch(segs[1]); m != nil && m[1] == "docker" {
			return Container{ID: m[2], Runtime: "docker"}
		}
	case strings.HasSuffix(segs[0], ".slice"):
		return parseSystemd(segs, root)
	}
	return Container{}
}

// parseCgroupfs reads what follows /kubepods: an optional QoS class, the
// pod, the container.
func parseCgroupfs(segs []string) Container {
	if segs[0] == "burstable" || segs[0] == "besteffort" {
		segs = segs[1:]
	}
	if len(segs) < 2 {
		return Container{}
	}
	uid, ok := strings.CutPrefix(segs[0], "pod")
	if !ok || !podUID.MatchString(uid) || strings.Contains(uid, "_") {
		return Container{}
	}
	m := cgroupfsContainer.FindStringSubmatch(segs[1])
	if m == nil {
		return Container{}
	}
	return Container{ID: m[2], PodUID: uid, Runtime: m[1]}
}

// parseSystemd reads the systemd driver's layout below the kubelet
// cgroup root elements root: the slices systemd names after their
// parents (a-b.slice lives in a.slice) from the root down to kubepods,
// an optional QoS slice, the pod slice and the container scope. Only
// these exact names are accepted: a slice chain made elsewhere (a
// delegated subtree) does not begin at the cgroup root.
func parseSystemd(segs, root []string) Container {
	stem := ""
	for i, name := range append(slices.Clip(root), "kubepods") {
		if stem != "" {
			stem += "-"
		}
		stem += name
		if i >= len(segs) || segs[i] != stem+".slice" {
			return Container{}
		}
	}
	rest := segs[len(root)+1:]
	if len(rest) > 0 && (rest[0] == stem+"-burstable.slice" || rest[0] == stem+"-besteffort.slice") {
		stem = strings.TrimSuffix(rest[0], ".slice")
		rest = rest[1:]
	}
	if len(rest) < 2 {
		return Container{}
	}
	uid, ok := strings.CutPrefix(rest[0], stem+"-pod")
	if !ok {
		return Container{}
	}
	uid, ok = strings.CutSuffix(uid, ".slice")
	if !ok || !podUID.MatchString(uid) || strings.Contains(uid, "-") {
		return Container{}
	}
	m := scope.FindStringSubmatch(rest[1])
	if m == nil {
		return Container{}
	}
	return Container{ID: m[2], PodUID: strings.ReplaceAll(uid, "_", "-"), Runtime: runtimes[m[1]]}
}
