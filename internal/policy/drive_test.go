package policy

import (
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// A drive-less rooted Windows path (\var\lib\kubelet\..., as EKS kubelets
// send) gets from the policy the drive the services give it, so a rule's
// pathRoots judge the very path the services act on: it passes where the
// drive-ful path would, and a rule rooted on another drive does not
// capture it.
func TestDriveLessWindowsPathsGetTheServicesDrive(t *testing.T) {
	paths, err := hostpath.NewPolicy(hostpath.Windows, []string{`C:\var\lib\kubelet`, `D:\csi`})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse([]byte(`
rules:
- name: ebs
  callers: [{uids: [0]}]
  allow: [{methods: ["*"]}]
  pathRoots: ['C:\var\lib\kubelet\plugins\ebs.csi.aws.com', 'C:\var\lib\kubelet\pods', 'D:\csi\ebs']
- name: other-drive
  callers: [{uids: [0]}]
  allow: [{methods: ["*"]}]
  pathRoots: ['E:\var\lib\kubelet\plugins\x']
`), Options{Style: hostpath.Windows, Paths: paths})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		`\var\lib\kubelet\plugins\ebs.csi.aws.com\csi.sock`: true,
		`/var/lib/kubelet/pods/abc/volumes`:                 true,
		`C:\var\lib\kubelet\pods\abc`:                       true,
		`\csi\ebs\vol`:                                      true, // D:, the working directory it lies in
		`\var\lib\kubelet\plugins\unlisted`:                 false,
		`\var\lib\kubelet\plugins\x\y`:                      false, // C: as the services act, not E:
		`\\srv\share\var\lib\kubelet\pods`:                  false,
		`\windows\system32`:                                 false,
	} {
		d := p.Decide(Call{Caller: root(), Group: "filesystem", Method: "Mkdir", Inspected: true, Args: []Arg{pathArg("path", path)}})
		if d.Allowed != want {
			t.Errorf("%s: %+v, want allowed=%v", path, d, want)
		}
		// Whatever the policy decides, the services agree on the drive.
		if want {
			if _, err := paths.Check("path", path); err != nil {
				t.Errorf("%s: allowed by the policy, refused by the services: %v", path, err)
			}
		}
	}
}
