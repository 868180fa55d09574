package hostile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSnapshotDiff checks the comparison the suite relies on, without
// root: what counts as a change of the daemon and what is attributed to
// other tests running at the same time.
func TestSnapshotDiff(t *testing.T) {
	tmp := filepath.Clean(os.TempDir())
	s := sandbox{Root: tmp + "/hostile1", Kubelet: tmp + "/hostile1/kubelet", CSI: tmp + "/hostile1/csi"}
	mine := []*loopDisk{{name: "loop3", dev: "/dev/loop3", file: s.Root + "/files/a.img"}}
	before := snapshot{
		secMounts: {`"/" /dev/vda ext4 254:0 root=/ id=27 parent=1 opts=rw super=rw`},
		secBlocks: {"loop3 size=131072 ro=0", "loop5 size=0 ro=0", "vda size=536870912 ro=0"},
		secLoops:  {"/dev/loop3: [65024]:1 (" + s.Root + "/files/a.img)"},
		secFiles:  {`"` + s.Kubelet + `" drwxr-xr-x uid=0 gid=0`},
	}
	after := snapshot{
		secMounts: {
			`"/" /dev/vda ext4 254:0 root=/ id=27 parent=1 opts=rw super=rw`,
			`"` + tmp + `/TestOther/001/mnt" /dev/loop5p1 ext4 259:3 root=/ id=50 parent=27 opts=rw super=rw`,
			`"` + s.Root + `/outside/x" /dev/loop3p1 ext4 259:1 root=/ id=51 parent=27 opts=rw super=rw`,
			`"/mnt/x" /dev/loop3p1 ext4 259:1 root=/ id=52 parent=27 opts=rw super=rw`,
			`"/etc" tmpfs tmpfs 0:99 root=/ id=53 parent=27 opts=rw super=rw`,
		},
		secBlocks: {"loop3 size=131072 ro=1", "loop5 size=2048 ro=0", "loop5/loop5p1 partition=1 start=2048 size=1024 ro=0", "vda size=536870912 ro=1"},
		secLoops:  {"/dev/loop3: [65024]:1 (" + s.Root + "/files/a.img)", "/dev/loop5: [65024]:9 (" + tmp + "/TestOther/b.img)"},
		secFiles:  {`"` + s.Kubelet + `" drwxr-xr-x uid=0 gid=0`, `"` + s.Kubelet + `/x" drwxr-xr-x uid=0 gid=0`},
	}
	want := map[string]bool{ // line → foreign
		`"` + tmp + `/TestOther/001/mnt" /dev/loop5p1 ext4 259:3 root=/ id=50 parent=27 opts=rw super=rw`: true,
		`"` + s.Root + `/outside/x" /dev/loop3p1 ext4 259:1 root=/ id=51 parent=27 opts=rw super=rw`:      false,
		`"/mnt/x" /dev/loop3p1 ext4 259:1 root=/ id=52 parent=27 opts=rw super=rw`:                        false,
		`"/etc" tmpfs tmpfs 0:99 root=/ id=53 parent=27 opts=rw super=rw`:                                 false,
		"loop3 size=131072 ro=0":                              false,
		"loop3 size=131072 ro=1":                              false,
		"loop5 size=0 ro=0":                                   true,
		"loop5 size=2048 ro=0":                                true,
		"loop5/loop5p1 partition=1 start=2048 size=1024 ro=0": true,
		"vda size=536870912 ro=0":                             false,
		"vda size=536870912 ro=1":                             false,
		"/dev/loop5: [65024]:9 (" + tmp + "/TestOther/b.img)": true,
		`"` + s.Kubelet + `/x" drwxr-xr-x uid=0 gid=0`:        false,
	}
	changes := diff(before, after)
	if len(changes) != len(want) {
		t.Errorf("%d changes, want %d: %v", len(changes), len(want), changes)
	}
	for _, c := range changes {
		f, ok := want[c.line]
		if !ok {
			t.Errorf("unexpected change %s", c)
			continue
		}
		if got := foreign(c, s, mine); got != f {
			t.Errorf("%s: foreign = %v, want %v", c, got, f)
		}
	}
	if len(diff(before, before)) != 0 {
		t.Error("a snapshot differs from itself")
	}
}
