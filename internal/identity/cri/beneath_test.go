package cri

import "testing"

// TestStrictlyBeneath: the Windows token reader's last check, on final
// paths as GetFinalPathNameByHandle spells them: the token file must lie
// below its volume directory (whatever a link in between said), compared
// as Windows compares names, at a separator boundary.
func TestStrictlyBeneath(t *testing.T) {
	const vol = `\\?\C:\var\lib\kubelet\pods\6f1c2d3e\volumes\kubernetes.io~projected\kube-api-access-x`
	for _, c := range []struct {
		final string
		want  bool
	}{
		{vol + `\..2026_11_26_10_00_00.1\token`, true},
		{vol + `\token`, true},
		{`\\?\c:\VAR\lib\kubelet\pods\6f1c2d3e\volumes\kubernetes.io~projected\kube-api-access-x\token`, true},
		{vol, false},                    // the directory itself
		{vol + `-other\token`, false},   // a sibling whose name extends it
		{`\\?\C:\Windows\token`, false}, // a link led out
		{`\\?\C:\var\lib\kubelet\pods\a2fee3f4-pod\volumes\kubernetes.io~projected\kube-api-access-x\token`, false},
		{`\\?\D:` + vol[6:] + `\token`, false}, // another volume
	} {
		if got := strictlyBeneath(c.final, vol); got != c.want {
			t.Errorf("strictlyBeneath(%q) = %v, want %v", c.final, got, c.want)
		}
	}
}
