package k8sname

import (
	"strings"
	"testing"
)

func TestForms(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(string) bool
		good []string
		bad  []string
	}{
		{"IsDNSLabel", IsDNSLabel,
			[]string{"kube-system", "a", "azuredisk", strings.Repeat("a", 63)},
			[]string{"", "Kube", "-a", "a-", "a.b", "a_b", strings.Repeat("a", 64)}},
		{"IsDNSSubdomain", IsDNSSubdomain,
			[]string{"csi-azuredisk-node-sa", "a.b-c", strings.Repeat("a", 63) + "." + strings.Repeat("b", 63)},
			[]string{"", "A", "a..b", ".a", "a_b", strings.Repeat("a.", 126) + "ab"}},
		{"IsPodUID", IsPodUID,
			[]string{"6f1c2d3e-0000-4000-8000-000000000001", strings.Repeat("0f", 16)},
			[]string{"", "6F1C2D3E-0000-4000-8000-000000000001", "6f1c2d3e_0000_4000_8000_000000000001", "../x", strings.Repeat("0", 31)}},
	} {
		for _, s := range c.good {
			if !c.f(s) {
				t.Errorf("%s(%q) = false, want true", c.name, s)
			}
		}
		for _, s := range c.bad {
			if c.f(s) {
				t.Errorf("%s(%q) = true, want false", c.name, s)
			}
		}
	}
}
