package identity

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
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

// ParseCgroup reads a /proc/<pid>/cgroup file (cgroup v1, v2 or hybrid)
// and returns the container it places the process in. A process in no
// recognised container gets a zero Container and no error.
//
// Recognised layouts, each anchored at the cgroup root so that a process
// that may create cgroups of its own (a delegated systemd subtree, a
// container with a writable cgroup) cannot forge another pod's path below
// its own:
//
//   - cgroupfs driver: /kubepods[/burstable|/besteffort]/pod<uid>/<id>, with
//     <id> or crio-<id> as the container, also below a kubelet
//     --cgroup-root of one plain top-level name (/kube/kubepods/...; not a
//     systemd unit's, whose subtrees may be delegated to users);
//   - kind on cgroup v1: any of these below the node container's
//     /docker/<node-id>/ (/docker/<node-id>/kubelet/kubepods/...);
//   - systemd driver: a chain of slices from the root down to
//     ...-pod<uid_with_underscores>.slice, each slice named after its parent
//     as systemd requires (kubepods.slice/kubepods-burstable.slice/
//     kubepods-burstable-pod<uid>.slice, also under a custom root slice such
//     as kubelet.slice/kubelet-kubepods.slice), then the container scope
//     cri-containerd-<id>.scope, crio-<id>.scope or docker-<id>.scope;
//   - plain Docker: /docker/<id> and /system.slice/docker-<id>.scope.
//
// Anything below the container's own cgroup (a runtime's "container"
// sub-cgroup, cgroups the container made) is ignored. When several lines
// name a container they must agree, or the result is an error: an
// ambiguous identity is no identity.
func ParseCgroup(data []byte) (Container, error) {
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
		c := parseCgroupPath(path)
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

// parseCgroupPath recognises one cgroup path; see ParseCgroup.
func parseCgroupPath(path string) Container {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) < 2 {
		return Container{}
	}
	switch {
	case segs[0] == "kubepods":
		return parseCgroupfs(segs[1:])
	case segs[1] == "kubepods" && cgroupRoot(segs[0]):
		// kubelet --cgroup-root=/<name> under cgroupfs.
		return parseCgroupfs(segs[2:])
	case segs[0] == "docker":
		if !hex64.MatchString(segs[1]) {
			break
		}
		// kind on cgroup v1: the node is a Docker container and its
		// pods' cgroups lie below it (/docker/<node>/kubelet/kubepods/
		// ...). Creating cgroups there takes a privileged container,
		// which is root on the node anyway.
		if len(segs) > 2 {
			if c := parseCgroupPath("/" + strings.Join(segs[2:], "/")); c.PodUID != "" {
				return c
			}
		}
		return Container{ID: segs[1], Runtime: "docker"}
	case segs[0] == "system.slice":
		if m := scope.FindStringSubmatch(segs[1]); m != nil && m[1] == "docker" {
			return Container{ID: m[2], Runtime: "docker"}
		}
	case strings.HasSuffix(segs[0], ".slice"):
		return parseSystemd(segs)
	}
	return Container{}
}

// cgroupRoot tells whether a top-level cgroup name can be a kubelet's
// --cgroup-root under cgroupfs: a plain name, not a systemd unit (whose
// subtrees systemd may delegate to users) nor docker (containers).
func cgroupRoot(name string) bool {
	return name != "docker" && name != "kubepods" && !strings.HasSuffix(name, ".slice") &&
		!strings.HasSuffix(name, ".scope") && !strings.HasSuffix(name, ".service")
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

// parseSystemd reads a systemd slice chain ending in a pod slice and the
// container scope under it.
func parseSystemd(segs []string) Container {
	parent := ""
	for i, s := range segs {
		stem, ok := strings.CutSuffix(s, ".slice")
		if !ok {
			return Container{}
		}
		// systemd names a slice after its parent: a-b.slice lives in
		// a.slice, which lives in the root. Anything else is not a slice
		// systemd made, and may be a forgery in a delegated subtree.
		if parent == "" {
			if stem == "" || strings.Contains(stem, "-") {
				return Container{}
			}
		} else {
			rest, ok := strings.CutPrefix(stem, parent+"-")
			if !ok || rest == "" || strings.Contains(rest, "-") {
				return Container{}
			}
		}
		parent = stem
		uid, isPod := podSlice(stem)
		if !isPod {
			continue
		}
		if i+1 >= len(segs) {
			return Container{}
		}
		m := scope.FindStringSubmatch(segs[i+1])
		if m == nil {
			return Container{}
		}
		return Container{ID: m[2], PodUID: uid, Runtime: runtimes[m[1]]}
	}
	return Container{}
}

// podSlice tells whether a slice stem is a pod's (…kubepods-pod<uid> or
// …kubepods-<qos>-pod<uid>) and returns the UID with dashes.
func podSlice(stem string) (string, bool) {
	i := strings.LastIndex(stem, "-pod")
	if i < 0 {
		return "", false
	}
	parent, uid := stem[:i], stem[i+len("-pod"):]
	parent = strings.TrimSuffix(strings.TrimSuffix(parent, "-burstable"), "-besteffort")
	if parent != "kubepods" && !strings.HasSuffix(parent, "-kubepods") {
		return "", false
	}
	if !podUID.MatchString(uid) || strings.Contains(uid, "-") {
		return "", false
	}
	return strings.ReplaceAll(uid, "_", "-"), true
}
