package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

func TestParseSecurityFlags(t *testing.T) {
	resetKlog(t)
	cfg, err := parseFlagsWith(nil, registry)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PolicyFile != "" || cfg.AuditLog != "" || cfg.AuditReads || cfg.AuditSync || cfg.PipeGroup != "" || cfg.PolicyReloadInterval != policy.DefaultReloadInterval {
		t.Errorf("security defaults: %+v", cfg)
	}
	cfg, err = parseFlagsWith([]string{"--policy=/etc/p.yaml", "--policy-reload-interval=3s", "--audit-log=-", "--audit-reads", "--audit-sync", "--pipe-group=S-1-5-32-545"}, registry)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PolicyFile != "/etc/p.yaml" || cfg.PolicyReloadInterval != 3*time.Second || cfg.AuditLog != "-" || !cfg.AuditReads || !cfg.AuditSync || cfg.PipeGroup != "S-1-5-32-545" {
		t.Errorf("security flags: %+v", cfg)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy-reload-interval=-1s"}, "must not be negative"},
		{[]string{"--pipe-group=S-1-5-32-545", "--pipe-sddl=D:P(A;;GA;;;SY)"}, "-pipe-group and -pipe-sddl"},
	} {
		if _, err := parseFlagsWith(tc.args, registry); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

// auditOptionsOf parses args, with an audit log in a fresh directory,
// as the daemon's flags, assembles the daemon's node from them and
// returns the node's resolved configuration, after closing the node.
func auditOptionsOf(t *testing.T, args []string) hostset.Config {
	t.Helper()
	cfg, err := parseFlagsWith(append([]string{"--host=simulated", "--audit-log=" + filepath.Join(t.TempDir(), "audit.log")}, args...), registry)
	if err != nil {
		t.Fatal(err)
	}
	n, err := testNode(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n.Gate.Audit == nil {
		t.Fatal("--audit-log given, but the node has no audit log")
	}
	if err := n.Close(); err != nil {
		t.Error(err)
	}
	return n.Config()
}

// TestAuditSyncFlag: --audit-sync reaches the node's audit
// configuration (hostset turns it into audit.Options.Sync:
// internal/hostset's TestAuditOptions), and only it does; the audit
// package's own
// tests show what Sync does to the file, and test/soak's TestAuditSync
// shows the daemon's records reaching the disk before each call goes on.
func TestAuditSyncFlag(t *testing.T) {
	resetKlog(t)
	for _, tc := range []struct {
		args        []string
		sync, reads bool
	}{
		{nil, false, false},
		{[]string{"--audit-sync"}, true, false},
		{[]string{"--audit-sync=false"}, false, false},
		{[]string{"--audit-sync", "--audit-reads"}, true, true},
	} {
		got := auditOptionsOf(t, tc.args)
		if got.AuditSync != tc.sync || got.AuditReads != tc.reads {
			t.Errorf("%q: the node audits with sync %v, reads %v; want sync %v, reads %v", tc.args, got.AuditSync, got.AuditReads, tc.sync, tc.reads)
		}
	}
}

func TestPipeSDDL(t *testing.T) {
	got, err := pipeSDDL("S-1-5-21-1004336348-1177238915-682003330-1001")
	if err != nil || got != transport.DefaultPipeSDDL+"(A;;GRGW;;;S-1-5-21-1004336348-1177238915-682003330-1001)" {
		t.Errorf("pipeSDDL = %q, %v", got, err)
	}
	for _, bad := range []string{"S-1-5-32-545)(A;;GA;;;WD", "S-1", ""} {
		if _, err := pipeSDDL(bad); err == nil {
			t.Errorf("pipeSDDL(%q) accepted", bad)
		}
	}
}

// TestNodeNameFlag: --node-name names the node in its audit records;
// without it $NODE_NAME does, and without that the host name.
func TestNodeNameFlag(t *testing.T) {
	resetKlog(t)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", nil, host},
		{"node-from-env", nil, "node-from-env"},
		{"node-from-env", []string{"--node-name=node-from-flag"}, "node-from-flag"},
	} {
		t.Setenv("NODE_NAME", tc.env)
		if got := auditOptionsOf(t, tc.args); got.NodeName != tc.want {
			t.Errorf("NODE_NAME=%q %q: the node's audit records name %q, want %q", tc.env, tc.args, got.NodeName, tc.want)
		}
	}
}
