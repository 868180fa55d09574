package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

// TestSMBPermissions: a rule's smbPermissions parse (modes in YAML octal)
// and come with the decisions that rule makes: a call's SMB permissions
// are its allowing rule's, whatever other rules matching the caller set,
// and none when the allowing rule sets none, when the call is denied or
// when there is no policy. They travel in the call's context.
func TestSMBPermissions(t *testing.T) {
	p, err := Parse([]byte(`
rules:
- name: unmount
  callers: [{any: true}]
  allow: [{groups: [smb], methods: [RemoveSmbGlobalMapping]}]
- name: smb-driver
  callers: [{uids: [1000]}]
  allow: [{groups: [smb], methods: ["*"]}]
  smbPermissions: {gid: 2000, fileMode: 0770, dirMode: 0770, seLinuxContext: "system_u:object_r:container_file_t:s0:c1,c2"}
- name: smb-driver-too
  callers: [{uids: [1000, 1001]}]
  allow: [{groups: [smb], methods: ["*"]}]
  smbPermissions: {uid: 0}
`), Options{Style: hostpath.POSIX, Methods: map[string][]string{"smb": {"NewSmbGlobalMapping", "RemoveSmbGlobalMapping"}}})
	if err != nil {
		t.Fatal(err)
	}
	decide := func(uid uint32, method string) Decision {
		return p.Decide(Call{Caller: identity.Caller{HasUnixIDs: true, UID: uid}, Group: "smb", Version: "v1", Method: method})
	}
	d := decide(1000, "NewSmbGlobalMapping")
	got := d.SMBPermissions
	if !d.Allowed || d.Rule != "smb-driver" || got == nil || got.UID != nil || got.GID == nil || *got.GID != 2000 || got.FileMode != 0o770 || got.DirMode != 0o770 ||
		got.SELinuxContext != "system_u:object_r:container_file_t:s0:c1,c2" {
		t.Errorf("uid 1000: %+v; want smb-driver's decision with its permissions", d)
	}
	if d := decide(1001, "NewSmbGlobalMapping"); !d.Allowed || d.Rule != "smb-driver-too" || d.SMBPermissions == nil || d.SMBPermissions.UID == nil || *d.SMBPermissions.UID != 0 || d.SMBPermissions.GID != nil {
		t.Errorf("uid 1001: %+v; want smb-driver-too's", d)
	}
	// The rule that allows decides: uid 1000's removals are allowed by
	// "unmount", first in the file, which sets no permissions, although
	// smb-driver matches the caller too (before, the first rule matching
	// the caller that set any applied to every call of the caller).
	if d := decide(1000, "RemoveSmbGlobalMapping"); !d.Allowed || d.Rule != "unmount" || d.SMBPermissions != nil {
		t.Errorf("uid 1000 removing: %+v; want unmount's decision, without SMB permissions", d)
	}
	if d := decide(5, "NewSmbGlobalMapping"); d.Allowed || d.SMBPermissions != nil {
		t.Errorf("uid 5, denied: %+v", d)
	}
	if d := (*Policy)(nil).Decide(Call{Group: "smb", Method: "NewSmbGlobalMapping"}); !d.Allowed || d.SMBPermissions != nil {
		t.Errorf("no policy: %+v; want allowed, without SMB permissions", d)
	}

	ctx := NewDecisionContext(t.Context(), decide(1000, "NewSmbGlobalMapping"))
	if d, ok := DecisionFromContext(ctx); !ok || d.Rule != "smb-driver" || d.SMBPermissions == nil || *d.SMBPermissions.GID != 2000 {
		t.Errorf("the decision in the context: %+v, %v", d, ok)
	}
	if d, ok := DecisionFromContext(t.Context()); ok {
		t.Errorf("a context without a decision gave %+v", d)
	}
}

// TestSMBPermissionsInvalid: modes beyond 0777, SELinux contexts with
// other characters or fewer than three colons, and an empty
// smbPermissions are refused at load.
func TestSMBPermissionsInvalid(t *testing.T) {
	for perms, want := range map[string]string{
		"{fileMode: 01777}":                                 "fileMode",
		"{dirMode: 0o1000}":                                 "smbPermissions",
		`{seLinuxContext: "system_u:object_r:t:s0\"x"}`:     "seLinuxContext",
		`{seLinuxContext: "system_u:object_r:t s0:c1"}`:     "seLinuxContext",
		`{seLinuxContext: "system_u:object_r:container_t"}`: "not user:role:type:level",
		"{}":                  "sets nothing",
		"{uid: -1}":           "uid",
		"{gid: 1, extra: 1}":  "extra",
		"{FileMode: 0770}":    "FileMode",
		"{fileMode: '0770'}":  "fileMode",
		"{selinuxContext: a}": "selinuxContext",
	} {
		_, err := Parse([]byte("rules:\n- name: r\n  callers: [{any: true}]\n  allow: [{methods: ['*']}]\n  smbPermissions: "+perms+"\n"), Options{Style: hostpath.POSIX})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("smbPermissions %s: %v, want an error naming %q", perms, err, want)
		}
	}
	if err := (SMBPermissions{FileMode: 0o1777}).Validate(); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("Validate of mode 01777: %v, want ErrInvalidArgument", err)
	}
}
