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
// and go to the callers of the first rule that matches and sets them;
// other callers get none.
func TestSMBPermissions(t *testing.T) {
	p, err := Parse([]byte(`
rules:
- name: reads
  callers: [{any: true}]
  allow: [{methods: ["Get*"]}]
- name: smb-driver
  callers: [{uids: [1000]}]
  allow: [{groups: [smb], methods: ["*"]}]
  smbPermissions: {gid: 2000, fileMode: 0770, dirMode: 0770, seLinuxContext: "system_u:object_r:container_file_t:s0:c1,c2"}
- name: smb-driver-too
  callers: [{uids: [1000, 1001]}]
  allow: [{groups: [smb], methods: ["*"]}]
  smbPermissions: {uid: 0}
`), Options{Style: hostpath.POSIX, Methods: knownMethods})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := p.SMBPermissionsFor(identity.Caller{HasUnixIDs: true, UID: 1000})
	if !ok || got.UID != nil || got.GID == nil || *got.GID != 2000 || got.FileMode != 0o770 || got.DirMode != 0o770 ||
		got.SELinuxContext != "system_u:object_r:container_file_t:s0:c1,c2" {
		t.Errorf("uid 1000: %+v, %v; want the first matching rule's", got, ok)
	}
	if got, ok := p.SMBPermissionsFor(identity.Caller{HasUnixIDs: true, UID: 1001}); !ok || got.UID == nil || *got.UID != 0 || got.GID != nil {
		t.Errorf("uid 1001: %+v, %v; want smb-driver-too's", got, ok)
	}
	if got, ok := p.SMBPermissionsFor(identity.Caller{HasUnixIDs: true, UID: 5}); ok {
		t.Errorf("uid 5, matched only by a rule without smbPermissions: %+v", got)
	}
	if _, ok := (*Policy)(nil).SMBPermissionsFor(identity.Caller{}); ok {
		t.Error("no policy gave SMB permissions")
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
