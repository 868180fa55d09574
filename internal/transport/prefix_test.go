package transport

import "testing"

// TestEndpointName: the default prefix gives upstream's names, which
// drivers look for; another prefix gives names that cannot collide.
func TestEndpointName(t *testing.T) {
	for _, tc := range []struct{ prefix, want string }{
		{"", "csi-proxy-disk-v1"},
		{DefaultEndpointPrefix, "csi-proxy-disk-v1"},
		{"csi-node-proxy", "csi-node-proxy-disk-v1"},
	} {
		if got := EndpointName(tc.prefix, "disk", "v1"); got != tc.want {
			t.Errorf("EndpointName(%q) = %q, want %q", tc.prefix, got, tc.want)
		}
	}
}

// TestCheckEndpointPrefix: plain names pass; anything that could leave
// the socket directory or the pipe namespace, or is empty or too long,
// does not.
func TestCheckEndpointPrefix(t *testing.T) {
	for _, ok := range []string{"csi-proxy", "csi-node-proxy", "p2", "a.b_c-d", "x234567890123456789012345678901234567890"[:40]} {
		if err := CheckEndpointPrefix(ok); err != nil {
			t.Errorf("CheckEndpointPrefix(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-x", ".x", "a/b", `a\b`, "a:b", "..", "a b", "ü", "x2345678901234567890123456789012345678901"} {
		if err := CheckEndpointPrefix(bad); err == nil {
			t.Errorf("CheckEndpointPrefix(%q) accepted it", bad)
		}
	}
}
