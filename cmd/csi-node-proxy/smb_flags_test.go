package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

// testNode assembles the daemon's node of cfg as serve does, with
// metrics off and no container runtime.
func testNode(cfg Config) (*hostset.Node, error) {
	return newNode(cfg, nil, &identityWarnings{}, identity.Options{})
}

// TestSMBFlags: the --smb-* flags become the node's SMB permissions
// (modes 0777 by default, as the Linux SMB backend's), which the node
// keeps as given, and bad values are command-line errors. (The policy's
// smbPermissions reach the backend per call, in the call's decision:
// internal/hostset's TestLinuxSMBPermissions.)
func TestSMBFlags(t *testing.T) {
	resetKlog(t)
	cfg, err := parseFlagsWith([]string{"--host=simulated"}, registry)
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.SMBPermissions; p == nil || p.UID != nil || p.GID != nil || p.FileMode != 0o777 || p.DirMode != 0o777 || p.SELinuxContext != "" {
		t.Errorf("default SMB permissions %+v, want modes 0777 and nothing else", p)
	}
	if want := (hostset.Config{}).Resolved().SMBPermissions; !reflect.DeepEqual(cfg.SMBPermissions, want) {
		t.Errorf("the flags' default SMB permissions %+v are not the node's %+v", cfg.SMBPermissions, want)
	}
	cfg, err = parseFlagsWith([]string{"--host=simulated", "--smb-uid=1000", "--smb-gid=2000", "--smb-file-mode=0660", "--smb-dir-mode=770",
		"--smb-selinux-context=system_u:object_r:container_file_t:s0:c1,c2"}, registry)
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.SMBPermissions
	if p.UID == nil || *p.UID != 1000 || p.GID == nil || *p.GID != 2000 || p.FileMode != 0o660 || p.DirMode != 0o770 ||
		p.SELinuxContext != "system_u:object_r:container_file_t:s0:c1,c2" {
		t.Errorf("SMB permissions from the flags: %+v", p)
	}
	n, err := testNode(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if got := n.Config().SMBPermissions; !reflect.DeepEqual(got, p) {
		t.Errorf("the node's SMB permissions %+v, want the flags' %+v", got, p)
	}
	for _, bad := range []string{"--smb-uid=-1", "--smb-gid=x", "--smb-file-mode=01777", "--smb-dir-mode=8",
		"--smb-selinux-context=system_u:object_r:t", `--smb-selinux-context=a:b:c:d"`} {
		if _, err := parseFlagsWith([]string{bad}, registry); err == nil || !strings.Contains(err.Error(), "smb-") {
			t.Errorf("%s: %v, want a command-line error naming the flag", bad, err)
		}
	}
}
