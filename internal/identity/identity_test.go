package identity

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	cid    = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	pod    = "6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
	static = "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
)

func TestParseCgroupFixtures(t *testing.T) {
	for _, tc := range []struct {
		file string
		root string // kubelet --cgroup-root; "" is the default
		want Container
		err  string
	}{
		{"v1-cgroupfs-burstable.txt", "", Container{ID: cid, PodUID: pod}, ""},
		{"v1-cgroupfs-guaranteed.txt", "", Container{ID: cid, PodUID: pod}, ""},
		{"v1-cgroupfs-crio.txt", "", Container{ID: cid, PodUID: pod, Runtime: "crio"}, ""},
		{"v1-systemd-hybrid.txt", "", Container{ID: cid, PodUID: pod, Runtime: "containerd"}, ""},
		{"v2-systemd-containerd.txt", "", Container{ID: cid, PodUID: pod, Runtime: "containerd"}, ""},
		{"v2-systemd-guaranteed.txt", "", Container{ID: cid, PodUID: pod, Runtime: "containerd"}, ""},
		{"v2-systemd-kind.txt", "/kubelet", Container{ID: cid, PodUID: pod, Runtime: "containerd"}, ""},
		{"v2-systemd-kind.txt", "/kubelet.slice", Container{ID: cid, PodUID: pod, Runtime: "containerd"}, ""},
		{"v2-systemd-crio.txt", "", Container{ID: cid, PodUID: pod, Runtime: "crio"}, ""},
		{"v2-static-pod.txt", "", Container{ID: cid, PodUID: static, Runtime: "containerd"}, ""},
		// kubelet --cgroup-root=/kube under cgroupfs.
		{"v2-cgroupfs-cgroup-root.txt", "/kube", Container{ID: cid, PodUID: pod}, ""},
		// kind on cgroup v1: the node is a Docker container, its kubelet
		// runs with --cgroup-root=/kubelet under cgroupfs.
		{"v1-kind-cgroupfs.txt", "/kubelet", Container{ID: cid, PodUID: pod}, ""},
		// A cgroup root named like a systemd slice is no cgroupfs root.
		{"forged-cgroup-root-slice.txt", "", Container{}, ""},
		{"docker-systemd.txt", "", Container{ID: cid, Runtime: "docker"}, ""},
		{"docker-cgroupfs.txt", "", Container{ID: cid, Runtime: "docker"}, ""},
		// Not containers.
		{"host-sshd.txt", "", Container{}, ""},
		{"host-session-v1.txt", "", Container{}, ""},
		{"conmon.txt", "", Container{}, ""},
		// A process that can make cgroups cannot pose as another pod.
		{"forged-user-delegation.txt", "", Container{}, ""},
		{"forged-slice-chain.txt", "", Container{}, ""},
		{"forged-nested-in-container.txt", "", Container{ID: cid, PodUID: pod, Runtime: "containerd"}, ""},
		// Pods lie below kubelet's cgroup root only: a delegated subtree
		// (an unprivileged LXC container, any plain top-level cgroup)
		// that makes kubepods/... of its own is no pod.
		{"forged-lxc-delegated.txt", "", Container{}, ""},
		{"forged-plain-subtree.txt", "", Container{}, ""},
		{"forged-plain-subtree.txt", "/kube", Container{}, ""},
		{"v2-cgroupfs-cgroup-root.txt", "", Container{}, ""},
		{"v2-cgroupfs-cgroup-root.txt", "/other", Container{}, ""},
		{"v2-systemd-kind.txt", "", Container{}, ""},
		{"v1-kind-cgroupfs.txt", "", Container{ID: "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0", Runtime: "docker"}, ""},
		{"v2-systemd-containerd.txt", "/kubelet", Container{}, ""},
		{"v1-cgroupfs-burstable.txt", "/kube", Container{}, ""},
		// Unusable.
		{"namespaced.txt", "", Container{}, "host cgroup namespace"},
		{"disagree.txt", "", Container{}, "disagree"},
		{"malformed.txt", "", Container{}, "malformed"},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", "cgroup", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseCgroup(b, tc.root)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s (root %q): %v", tc.file, tc.root, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one containing %q", tc.file, err, tc.err)
		case got != tc.want:
			t.Errorf("%s (root %q): %+v, want %+v", tc.file, tc.root, got, tc.want)
		}
	}
	if _, err := ParseCgroup(nil, ""); err == nil {
		t.Error("empty cgroup file accepted")
	}
}

func TestParseStat(t *testing.T) {
	// The command name may hold spaces and parentheses.
	line := "4242 (evil) 1 2 (x) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 200 18446744073709551615\n"
	got, err := ParseStatStartTime([]byte(line))
	if err != nil || got != 987654 {
		t.Errorf("start time %d, %v; want 987654", got, err)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 x"} {
		if _, err := ParseStatStartTime([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	euid, groups, err := ParseStatus([]byte("Name:\tx\nUid:\t1000\t65534\t1000\t1000\nGid:\t1\t1\t1\t1\nGroups:\t4 27 100 \n"))
	if err != nil || euid != 65534 || fmt.Sprint(groups) != "[4 27 100]" {
		t.Errorf("status: %d %v %v", euid, groups, err)
	}
	if _, _, err := ParseStatus([]byte("Name:\tx\n")); err == nil {
		t.Error("status without Uid accepted")
	}
}

// fakeProc serves a process directory from memory; stat may change after
// the first read, as when a PID is reused.
type fakeProc struct {
	files     map[string]string
	statAfter string
	reads     map[string]int
}

func (f *fakeProc) ReadFile(name string) ([]byte, error) {
	if f.reads == nil {
		f.reads = map[string]int{}
	}
	f.reads[name]++
	if name == "stat" && f.reads[name] > 1 && f.statAfter != "" {
		return []byte(f.statAfter), nil
	}
	s, ok := f.files[name]
	if !ok {
		return nil, os.ErrNotExist
	}
	return []byte(s), nil
}

func stat(start int) string {
	return fmt.Sprintf("77 (driver) S 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 1 1\n", start)
}

func TestReadProcessGuards(t *testing.T) {
	cg, err := os.ReadFile(filepath.Join("testdata", "cgroup", "v2-systemd-containerd.txt"))
	if err != nil {
		t.Fatal(err)
	}
	files := func() map[string]string {
		return map[string]string{"stat": stat(500), "status": "Uid:\t0\t0\t0\t0\nGroups:\t10\n", "cgroup": string(cg)}
	}

	p, err := readProcess(&fakeProc{files: files()}, 0, "")
	if err != nil || p.Container.ID != cid || p.Container.PodUID != pod || p.StartTime != 500 || fmt.Sprint(p.Groups) != "[10]" {
		t.Fatalf("readProcess = %+v, %v", p, err)
	}
	// The process behind the PID changed between the reads.
	if _, err := readProcess(&fakeProc{files: files(), statAfter: stat(501)}, 0, ""); !errors.Is(err, ErrPIDReused) {
		t.Errorf("changed start time: %v, want ErrPIDReused", err)
	}
	// The process runs as another user than the one that connected.
	if _, err := readProcess(&fakeProc{files: files()}, 1000, ""); !errors.Is(err, ErrPIDReused) {
		t.Errorf("other uid: %v, want ErrPIDReused", err)
	}
	// Gone.
	f := files()
	delete(f, "cgroup")
	if _, err := readProcess(&fakeProc{files: f}, 0, ""); err == nil {
		t.Error("missing cgroup accepted")
	}
	if _, err := ReadProcess(t.TempDir(), 77, 0, ""); err == nil {
		t.Error("missing process accepted")
	}
	if _, err := ReadProcess("/proc", 0, 0, ""); err == nil {
		t.Error("PID 0 accepted")
	}
}

// TestReadProcessTree reads a fixture procfs tree through ReadProcess.
func TestReadProcessTree(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "77")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cg, _ := os.ReadFile(filepath.Join("testdata", "cgroup", "v1-cgroupfs-burstable.txt"))
	for name, s := range map[string]string{"stat": stat(9), "status": "Uid:\t5\t5\t5\t5\nGroups:\n", "cgroup": string(cg)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := ReadProcess(root, 77, 5, "")
	if err != nil || p.Container.ID != cid || p.Container.PodUID != pod || len(p.Groups) != 0 {
		t.Fatalf("ReadProcess = %+v, %v", p, err)
	}
}

func TestContainerIDFromJobName(t *testing.T) {
	upper := strings.ToUpper(cid)
	for name, want := range map[string]string{
		`\Container_` + cid:                                cid,
		`\Container_` + upper:                              cid,
		`\BaseNamedObjects\JobContainer_` + cid:            cid,
		`\Sessions\1\BaseNamedObjects\JobContainer_` + cid: "",
		`\BaseNamedObjects\Container_` + cid:               "",
		`\Container_` + cid[:40]:                           "",
		`\Container_` + cid + `\x`:                         "",
		"":                                                 "",
	} {
		if got := ContainerIDFromJobName(name); got != want {
			t.Errorf("ContainerIDFromJobName(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestCallerString(t *testing.T) {
	for _, tc := range []struct {
		c    Caller
		want string
	}{
		{Caller{}, "unidentified caller"},
		{Caller{PID: 7, HasUnixIDs: true, UID: 1000, GID: 100, ContainerID: cid, PodUID: pod}, "pid 7 uid 1000 gid 100 container 0123456789ab pod " + pod},
		{Caller{HasUnixIDs: true}, "uid 0 gid 0"},
		{Caller{PID: 9, WindowsSID: "S-1-5-18", WindowsAccount: `NT AUTHORITY\SYSTEM`}, `pid 9 account NT AUTHORITY\SYSTEM (S-1-5-18)`},
		{Caller{PID: 9, WindowsSID: "S-1-5-21-1"}, "pid 9 account S-1-5-21-1"},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}

func TestCgroupRootElems(t *testing.T) {
	for root, want := range map[string]string{"": "[]", "/": "[]", "/kube": "[kube]", "/kubelet.slice": "[kubelet]", "/a/b_c/": "[a b_c]"} {
		got, err := CgroupRootElems(root)
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("CgroupRootElems(%q) = %v, %v; want %s", root, got, err, want)
		}
	}
	for _, bad := range []string{"kube", "/a-b", "/docker", "/kubepods", "/x/../y", "/.", "/a//b", "/system.slice/x.service", "/a b"} {
		if got, err := CgroupRootElems(bad); err == nil {
			t.Errorf("CgroupRootElems(%q) = %v, want an error", bad, got)
		}
	}
	if _, err := ParseCgroup([]byte("0::/kubepods/x\n"), "relative"); err == nil {
		t.Error("a relative cgroup root accepted")
	}
}
