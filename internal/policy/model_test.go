package policy

import (
	"reflect"
	"strings"
	"testing"

	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

// TestModelPathsMatchWire: a model request yields the same paths, under
// the same names, as the wire message carrying the same values, so a rule
// confines library mode exactly as it confines the daemon's endpoints.
func TestModelPathsMatchWire(t *testing.T) {
	const a, b = `C:\var\lib\kubelet\a`, `C:\var\lib\kubelet\b`
	cases := []struct {
		model any
		wire  []PathField
	}{
		{&filesystem.CreateSymlinkRequest{SourcePath: a, TargetPath: b}, PathFields(&filesystemv1.CreateSymlinkRequest{SourcePath: a, TargetPath: b})},
		{&filesystem.MkdirRequest{Path: a}, PathFields(&filesystemv1.MkdirRequest{Path: a})},
		{&filesystem.RmdirRequest{Path: a, Force: true}, PathFields(&filesystemv1.RmdirRequest{Path: a, Force: true})},
		{&volume.MountVolumeRequest{VolumeID: `\\?\Volume{x}\`, TargetPath: a}, PathFields(&volumev1.MountVolumeRequest{VolumeId: `\\?\Volume{x}\`, TargetPath: a})},
		{&volume.GetVolumeIDFromTargetPathRequest{TargetPath: a}, PathFields(&volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: a})},
		{&smb.NewSmbGlobalMappingRequest{RemotePath: `\\srv\share`, LocalPath: a, Username: "u", Password: "p"},
			PathFields(&smbv1.NewSmbGlobalMappingRequest{RemotePath: `\\srv\share`, LocalPath: a, Username: "u", Password: "p"})},
		{&smb.RemoveSmbGlobalMappingRequest{RemotePath: `\\srv\share`}, nil},
		{&iscsi.ConnectTargetRequest{TargetPortal: &iscsi.TargetPortal{TargetAddress: "10.0.0.1"}, IQN: "iqn.x", ChapSecret: "s"}, nil},
		{&filesystem.MkdirRequest{}, nil},
		{nil, nil},
	}
	for _, c := range cases {
		got := ModelPaths(c.model)
		if len(got) == 0 && len(c.wire) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, c.wire) {
			t.Errorf("ModelPaths(%T) = %v, the wire message gives %v", c.model, got, c.wire)
		}
	}
	// Nested structs, pointers and lists are searched too.
	type inner struct{ MountPoint string }
	nested := struct {
		Inner     *inner
		Many      []inner
		LocalPath []string
	}{&inner{MountPoint: a}, []inner{{MountPoint: b}}, []string{a, ""}}
	want := []PathField{{"mount_point", a}, {"mount_point", b}, {"local_path", a}}
	if got := ModelPaths(nested); !reflect.DeepEqual(got, want) {
		t.Errorf("nested: %v, want %v", got, want)
	}
}

// TestDecideModel: a rule's path roots confine a model request as they
// confine a wire message; a call with neither cannot pass such a rule.
func TestDecideModel(t *testing.T) {
	p, err := Parse([]byte(`
rules:
- name: driver
  callers: [{uids: [0]}]
  allow: [{methods: ["*"]}]
  pathRoots: ['C:\var\lib\kubelet\plugins']
`), Options{Style: hostpath.Windows})
	if err != nil {
		t.Fatal(err)
	}
	root := identity.Caller{HasUnixIDs: true}
	in := Call{Caller: root, Group: "filesystem", Method: "Mkdir", Model: &filesystem.MkdirRequest{Path: `C:\var\lib\kubelet\plugins\x`}}
	if d := p.Decide(in); !d.Allowed || d.Rule != "driver" {
		t.Errorf("inside: %+v", d)
	}
	out := Call{Caller: root, Group: "filesystem", Method: "CreateSymlink",
		Model: &filesystem.CreateSymlinkRequest{SourcePath: `C:\var\lib\kubelet\plugins\x`, TargetPath: `C:\Windows`}}
	if d := p.Decide(out); d.Allowed || !strings.Contains(d.Reason, `target_path "C:\\Windows" is outside`) {
		t.Errorf("outside: %+v", d)
	}
	if d := p.Decide(Call{Caller: root, Group: "filesystem", Method: "Mkdir"}); d.Allowed || !strings.Contains(d.Reason, "cannot be inspected") {
		t.Errorf("no request: %+v", d)
	}
}
