package policy

import (
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

// TestDecideArgs: a rule's path roots confine the paths among a call's
// arguments, whatever their field, and no other kind of argument; a call
// whose request was not inspected cannot pass such a rule.
func TestDecideArgs(t *testing.T) {
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
	in := Call{Caller: root, Group: "filesystem", Method: "Mkdir", Inspected: true,
		Args: []Arg{{Field: "path", Kind: ArgPath, Value: `C:\var\lib\kubelet\plugins\x`}, {Field: "volume_id", Kind: ArgVolume, Value: `C:\Windows`}}}
	if d := p.Decide(in); !d.Allowed || d.Rule != "driver" {
		t.Errorf("inside: %+v", d)
	}
	out := Call{Caller: root, Group: "filesystem", Method: "CreateSymlink", Inspected: true,
		Args: []Arg{{Field: "source_path", Kind: ArgPath, Value: `C:\var\lib\kubelet\plugins\x`}, {Field: "target_path", Kind: ArgPath, Value: `C:\Windows`}}}
	if d := p.Decide(out); d.Allowed || !strings.Contains(d.Reason, `target_path "C:\\Windows" is outside`) {
		t.Errorf("outside: %+v", d)
	}
	if d := p.Decide(Call{Caller: root, Group: "filesystem", Method: "Mkdir"}); d.Allowed || !strings.Contains(d.Reason, "cannot be inspected") {
		t.Errorf("no request: %+v", d)
	}
}
