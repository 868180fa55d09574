package callgate

import (
	"context"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// TestDecisionInContext: the call runs with the decision that allowed it
// in its context (policy.DecisionFromContext), the allowing rule's
// smbPermissions included, so a backend follows the rule that let the
// call through; without a policy the decision is there too, allowing
// and setting nothing.
func TestDecisionInContext(t *testing.T) {
	p, err := policy.Parse([]byte(`
rules:
- name: smb-driver
  callers: [{any: true}]
  allow: [{groups: [smb], methods: [NewSmbGlobalMapping]}]
  smbPermissions: {gid: 2000}
`), policy.Options{Style: hostpath.POSIX, Methods: Methods})
	if err != nil {
		t.Fatal(err)
	}
	mapping := &Call{Endpoint: "test", Method: Method{Group: "smb", Version: "v1", Name: "NewSmbGlobalMapping"}, FullMethod: "smb.NewSmbGlobalMapping"}
	for name, g := range map[string]*Gate{"policy": {Policy: policy.Static(p)}, "none": {}} {
		var got policy.Decision
		var ok bool
		if _, err := g.Do(context.Background(), mapping, func(ctx context.Context) (any, error) {
			got, ok = policy.DecisionFromContext(ctx)
			return nil, nil
		}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		switch {
		case !ok || !got.Allowed:
			t.Errorf("%s: the call ran with decision %+v, %v; want the allowing one", name, got, ok)
		case name == "policy" && (got.Rule != "smb-driver" || got.SMBPermissions == nil || *got.SMBPermissions.GID != 2000):
			t.Errorf("%s: the call ran with %+v; want smb-driver's, with its gid", name, got)
		case name == "none" && got.SMBPermissions != nil:
			t.Errorf("%s: the call ran with SMB permissions %+v and no policy", name, got.SMBPermissions)
		}
	}
}
