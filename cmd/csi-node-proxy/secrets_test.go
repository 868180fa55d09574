//go:build unix

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	iscsiv1alpha2 "github.com/csi-node-proxy/csi-node-proxy/api/iscsi/v1alpha2"
	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
)

// secretsEnv carries the suite's setup from TestNoSecretInAnyOutput to
// the TestSecretsSuite it runs in a child process.
const secretsEnv = "CSI_NODE_PROXY_SECRETS_SUITE"

// secretSuite is what the child needs: the daemon binary, a work
// directory, and the secrets to send.
type secretSuite struct {
	Daemon  string            `json:"daemon"`
	Dir     string            `json:"dir"`
	Secrets map[string]string `json:"secrets"`
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, (n+1)/2)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)[:n]
}

// TestNoSecretInAnyOutput runs a suite of calls that carry SMB passwords
// and CHAP secrets (right, wrong, malformed, and refused by the policy)
// through the real daemon at the highest log verbosity with every call
// audited, then scans everything that suite produced for those secrets:
// the daemon's log, the audit log, and the test's own output (the suite
// runs in a child `go test` process so its output can be read; it logs
// every response and error it gets).
func TestNoSecretInAnyOutput(t *testing.T) {
	bin := buildDaemon(t)
	dir := t.TempDir()
	// Unique random strings, so a hit can only be a leak.
	secrets := map[string]string{
		"smb password":                "pw-" + randomHex(t, 29),
		"wrong smb password":          "pw-" + randomHex(t, 29),
		"overlong smb password":       "pw-" + randomHex(t, 1100),
		"denied smb password":         "pw-" + randomHex(t, 29),
		"malformed share pw":          "pw-" + randomHex(t, 29),
		"chap secret":                 randomHex(t, 16),
		"wrong chap secret":           randomHex(t, 16),
		"overlong chap secret":        randomHex(t, 20),
		"mutual chap secret":          randomHex(t, 14),
		"short mutual secret":         randomHex(t, 11),
		"secret without chap":         randomHex(t, 13),
		"denied mutual secret":        randomHex(t, 15),
		"unknown caller smb password": "pw-" + randomHex(t, 29),
	}
	suite, err := json.Marshal(secretSuite{Daemon: bin, Dir: dir, Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^TestSecretsSuite$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), secretsEnv+"="+string(suite))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSecretsSuite") {
		t.Fatalf("the suite failed: %v\n%s", err, out)
	}

	outputs := map[string]string{"go test output": string(out)}
	for _, name := range []string{"daemon.log", "audit.log", "audit.log.1"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		outputs[name] = string(b)
	}
	for what, secret := range secrets {
		for where, text := range outputs {
			// The whole secret, and its first 12 characters in case a
			// message cut it short.
			if strings.Contains(text, secret) || strings.Contains(text, secret[:min(12, len(secret))]) {
				t.Errorf("the %s reached the %s", what, where)
			}
		}
	}
	// The scan means something only if the secrets went through: every
	// secret-carrying call is in the audit log, redacted, and the daemon
	// logged the requests.
	audited := strings.Count(outputs["audit.log"]+outputs["audit.log.1"], `"REDACTED"`)
	if audited < 12 {
		t.Errorf("only %d redacted secrets in the audit log, want at least 12", audited)
	}
	// Calls the policy denies are logged without their payload.
	if n := strings.Count(outputs["daemon.log"], `REDACTED`); n < 10 {
		t.Errorf("only %d redacted secrets in the daemon log, want at least 10", n)
	}
	for _, want := range []string{`"decision":"deny"`, `"code":"PermissionDenied"`, `"code":"InvalidArgument"`, `"method":"SetMutualChapSecret"`} {
		if !strings.Contains(outputs["audit.log"]+outputs["audit.log.1"], want) {
			t.Errorf("the audit log lacks %s", want)
		}
	}
}

// TestSecretsSuite is the child half of TestNoSecretInAnyOutput.
func TestSecretsSuite(t *testing.T) {
	raw := os.Getenv(secretsEnv)
	if raw == "" {
		t.Skip("run by TestNoSecretInAnyOutput")
	}
	var s secretSuite
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatal(err)
	}
	sec := s.Secrets
	const iqn = "iqn.2003-01.org.example:target1"
	sim := map[string]any{
		"workingDirs": []string{`C:\var\lib\kubelet`, `C:\var\lib\kubelet\plugins\smb`},
		"smbShares":   []any{map[string]any{"path": `\\fileserver\share`, "username": `CONTOSO\csi`, "password": sec["smb password"]}},
		"iscsiTargets": []any{map[string]any{
			"portal": map[string]any{"address": "10.0.0.10", "port": 3260}, "iqn": iqn,
			"chapUsername": "initiator", "chapSecret": sec["chap secret"], "mutualSecret": sec["mutual chap secret"],
			"luns": []any{map[string]any{"size": "1GiB"}},
		}},
	}
	b, err := json.Marshal(sim)
	if err != nil {
		t.Fatal(err)
	}
	simPath := filepath.Join(s.Dir, "sim.json")
	writeFile(t, simPath, string(b))
	me := itoa(os.Geteuid())
	policyPath := filepath.Join(s.Dir, "policy.yaml")
	writeFile(t, policyPath, `
rules:
- name: iscsi
  callers: [{uids: [`+me+`]}]
  allow: [{groups: [iscsi], methods: ["*"]}]
- name: smb
  callers: [{uids: [`+me+`]}]
  allow: [{groups: [smb], methods: ["*"]}]
  pathRoots: ['C:\var\lib\kubelet\plugins']
`)
	audit := filepath.Join(s.Dir, "audit.log")
	d := startDaemon(t, s.Daemon, "csi-proxy-iscsi-v1alpha2", "--sim-config="+simPath, "-v=10",
		"--policy="+policyPath, "--audit-log="+audit, "--audit-reads")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// Each call is logged with what came back, never with what was sent.
	call := func(name string, want codes.Code, resp any, err error) {
		t.Helper()
		t.Logf("%s: response %v, error %v", name, resp, err)
		if st := status.Convert(err); st.Code() != want {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	smb := smbv1.NewSmbClient(d.conn(t, "csi-proxy-smb-v1"))
	mapping := func(remote, local, password string) (*smbv1.NewSmbGlobalMappingResponse, error) {
		return smb.NewSmbGlobalMapping(ctx, &smbv1.NewSmbGlobalMappingRequest{
			RemotePath: remote, LocalPath: local, Username: `CONTOSO\csi`, Password: password,
		})
	}
	const share, local = `\\fileserver\share`, `C:\var\lib\kubelet\plugins\smb\pv1`
	r1, err := mapping(share, "", sec["wrong smb password"])
	call("wrong password", codes.PermissionDenied, r1, err)
	r1, err = mapping(share, "", sec["overlong smb password"])
	call("overlong password", codes.InvalidArgument, r1, err)
	r1, err = mapping("not-a-share", "", sec["malformed share pw"])
	call("malformed share", codes.InvalidArgument, r1, err)
	r1, err = mapping(share, `C:\Windows\Temp\x`, sec["denied smb password"])
	call("local path outside the policy's roots", codes.PermissionDenied, r1, err)
	r1, err = mapping(share, local, sec["smb password"])
	call("right password", codes.OK, r1, err)
	r2, err := smb.RemoveSmbGlobalMapping(ctx, &smbv1.RemoveSmbGlobalMappingRequest{RemotePath: share})
	call("unmap", codes.OK, r2, err)

	// Rotate the audit log halfway, as logrotate would.
	if err := os.Rename(audit, audit+".1"); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the audit log is reopened", func() bool { return strings.Contains(d.stderr.String(), "Audit log reopened") })

	is := iscsiv1alpha2.NewIscsiClient(d.conn(t, "csi-proxy-iscsi-v1alpha2"))
	portal := &iscsiv1alpha2.TargetPortal{TargetAddress: "10.0.0.10", TargetPort: 3260}
	r3, err := is.AddTargetPortal(ctx, &iscsiv1alpha2.AddTargetPortalRequest{TargetPortal: portal})
	call("add portal", codes.OK, r3, err)
	connect := func(auth iscsiv1alpha2.AuthenticationType, secret string) (*iscsiv1alpha2.ConnectTargetResponse, error) {
		user := "initiator"
		if auth == iscsiv1alpha2.AuthenticationType_NONE {
			user = ""
		}
		return is.ConnectTarget(ctx, &iscsiv1alpha2.ConnectTargetRequest{
			TargetPortal: portal, Iqn: iqn, AuthType: auth, ChapUsername: user, ChapSecret: secret,
		})
	}
	r4, err := connect(iscsiv1alpha2.AuthenticationType_ONE_WAY_CHAP, sec["wrong chap secret"])
	call("wrong CHAP secret", codes.PermissionDenied, r4, err)
	r4, err = connect(iscsiv1alpha2.AuthenticationType_ONE_WAY_CHAP, sec["overlong chap secret"])
	call("overlong CHAP secret", codes.InvalidArgument, r4, err)
	r4, err = connect(iscsiv1alpha2.AuthenticationType_NONE, sec["secret without chap"])
	call("secret without CHAP", codes.InvalidArgument, r4, err)
	r5, err := is.SetMutualChapSecret(ctx, &iscsiv1alpha2.SetMutualChapSecretRequest{MutualChapSecret: sec["short mutual secret"]})
	call("short mutual secret", codes.InvalidArgument, r5, err)
	r5, err = is.SetMutualChapSecret(ctx, &iscsiv1alpha2.SetMutualChapSecretRequest{MutualChapSecret: sec["mutual chap secret"]})
	call("mutual secret", codes.OK, r5, err)
	r4, err = connect(iscsiv1alpha2.AuthenticationType_MUTUAL_CHAP, sec["chap secret"])
	call("mutual CHAP login", codes.OK, r4, err)
	r6, err := is.GetTargetDisks(ctx, &iscsiv1alpha2.GetTargetDisksRequest{TargetPortal: portal, Iqn: iqn})
	call("target disks", codes.OK, r6, err)
	r7, err := is.DisconnectTarget(ctx, &iscsiv1alpha2.DisconnectTargetRequest{TargetPortal: portal, Iqn: iqn})
	call("disconnect", codes.OK, r7, err)

	// A daemon whose policy does not know this caller: a denied request
	// carrying a secret must leave no more trace than an allowed one.
	d.stop(t)
	policy2 := filepath.Join(s.Dir, "policy2.yaml")
	writeFile(t, policy2, "rules:\n- name: nobody\n  callers: [{uids: [4242]}]\n  allow: [{methods: ['*']}]\n")
	d2 := startDaemon(t, s.Daemon, "csi-proxy-iscsi-v1alpha2", "--sim-config="+simPath, "-v=10",
		"--policy="+policy2, "--audit-log="+audit, "--audit-reads")
	is2 := iscsiv1alpha2.NewIscsiClient(d2.conn(t, "csi-proxy-iscsi-v1alpha2"))
	r5, err = is2.SetMutualChapSecret(ctx, &iscsiv1alpha2.SetMutualChapSecretRequest{MutualChapSecret: sec["denied mutual secret"]})
	call("mutual secret from a caller the policy does not know", codes.PermissionDenied, r5, err)
	r1, err = smbv1.NewSmbClient(d2.conn(t, "csi-proxy-smb-v1")).NewSmbGlobalMapping(ctx, &smbv1.NewSmbGlobalMappingRequest{
		RemotePath: share, LocalPath: local, Username: `CONTOSO\csi`, Password: sec["unknown caller smb password"],
	})
	call("mapping from a caller the policy does not know", codes.PermissionDenied, r1, err)
	d2.stop(t)

	// Both daemons' logs go where the parent scans them.
	writeFile(t, filepath.Join(s.Dir, "daemon.log"), d.stderr.String()+d2.stderr.String())
}
