package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The cgroup files below are constructed in the shapes the kernel writes
// them (cgroup v2 in a container's own namespace and for a systemd unit;
// cgroup v1 with the memory controller).
func TestCgroupMemoryLimitFromConstructedFiles(t *testing.T) {
	for _, tc := range []struct {
		name   string
		self   string
		files  map[string]string // below the cgroup root
		want   int64
		wantOK bool
	}{
		{"v2 container namespace", "0::/\n", map[string]string{"memory.max": "536870912\n"}, 536870912, true},
		{"v2 systemd unit", "0::/system.slice/csi-node-proxy.service\n",
			map[string]string{"system.slice/csi-node-proxy.service/memory.max": "536870912\n", "memory.max": "1024\n"}, 536870912, true},
		{"v2 unlimited", "0::/\n", map[string]string{"memory.max": "max\n"}, 0, false},
		{"v2 file missing", "0::/elsewhere\n", map[string]string{"memory.max": "1024\n"}, 0, false},
		{"v1 memory controller", "12:cpu,cpuacct:/kubepods/x\n9:memory:/kubepods/pod1/c1\n1:name=systemd:/kubepods/x\n",
			map[string]string{"memory/kubepods/pod1/c1/memory.limit_in_bytes": "268435456\n"}, 268435456, true},
		{"v1 unlimited", "9:memory:/\n", map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}, 0, false},
		{"v2 outside the cgroup namespace", "0::/../kubepods/x\n", map[string]string{"memory.max": "1024\n", "../kubepods/x/memory.max": "2048\n"}, 0, false},
		{"garbage", "not a cgroup line\n0::/\n", map[string]string{"memory.max": "lots\n"}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			self := filepath.Join(dir, "cgroup")
			if err := os.WriteFile(self, []byte(tc.self), 0o600); err != nil {
				t.Fatal(err)
			}
			root := filepath.Join(dir, "fs")
			for name, content := range tc.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, ok := cgroupMemoryLimitAt(self, root)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("cgroupMemoryLimitAt = %d, %v; want %d, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
