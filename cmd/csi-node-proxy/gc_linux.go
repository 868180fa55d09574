package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroupMemoryLimit returns the memory limit of the cgroup this process
// runs in (the DaemonSet container's limit, the unit's MemoryMax), if it
// has one.
func cgroupMemoryLimit() (int64, bool) {
	return cgroupMemoryLimitAt("/proc/self/cgroup", "/sys/fs/cgroup")
}

// cgroupMemoryLimitAt reads the limit as cgroupMemoryLimit does, with
// /proc/self/cgroup at selfCgroup and the cgroup file system at root
// (tests pass constructed ones). cgroup v2: the "0::<path>" line names
// the cgroup, whose memory.max is a byte count or "max"; in a container
// with its own cgroup namespace the path is "/" and root is the
// container's cgroup. cgroup v1: the memory controller's line names it
// below root/memory; its memory.limit_in_bytes holds a page-rounded
// 2^63 when unlimited. An unlimited, unreadable or absent limit is no
// limit, and so is a cgroup outside this process's cgroup namespace.
func cgroupMemoryLimitAt(selfCgroup, root string) (int64, bool) {
	b, err := os.ReadFile(selfCgroup)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if strings.Contains(parts[2], "/..") {
			// Outside this process's cgroup namespace ("/../.."): no
			// file below root is its cgroup, and joining would climb
			// out of the cgroup file system.
			continue
		}
		var file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			file = filepath.Join(root, parts[2], "memory.max")
		case hasController(parts[1], "memory"):
			file = filepath.Join(root, "memory", parts[2], "memory.limit_in_bytes")
		default:
			continue
		}
		if l, ok := readLimit(file); ok {
			return l, true
		}
	}
	return 0, false
}

// hasController tells whether a /proc/self/cgroup controller list
// ("cpu,cpuacct") names c.
func hasController(list, c string) bool {
	for _, x := range strings.Split(list, ",") {
		if x == c {
			return true
		}
	}
	return false
}

// unlimitedV1 is where cgroup v1 puts an unlimited limit: 2^63 rounded
// down to the page size; anything from 2^62 up is taken as no limit.
const unlimitedV1 = int64(1) << 62

// readLimit reads a memory.max or memory.limit_in_bytes file.
func readLimit(file string) (int64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	v := strings.TrimSpace(string(b))
	if v == "max" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n >= unlimitedV1 {
		return 0, false
	}
	return n, true
}
