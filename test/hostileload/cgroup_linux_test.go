//go:build linux

package hostileload

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// memoryLimit is the shipped memory limit of the daemon: the DaemonSet's
// resources.limits.memory and the systemd unit's MemoryMax.
const memoryLimit = 512 << 20

// memCgroup is a memory cgroup the daemon runs in, limited to
// memoryLimit: cgroup v2 where /sys/fs/cgroup has the memory controller,
// else the v1 memory hierarchy (this project's build machines have v1
// memory and a v2 tree without it).
type memCgroup struct {
	dir string
	v2  bool
}

// newMemCgroup makes the cgroup, removed when the test ends; nil, with
// why, when neither hierarchy lets one be made.
func newMemCgroup(t *testing.T) (*memCgroup, string) {
	name := fmt.Sprintf("csi-node-proxy-hostileload-%d", os.Getpid())
	var whys []string
	if ctl, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil && strings.Contains(" "+string(ctl)+" ", " memory ") {
		cg := &memCgroup{dir: filepath.Join("/sys/fs/cgroup", name), v2: true}
		if err := cg.make(t, "memory.max", "memory.swap.max"); err == nil {
			return cg, ""
		} else {
			whys = append(whys, "cgroup v2: "+err.Error())
		}
	} else {
		whys = append(whys, "cgroup v2: /sys/fs/cgroup has no memory controller")
	}
	cg := &memCgroup{dir: filepath.Join("/sys/fs/cgroup/memory", name)}
	if err := cg.make(t, "memory.limit_in_bytes", ""); err == nil {
		return cg, ""
	} else {
		whys = append(whys, "cgroup v1: "+err.Error())
	}
	return nil, strings.Join(whys, "; ")
}

// make creates the cgroup and writes the limit to limitFile (and 0 to
// swapFile, if any and present).
func (cg *memCgroup) make(t *testing.T, limitFile, swapFile string) error {
	if err := os.Mkdir(cg.dir, 0o755); err != nil {
		return err
	}
	t.Cleanup(func() {
		// The daemon has exited by now (its cleanup ran first); a
		// cgroup empties a moment after its last process exits.
		for range 50 {
			if err := os.Remove(cg.dir); err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("cgroup %s not removed", cg.dir)
	})
	if err := os.WriteFile(filepath.Join(cg.dir, limitFile), []byte(strconv.Itoa(memoryLimit)), 0o644); err != nil {
		return err
	}
	if swapFile != "" {
		if _, err := os.Stat(filepath.Join(cg.dir, swapFile)); err == nil {
			if err := os.WriteFile(filepath.Join(cg.dir, swapFile), []byte("0"), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// String names the cgroup and its version.
func (cg *memCgroup) String() string {
	v := "v1"
	if cg.v2 {
		v = "v2"
	}
	return fmt.Sprintf("%s (cgroup %s)", cg.dir, v)
}

// peak is the cgroup's highest memory use so far, in bytes.
func (cg *memCgroup) peak() (int64, error) {
	f := "memory.max_usage_in_bytes"
	if cg.v2 {
		f = "memory.peak"
	}
	return readInt(filepath.Join(cg.dir, f))
}

// ooms is how many times the kernel killed a process of the cgroup for
// memory.
func (cg *memCgroup) ooms() (int64, error) {
	f := "memory.oom_control"
	if cg.v2 {
		f = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(cg.dir, f))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == "oom_kill" {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, nil
}

// readInt reads a file holding one integer.
func readInt(p string) (int64, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// rssPeak is a process's peak resident set (VmHWM), in bytes.
func rssPeak(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmHWM")
}

// flooderCPU is the flooder's CPU limit, in CPUs: a pod with a limit of
// one CPU. Without one, on a machine of two cores the flooder's own busy
// loops take the driver's and the daemon's CPU, and what the test
// measures is the machine, not the daemon.
const flooderCPU = 1

// limitCPU moves process pid (all its threads) into a CPU cgroup of its
// own limited to flooderCPU, as kubelet limits a pod's CPU (CFS quota),
// and returns what it did; a machine with no CPU controller to use
// leaves the process as it is, and says so.
func limitCPU(t *testing.T, pid int) string {
	name := fmt.Sprintf("csi-node-proxy-hostileload-flooder-%d", os.Getpid())
	var dir, quota string
	var files map[string]string
	if ctl, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil && strings.Contains(" "+string(ctl)+" ", " cpu ") {
		dir = filepath.Join("/sys/fs/cgroup", name)
		quota = fmt.Sprintf("%d 100000", flooderCPU*100000)
		files = map[string]string{"cpu.max": quota}
	} else {
		dir = filepath.Join("/sys/fs/cgroup/cpu", name)
		quota = strconv.Itoa(flooderCPU * 100000)
		files = map[string]string{"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": quota}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "not CPU-limited: " + err.Error()
	}
	t.Cleanup(func() {
		for range 50 {
			if err := os.Remove(dir); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	for _, f := range []string{"cpu.cfs_period_us", "cpu.cfs_quota_us", "cpu.max"} {
		if v, ok := files[f]; ok {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
				return "not CPU-limited: " + err.Error()
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return "not CPU-limited: " + err.Error()
	}
	return fmt.Sprintf("limited to %d CPU in %s", flooderCPU, dir)
}

// cpuTime is the CPU time process pid has used (user and system).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command (which may hold spaces), from field 3.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc/<pid>/stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * time.Second / 100, nil // USER_HZ is 100 on Linux
}
