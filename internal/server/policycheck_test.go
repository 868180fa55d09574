package server

import (
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/callgate"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// TestPolicyWarnings: the shipped default (node-admin only), rules: []
// and an audit-only policy each warn; a driver's preset, or no policy,
// does not.
func TestPolicyWarnings(t *testing.T) {
	for file, want := range map[string][]string{
		"presets: [node-admin]\nrules: []\n":                                         {PolicyAdmitsNobodyCheck + " failed", "(rules: node-admin)"},
		"rules: []\n":                                                                {PolicyAdmitsNobodyCheck + " failed", "(rules: none)"},
		"presets: [node-admin, azuredisk]\n":                                         nil,
		"mode: audit-only\npresets: [node-admin, azuredisk]\n":                       {"audit-only"},
		"rules:\n- {name: r, callers: [{uids: [0]}], allow: [{methods: [Mkdir]}]}\n": nil,
	} {
		p, err := policy.Parse([]byte(file), policy.Options{Style: hostpath.POSIX, Methods: callgate.Methods})
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(PolicyWarnings(p), "\n")
		if (want == nil) != (got == "") {
			t.Errorf("%q: warnings %q, want some: %v", file, got, want != nil)
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%q: warnings %q lack %q", file, got, w)
			}
		}
	}
	if PolicyWarnings(nil) != nil {
		t.Error("no policy warns")
	}
}
