//go:build linux

package identity

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The inode numbers of the initial PID and cgroup namespaces
// (PROC_PID_INIT_INO and PROC_CGROUP_INIT_INO in the kernel's
// include/linux/proc_ns.h): fixed, so a process can tell whether it runs
// in the host's namespace without looking at any other process.
const (
	hostPIDNamespace    = "pid:[4026531836]"
	hostCgroupNamespace = "cgroup:[4026531835]"
)

// checkVisibility checks the namespaces and procfs the daemon identifies
// callers through:
//   - a PID namespace of its own (a DaemonSet without hostPID): the kernel
//     reports pid 0 for every caller, so only uid and gid remain;
//   - a cgroup namespace of its own: callers' cgroup paths are relative
//     and name no container or pod;
//   - procfs mounted with hidepid: other users' processes are invisible.
func checkVisibility(o Options) []string {
	var problems []string
	root := o.procRoot()
	if ns, err := os.Readlink(filepath.Join(root, "self", "ns", "pid")); err != nil {
		problems = append(problems, fmt.Sprintf("cannot tell the daemon's PID namespace: %v", err))
	} else if ns != hostPIDNamespace {
		problems = append(problems, "the daemon runs in a PID namespace of its own, so the kernel reports pid 0 for callers and their groups, container and pod cannot be learned: run it with the host PID namespace (hostPID: true)")
	}
	if ns, err := os.Readlink(filepath.Join(root, "self", "ns", "cgroup")); err == nil && ns != hostCgroupNamespace {
		problems = append(problems, "the daemon runs in a cgroup namespace of its own, so callers' containers and pods cannot be learned: run it in the host cgroup namespace (a privileged pod under containerd or CRI-O gets it)")
	}
	if mounts, err := os.ReadFile(filepath.Join(root, "self", "mountinfo")); err == nil {
		for line := range strings.SplitSeq(string(mounts), "\n") {
			f := strings.Fields(line)
			if len(f) > 4 && f[4] == root && strings.Contains(line, "hidepid=") && !strings.Contains(line, "hidepid=0") && !strings.Contains(line, "hidepid=off") {
				problems = append(problems, fmt.Sprintf("%s is mounted with hidepid, so other users' processes cannot be read: mount it without hidepid for the daemon", root))
			}
		}
	}
	return problems
}
