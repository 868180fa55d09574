package policy

import (
	"context"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

// fakeObjects is a node with volumes on disks, mounted at some paths.
type fakeObjects struct {
	mounts map[string][]string // volume → mount points
	disks  map[string]uint32   // volume → disk
	facts  map[uint32]DiskFacts
}

func (f fakeObjects) VolumeMounts(_ context.Context, v string) ([]string, error) {
	if _, ok := f.disks[v]; !ok {
		return nil, errdefs.Errorf(errdefs.ErrNotFound, "no volume %s", v)
	}
	return f.mounts[v], nil
}

func (f fakeObjects) VolumeDisk(_ context.Context, v string) (uint32, error) {
	d, ok := f.disks[v]
	if !ok {
		return 0, errdefs.Errorf(errdefs.ErrNotFound, "no volume %s", v)
	}
	return d, nil
}

func (f fakeObjects) DiskVolumes(_ context.Context, d uint32) ([]string, error) {
	var out []string
	for v, n := range f.disks {
		if n == d {
			out = append(out, v)
		}
	}
	return out, nil
}

func (f fakeObjects) DiskFacts(_ context.Context, d uint32) (DiskFacts, error) {
	fa, ok := f.facts[d]
	if !ok {
		return DiskFacts{}, errdefs.Errorf(errdefs.ErrNotFound, "no disk %d", d)
	}
	return fa, nil
}

const objectsPolicy = `
rules:
- name: a
  callers: [{any: true}]
  allow: [{methods: ["*"]}]
  pathRoots: ['C:\plugins\a', 'C:\pods']
  objects:
    onlyMountedBeneathPathRoots: true
- name: pinned
  callers: [{uids: [7]}]
  allow: [{methods: ["*"]}]
  objects:
    diskNumbers: [2, 3]
    diskLocations: ["1:0:0:*"]
    diskIDs: ["6002248*"]
`

func TestObjectConfinement(t *testing.T) {
	p, err := Parse([]byte(objectsPolicy), Options{Style: hostpath.Windows})
	if err != nil {
		t.Fatal(err)
	}
	node := fakeObjects{
		mounts: map[string][]string{"sys": {`C:\`}, "mine": {`C:\plugins\a\staging\pv1`, `C:\pods\x\volumes\pv1`}, "theirs": {`C:\plugins\b\staging\pv2`}},
		disks:  map[string]uint32{"sys": 0, "mine": 1, "theirs": 2, "fresh": 3, "raw4": 4},
		facts: map[uint32]DiskFacts{
			0: {Location: "0:0:0:0", Page83: "0000"}, 2: {Location: "1:0:0:2", Page83: "60022480aa"},
			3: {Location: "1:0:0:3", Serial: "6002248-serial"}, 4: {Location: "1:0:0:4", Page83: "60022480bb"},
		},
	}
	nobody, uid7 := root(func(c *identity.Caller) { c.UID = 1000 }), root(func(c *identity.Caller) { c.UID = 7 })
	for _, tc := range []struct {
		name    string
		caller  identity.Caller
		method  string
		args    []Arg
		host    ObjectHost
		allowed bool
		reason  string
	}{
		{"own mounted volume", nobody, "GetVolumeStats", []Arg{volumeArg("mine")}, node, true, ""},
		{"unmounted volume", nobody, "FormatVolume", []Arg{volumeArg("fresh")}, node, true, ""},
		{"mount an unmounted volume beneath the roots", nobody, "MountVolume", []Arg{volumeArg("fresh"), pathArg("target_path", `C:\plugins\a\staging\pv3`)}, node, true, ""},
		{"another driver's volume", nobody, "FormatVolume", []Arg{volumeArg("theirs")}, node, false, `mounted at C:\plugins\b\staging\pv2`},
		{"mount another driver's volume into my root", nobody, "MountVolume", []Arg{volumeArg("theirs"), pathArg("target_path", `C:\plugins\a\steal`)}, node, false, "outside the path roots"},
		{"the system volume", nobody, "FormatVolume", []Arg{volumeArg("sys")}, node, false, `C:\`},
		{"the system disk", nobody, "PartitionDisk", []Arg{diskArg(0)}, node, false, "disk 0"},
		{"another driver's disk", nobody, "ListVolumesOnDisk", []Arg{diskArg(2)}, node, false, "disk 2"},
		{"own disk", nobody, "PartitionDisk", []Arg{diskArg(1)}, node, true, ""},
		{"a raw disk", nobody, "PartitionDisk", []Arg{diskArg(9)}, node, true, ""},
		{"library mode", nobody, "FormatVolume", []Arg{volumeArg("theirs")}, node, false, "outside the path roots"},
		{"library mode, disk", nobody, "PartitionDisk", []Arg{diskArg(0)}, node, false, "disk 0"},
		{"no host to ask", nobody, "FormatVolume", []Arg{volumeArg("fresh")}, nil, false, "cannot ask"},
		{"no objects named", nobody, "ListDiskLocations", []Arg{}, nil, true, ""},
		{"pinned: matching disk", uid7, "PartitionDisk", []Arg{diskArg(2)}, node, true, ""},
		{"pinned: serial matches the pattern", uid7, "FormatVolume", []Arg{volumeArg("fresh")}, node, true, ""},
		{"pinned: number not listed", uid7, "PartitionDisk", []Arg{diskArg(4)}, node, false, "disk 4"},
		{"pinned: location does not match", uid7, "PartitionDisk", []Arg{diskArg(0)}, node, false, "disk 0"},
	} {
		// The first rule's selector is any: uid 7 would match it too, so
		// "pinned" tests use a policy of the second rule alone.
		pol := p
		if tc.caller.UID == 7 {
			pol = &Policy{rules: p.rules[1:], style: p.style}
		}
		d := pol.DecideContext(t.Context(), &Call{Caller: tc.caller, Group: "volume", Version: "v1", Method: tc.method, Inspected: true, Args: tc.args, Objects: tc.host})
		if d.Allowed != tc.allowed || !strings.Contains(d.Reason, tc.reason) {
			t.Errorf("%s: %+v, want allowed=%v reason containing %q", tc.name, d, tc.allowed, tc.reason)
		}
	}
}

func TestObjectsValidation(t *testing.T) {
	for _, tc := range []struct{ rule, want string }{
		{"objects: {onlyMountedBeneathPathRoots: true}", "needs pathRoots"},
		{"objects: {}", "confines nothing"},
		{"objects: {diskIDs: ['[x']}", "diskIDs"},
		{"objects: {diskLocations: ['1:0:0']}", "diskLocations"},
		{"objects: {onlymountedbeneathpathroots: true}", "unknown field"},
	} {
		_, err := Parse([]byte("rules:\n- name: r\n  callers: [{any: true}]\n  allow: [{methods: ['*']}]\n  "+tc.rule+"\n"), Options{Style: hostpath.POSIX})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.rule, err, tc.want)
		}
	}
}
