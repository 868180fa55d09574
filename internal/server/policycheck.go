package server

import (
	"fmt"
	"sort"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/callgate"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// PolicyAdmitsNobodyCheck names the readiness check that fails while the
// policy lets no caller change the node.
const PolicyAdmitsNobodyCheck = "policy-admits-a-driver"

// PolicyWarnings returns what is wrong with a policy that loaded fine:
// it lets no caller call any method that changes the node (no driver
// can stage, publish or format: a rollout that looks green and serves
// nobody), or it is audit-only and denies nothing. The daemon logs them
// when a policy comes into force and /readyz lists them; they do not
// make it unready (a restart would not cure them), so the node is ready
// but degraded. nil for no policy (everything allowed) and for a policy
// that admits some change.
func PolicyWarnings(p *policy.Policy) []string {
	if p == nil {
		return nil
	}
	var out []string
	if err := PolicyAdmitsNobody(p); err != nil {
		out = append(out, fmt.Sprintf("%s failed: %v", PolicyAdmitsNobodyCheck, err))
	}
	if p.AuditOnly() {
		out = append(out, "the policy is audit-only (mode: audit-only): calls its rules deny are allowed and audited as would-deny; set mode: enforce once the audit log shows none")
	}
	return out
}

// PolicyAdmitsNobody is the PolicyAdmitsNobodyCheck: an error saying so
// while p lets no caller change the node, nil for a policy that admits
// some change and for no policy (everything allowed). /readyz lists it as
// a degraded-only check (ready, but serving no driver).
func PolicyAdmitsNobody(p *policy.Policy) error {
	if p == nil || admitsAChange(p) {
		return nil
	}
	rules := p.Rules()
	if len(rules) == 0 {
		rules = []string{"none"}
	}
	return fmt.Errorf("the policy lets no caller change the node (rules: %s), so every CSI driver's stage, publish and format calls are refused; name your drivers' presets (presets: [azuredisk] in the policy file, --policy-preset, the Helm chart's policy.presets) or rules (docs/operations.md)",
		strings.Join(rules, ", "))
}

// admitsAChange tells whether some rule of p allows some method that
// changes the node (audit.Classify, the audit log's classification).
func admitsAChange(p *policy.Policy) bool {
	groups := make([]string, 0, len(callgate.Methods))
	for g := range callgate.Methods {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		for _, m := range callgate.Methods[g] {
			if audit.Classify(m) != audit.Read && p.AllowsMethod(g, m) {
				return true
			}
		}
	}
	return false
}
