//go:build linux

package server

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

// nobody is the user ID the tests connect as.
const nobody = 65534

// asUser runs this test binary as a client (see TestMain) under uid and
// gid, connecting to addr, and returns what it saw.
func asUser(t *testing.T, uid, gid uint32, addr, password string) childResult {
	t.Helper()
	bin := childBinary(t)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), childEnv+"="+addr, childPasswordEnv+"="+password)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client as uid %d: %v\n%s", uid, err, stderr.String())
	}
	var r childResult
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	if r.UID != int(uid) {
		t.Fatalf("client ran as uid %d, want %d", r.UID, uid)
	}
	return r
}

// childBinary copies the test binary where any user may run it: go test
// builds it in a directory only its owner can enter.
func childBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "child")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	bin := filepath.Join(dir, "client")
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// openSocketDir lets every user reach the sockets in the test's socket
// directory, so only the sockets' own mode decides.
func openSocketDir(t *testing.T, cfg Config) {
	t.Helper()
	if err := os.Chmod(cfg.Transport.SocketDir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// A caller the policy does not name is refused, and the refusal is in the
// audit log with the caller's real uid.
func TestForeignUIDRefusedByPolicy(t *testing.T) {
	testutil.RequireRoot(t)
	captureLogs(t, 0)
	store := writePolicy(t, `
rules:
- name: root-only
  callers: [{uids: [0]}]
  allow: [{groups: [smb], methods: ["*"]}]
`)
	al, path := openAudit(t, false)
	cfg := testConfig(t)
	cfg.Transport.SocketMode = 0o666 // the socket lets everybody in; the policy decides
	cfg.Transport.SocketUID, cfg.Transport.SocketGID = 0, 0
	cfg.Policy, cfg.Audit = store, al
	openSocketDir(t, cfg)
	f := &callerSmb{}
	s := start(t, cfg, smbGroupAPI(f))
	addr := s.Endpoints()[0].Address

	r := asUser(t, nobody, nobody, addr, "child-secret-1")
	if r.DialErr != "" || r.Code != "PermissionDenied" || !strings.Contains(r.Message, "uid 65534") ||
		!strings.Contains(r.Message, "may not call smb.NewSmbGlobalMapping: no rule allows it") {
		t.Errorf("uid %d got %+v, want PermissionDenied", nobody, r)
	}
	// Root, which the policy names, gets through.
	if r := asUser(t, 0, 0, addr, "child-secret-2"); r.Code != "OK" {
		t.Errorf("root got %+v, want OK", r)
	}
	if f.calls != 1 {
		t.Errorf("handler ran %d times, want once (for root)", f.calls)
	}
	recs := readAudit(t, path)
	if len(recs) != 2 {
		t.Fatalf("audit records %+v, want the denial and root's call", recs)
	}
	d := recs[0]
	if d.Decision != "deny" || d.Code != "PermissionDenied" || d.Caller.UID == nil || *d.Caller.UID != nobody ||
		d.Caller.PID <= 0 || d.Method != "NewSmbGlobalMapping" || d.Request["password"] != "REDACTED" {
		t.Errorf("denial recorded as %+v", d)
	}
	if a := recs[1]; a.Decision != "allow" || a.Rule != "root-only" || a.Caller.UID == nil || *a.Caller.UID != 0 {
		t.Errorf("root's call recorded as %+v", a)
	}
	raw, _ := os.ReadFile(path)
	if bytes.Contains(raw, []byte("child-secret")) {
		t.Errorf("a password reached the audit log:\n%s", raw)
	}
}

// The socket's mode keeps other users out before any policy: 0660 owned by
// root:root refuses uid 65534 at connect, 0666 lets it connect.
func TestSocketModeKeepsOthersOut(t *testing.T) {
	testutil.RequireRoot(t)
	captureLogs(t, 0)
	for _, tc := range []struct {
		mode   os.FileMode
		refuse bool
	}{
		{0o660, true},
		{0o666, false},
	} {
		cfg := testConfig(t)
		cfg.Transport.SocketMode = tc.mode
		cfg.Transport.SocketUID, cfg.Transport.SocketGID = 0, 0
		openSocketDir(t, cfg)
		s := start(t, cfg, smbGroupAPI(&callerSmb{}))
		addr := s.Endpoints()[0].Address
		fi, err := os.Stat(addr)
		if err != nil || fi.Mode().Perm() != tc.mode || fi.Sys().(*syscall.Stat_t).Uid != 0 || fi.Sys().(*syscall.Stat_t).Gid != 0 {
			t.Fatalf("socket %s: %v, %v; want mode %#o root:root", addr, fi.Mode(), err, tc.mode)
		}
		r := asUser(t, nobody, nobody, addr, "child-secret-3")
		switch {
		case tc.refuse && !r.EACCES:
			t.Errorf("mode %#o: uid %d got %+v, want EACCES at connect", tc.mode, nobody, r)
		case !tc.refuse && r.Code != "OK":
			t.Errorf("mode %#o: uid %d got %+v, want its call served (no policy)", tc.mode, nobody, r)
		}
		// A member of the socket's group gets in at 0660.
		if tc.refuse {
			if r := asUser(t, nobody, 0, addr, "child-secret-4"); r.Code != "OK" {
				t.Errorf("mode %#o: uid %d in group 0 got %+v, want its call served", tc.mode, nobody, r)
			}
		}
	}
}
