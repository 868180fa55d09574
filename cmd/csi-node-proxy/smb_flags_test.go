package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// TestSMBFlags: the --smb-* flags become the host's SMB permissions
// (modes 0777 by default, as the Linux SMB backend's), bad values are
// command-line errors, and the host is given the policy serve loads
// later, whose smbPermissions then answer for their callers.
func TestSMBFlags(t *testing.T) {
	resetKlog(t)
	cfg, err := parseFlagsWith(nil, registry)
	if err != nil {
		t.Fatal(err)
	}
	hc := hostsetConfig(cfg)
	if p := hc.SMBPermissions; p == nil || p.UID != nil || p.GID != nil || p.FileMode != 0o777 || p.DirMode != 0o777 || p.SELinuxContext != "" {
		t.Errorf("default SMB permissions %+v, want modes 0777 and nothing else", p)
	}
	cfg, err = parseFlagsWith([]string{"--smb-uid=1000", "--smb-gid=2000", "--smb-file-mode=0660", "--smb-dir-mode=770",
		"--smb-selinux-context=system_u:object_r:container_file_t:s0:c1,c2"}, registry)
	if err != nil {
		t.Fatal(err)
	}
	p := hostsetConfig(cfg).SMBPermissions
	if p.UID == nil || *p.UID != 1000 || p.GID == nil || *p.GID != 2000 || p.FileMode != 0o660 || p.DirMode != 0o770 ||
		p.SELinuxContext != "system_u:object_r:container_file_t:s0:c1,c2" {
		t.Errorf("SMB permissions from the flags: %+v", p)
	}
	for _, bad := range []string{"--smb-uid=-1", "--smb-gid=x", "--smb-file-mode=01777", "--smb-dir-mode=8",
		"--smb-selinux-context=system_u:object_r:t", `--smb-selinux-context=a:b:c:d"`} {
		if _, err := parseFlagsWith([]string{bad}, registry); err == nil || !strings.Contains(err.Error(), "smb-") {
			t.Errorf("%s: %v, want a command-line error naming the flag", bad, err)
		}
	}

	// The policy reaches the host once serve has loaded it.
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("rules:\n- {name: smb, callers: [{uids: [1000]}], allow: [{groups: [smb], methods: ['*']}], smbPermissions: {gid: 3000}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = parseFlagsWith([]string{"--policy=" + pol, "--cri-endpoint="}, registry)
	if err != nil {
		t.Fatal(err)
	}
	cfg.policy = new(atomic.Pointer[policy.Store])
	hc = hostsetConfig(cfg)
	if hc.Policy == nil || hc.Policy() != nil {
		t.Fatal("the host has no way to the policy, or has one before it is loaded")
	}
	sec, err := setupSecurity(cfg, hostpath.POSIX)
	if err != nil {
		t.Fatal(err)
	}
	defer sec.close()
	cfg.policy.Store(sec.policy)
	got, ok := hc.Policy().Policy().SMBPermissionsFor(identity.Caller{HasUnixIDs: true, UID: 1000})
	if !ok || got.GID == nil || *got.GID != 3000 {
		t.Errorf("the host's policy gives uid 1000 %+v, %v; want gid 3000", got, ok)
	}
}
