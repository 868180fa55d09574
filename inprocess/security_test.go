package inprocess

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/poll"
)

// readAudit returns the outcome ("done") records of the audit file, one
// per call; a change's intent record must come before its outcome, under
// the same ID (auditlog.CheckIntents), unless the change was refused
// Unavailable, and every intent must have its outcome.
func readAudit(t *testing.T, path string) []auditlog.Record {
	t.Helper()
	recs := auditlog.Read(t, path)
	unavailable := func(r auditlog.Record) bool { return r.Code == "Unavailable" }
	for _, p := range auditlog.CheckIntents(recs, auditlog.IntentOptions{Refused: unavailable}) {
		t.Error(p)
	}
	return auditlog.Done(recs)
}

// onlyBIOS allows every caller GetBIOSSerialNumber and nothing else.
const onlyBIOS = "rules:\n- name: bios\n  callers: [{any: true}]\n  allow: [{methods: [system.GetBIOSSerialNumber]}]\n"

// TestEveryMethodGuarded calls every method of every group through a Node
// whose policy denies all but one: each is refused by the policy under its
// own group and name, and audited as such. So no wrapper skips the guard
// or names another method.
func TestEveryMethodGuarded(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.log")
	n := simNode(t, Options{PolicyData: []byte(onlyBIOS), AuditLog: log})
	groups := map[string]reflect.Value{
		"disk": reflect.ValueOf(n.Disk()), "volume": reflect.ValueOf(n.Volume()), "filesystem": reflect.ValueOf(n.Filesystem()),
		"smb": reflect.ValueOf(n.SMB()), "iscsi": reflect.ValueOf(n.ISCSI()), "system": reflect.ValueOf(n.System()),
		"smbmappings": reflect.ValueOf(n.SMBMappings()),
	}
	ifaces := map[string]reflect.Type{
		"disk": reflect.TypeFor[disk.Interface](), "volume": reflect.TypeFor[volume.Interface](), "filesystem": reflect.TypeFor[filesystem.Interface](),
		"smb": reflect.TypeFor[smb.Interface](), "iscsi": reflect.TypeFor[iscsi.Interface](), "system": reflect.TypeFor[system.Interface](),
		"smbmappings": reflect.TypeFor[smbmappings.Interface](),
	}
	var want []string
	calls := 0
	for group, it := range ifaces {
		for i := range it.NumMethod() {
			m := it.Method(i)
			req := reflect.New(m.Type.In(1).Elem())
			out := groups[group].MethodByName(m.Name).Call([]reflect.Value{reflect.ValueOf(t.Context()), req})
			err, _ := out[1].Interface().(error)
			calls++
			if group == "system" && m.Name == "GetBIOSSerialNumber" {
				if err != nil {
					t.Errorf("the allowed method failed: %v", err)
				}
				continue
			}
			if !errors.Is(err, errdefs.ErrPermissionDenied) || !strings.Contains(err.Error(), " may not call "+group+"."+m.Name+": no rule allows it") {
				t.Errorf("%s.%s: %v; want the policy's denial", group, m.Name, err)
			}
			want = append(want, group+"."+m.Name)
		}
	}
	if calls != 41 {
		t.Errorf("%d methods called; the seven groups (upstream's six and smbmappings) have 41", calls)
	}
	lines := readAudit(t, log)
	var got []string
	for _, l := range lines {
		if l.Decision != "deny" || l.Code != "PermissionDenied" || l.Endpoint != Endpoint || l.Version != Version || l.FullMethod != l.Group+"."+l.Method {
			t.Errorf("record %+v", l)
		}
		got = append(got, l.Group+"."+l.Method)
	}
	if !sameSet(got, want) {
		t.Errorf("audited denials %v, want %v", got, want)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		seen[x]--
	}
	for _, v := range seen {
		if v != 0 {
			return false
		}
	}
	return true
}

// TestPathRootsDenyAndAudit: a rule's path roots confine model requests;
// the denial reads as the daemon's and is in the audit log with the
// process as the caller.
func TestPathRootsDenyAndAudit(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.log")
	pol := `rules:
- name: driver
  callers: [{any: true}]
  allow: [{groups: [filesystem], methods: ["*"]}]
  pathRoots: ['C:\var\lib\kubelet\plugins']
`
	n := simNode(t, Options{PolicyData: []byte(pol), AuditLog: log})
	ctx := t.Context()
	if _, err := n.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: kubelet + `\plugins\x`}); err != nil {
		t.Fatalf("inside the roots: %v", err)
	}
	_, err := n.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: kubelet + `\pods\x`})
	if !errors.Is(err, errdefs.ErrPermissionDenied) || !strings.Contains(err.Error(), `path "C:\\var\\lib\\kubelet\\pods\\x" is outside the path roots`) {
		t.Fatalf("outside the roots: %v", err)
	}
	lines := readAudit(t, log)
	if len(lines) != 2 {
		t.Fatalf("%d records, want 2: %+v", len(lines), lines)
	}
	ok, denied := lines[0], lines[1]
	if ok.Decision != "allow" || ok.Rule != "driver" || ok.Code != "OK" || ok.Kind != "mutate" || ok.Request["path"] != kubelet+`\plugins\x` {
		t.Errorf("allowed record %+v", ok)
	}
	if denied.Decision != "deny" || denied.Code != "PermissionDenied" || denied.Message != err.Error() || !strings.Contains(denied.Reason, "outside the path roots") {
		t.Errorf("denied record %+v", denied)
	}
	if denied.Caller.PID != os.Getpid() {
		t.Errorf("caller %+v, want this process", denied.Caller)
	}
}

// TestSecretsNeverLogged: an SMB password and CHAP secrets reach the host
// but never the audit log, which shows that they were sent.
func TestSecretsNeverLogged(t *testing.T) {
	const password, chap, mutual = "Sh4re-P@ss-7731", "chap-s3cret-0042", "mutual-s3cret-0099"
	cfg := simulated.DefaultConfig(nil)
	cfg.SMBShares = []simulated.SMBShare{{Path: `\\fileserver\share`, Username: `CONTOSO\csi`, Password: password}}
	log := filepath.Join(t.TempDir(), "audit.log")
	n := simNode(t, Options{Simulated: &cfg, AuditLog: log})
	ctx := t.Context()
	if _, err := n.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: kubelet + `\plugins`}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.SMB().NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{RemotePath: `\\fileserver\share`, LocalPath: kubelet + `\plugins\smb`, Username: `CONTOSO\csi`, Password: password}); err != nil {
		t.Fatalf("NewSmbGlobalMapping: %v", err)
	}
	_, _ = n.ISCSI().ConnectTarget(ctx, &iscsi.ConnectTargetRequest{TargetPortal: &iscsi.TargetPortal{TargetAddress: "10.0.0.9"}, IQN: "iqn.2003-01.org.example:t", AuthType: iscsi.AuthOneWayCHAP, ChapUsername: "u", ChapSecret: chap})
	_, _ = n.ISCSI().SetMutualChapSecret(ctx, &iscsi.SetMutualChapSecretRequest{MutualChapSecret: mutual})
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{password, chap, mutual} {
		if strings.Contains(string(raw), s) {
			t.Errorf("secret %q in the audit log:\n%s", s, raw)
		}
	}
	lines := readAudit(t, log)
	redacted := map[string]string{"NewSmbGlobalMapping": "password", "ConnectTarget": "chap_secret", "SetMutualChapSecret": "mutual_chap_secret"}
	for _, l := range lines {
		if f, ok := redacted[l.Method]; ok {
			if l.Request[f] != "REDACTED" {
				t.Errorf("%s: request %v, want %s REDACTED", l.Method, l.Request, f)
			}
			delete(redacted, l.Method)
		}
	}
	if len(redacted) != 0 {
		t.Errorf("no records of %v", redacted)
	}
}

// TestPolicyReload: a changed policy file takes effect without a restart;
// a broken one leaves the last good policy in force.
func TestPolicyReload(t *testing.T) {
	file := filepath.Join(t.TempDir(), "policy.yaml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file+".new", []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		// Windows refuses to rename over a file while any handle to it
		// is open (MoveFileEx without POSIX semantics), which the reloads
		// polling every 10 ms sometimes hold: retry, as an operator's
		// tool would.
		deadline := time.Now().Add(5 * time.Second)
		for {
			err := os.Rename(file+".new", file)
			if err == nil {
				return
			}
			if runtime.GOOS != "windows" || time.Now().After(deadline) {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	write(onlyBIOS)
	n := simNode(t, Options{PolicyFile: file, PolicyReloadInterval: 10 * time.Millisecond})
	ctx := t.Context()
	stats := func() error {
		_, err := n.Disk().GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: 0})
		return err
	}
	if err := stats(); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Fatalf("before the reload: %v", err)
	}
	write(strings.Replace(onlyBIOS, "system.GetBIOSSerialNumber", "disk.GetDiskStats", 1))
	waitFor(t, func() bool { return stats() == nil })
	write("rules: [") // broken: the previous policy stays
	if err := n.Reload(); err == nil {
		t.Error("Reload of a broken file reported no error")
	}
	if err := stats(); err != nil {
		t.Errorf("after a broken file: %v", err)
	}
	write(onlyBIOS)
	if err := n.Reload(); err != nil {
		t.Fatal(err)
	}
	if err := stats(); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("after Reload: %v", err)
	}
}

// waitFor waits up to 10 s for cond, checking every 5 ms.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	poll.Must(t, "the condition holds", 10*time.Second, 5*time.Millisecond, cond)
}

// TestRefusesToStart: what the daemon refuses at start, New refuses.
func TestRefusesToStart(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]Options{
		"bad policy":       {PolicyData: []byte("rules: []")},
		"unknown method":   {PolicyData: []byte(strings.Replace(onlyBIOS, "GetBIOSSerialNumber", "GetBIOS", 1))},
		"missing policy":   {PolicyFile: filepath.Join(dir, "none.yaml")},
		"two policies":     {PolicyFile: filepath.Join(dir, "p.yaml"), PolicyData: []byte(onlyBIOS)},
		"audit unopenable": {AuditLog: filepath.Join(dir, "no", "such", "dir", "audit.log")},
		"unknown host":     {Host: "solaris"},
	}
	for name, o := range cases {
		if o.Host == "" {
			o.Host = HostSimulated
		}
		if n, err := New(t.Context(), o); err == nil {
			_ = n.Close()
			t.Errorf("%s: New succeeded", name)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := New(ctx, Options{Host: HostSimulated}); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context: %v", err)
	}
}
