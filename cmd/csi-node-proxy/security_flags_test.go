package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

func TestParseSecurityFlags(t *testing.T) {
	resetKlog(t)
	cfg, err := parseFlagsWith(nil, registry)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Policy != "" || cfg.AuditLog != "" || cfg.AuditReads || cfg.AuditSync || cfg.PipeGroup != "" || cfg.PolicyReloadInterval != policy.DefaultReloadInterval {
		t.Errorf("security defaults: %+v", cfg)
	}
	cfg, err = parseFlagsWith([]string{"--policy=/etc/p.yaml", "--policy-reload-interval=3s", "--audit-log=-", "--audit-reads", "--audit-sync", "--pipe-group=S-1-5-32-545"}, registry)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Policy != "/etc/p.yaml" || cfg.PolicyReloadInterval != 3*time.Second || cfg.AuditLog != "-" || !cfg.AuditReads || !cfg.AuditSync || cfg.PipeGroup != "S-1-5-32-545" {
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

// recordAuditOpens makes the daemon record the Options it opens each audit
// log with, until the test ends: the flag tests check what reaches the
// audit Logger, not what the Logger then does.
func recordAuditOpens(t *testing.T) *[]audit.Options {
	t.Helper()
	var got []audit.Options
	open := openAuditLog
	t.Cleanup(func() { openAuditLog = open })
	openAuditLog = func(dest string, o audit.Options) (*audit.Logger, error) {
		got = append(got, o)
		return open(dest, o)
	}
	return &got
}

// setupSecurityWith parses args, with an audit log in a fresh directory,
// as the daemon's flags, runs the daemon's security setup on them and
// closes what it opened; it returns the parsed Config.
func setupSecurityWith(t *testing.T, args []string) Config {
	t.Helper()
	cfg, err := parseFlagsWith(append([]string{"--audit-log=" + filepath.Join(t.TempDir(), "audit.log")}, args...), registry)
	if err != nil {
		t.Fatal(err)
	}
	s, err := setupSecurity(cfg, hostpath.Windows)
	if err != nil {
		t.Fatal(err)
	}
	s.close()
	return cfg
}

// TestAuditSyncFlag: --audit-sync reaches the audit Logger's Options
// (Sync), and only it does; the audit package's own tests show what Sync
// does to the file, and test/soak's TestAuditSync shows the daemon's
// records reaching the disk before each call goes on.
func TestAuditSyncFlag(t *testing.T) {
	resetKlog(t)
	got := recordAuditOpens(t)
	for _, tc := range []struct {
		args []string
		sync bool
	}{
		{nil, false},
		{[]string{"--audit-sync"}, true},
		{[]string{"--audit-sync=false"}, false},
		{[]string{"--audit-sync", "--audit-reads"}, true},
	} {
		*got = nil
		cfg := setupSecurityWith(t, tc.args)
		if got := *got; len(got) != 1 || got[0].Sync != tc.sync || got[0].Reads != cfg.AuditReads {
			t.Errorf("%q: the audit log was opened with %+v, want Sync %v", tc.args, got, tc.sync)
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

// TestNodeNameFlag: --node-name names the node in the audit Logger's
// Options; without it $NODE_NAME does, and without that the host name.
func TestNodeNameFlag(t *testing.T) {
	resetKlog(t)
	got := recordAuditOpens(t)
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
		*got = nil
		setupSecurityWith(t, tc.args)
		if got := *got; len(got) != 1 || got[0].Node != tc.want {
			t.Errorf("NODE_NAME=%q %q: the audit log was opened with %+v, want Node %q", tc.env, tc.args, got, tc.want)
		}
	}
}
