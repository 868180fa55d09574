//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/poll"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/syncbuf"
)

func itoa(n int) string { return strconv.Itoa(n) }

// daemon is a running csi-node-proxy started by a test.
type daemon struct {
	p       *daemonbin.Process
	cmd     *exec.Cmd
	stderr  *syncbuf.Buffer
	sockDir string
}

// startDaemon runs bin with args on fresh sockets and waits until the
// endpoint named wait serves. It is killed when the test ends unless it
// exited.
func startDaemon(t *testing.T, bin string, wait string, args ...string) *daemon {
	t.Helper()
	dir := sockdir.New(t, "cnp")
	d := &daemon{stderr: &syncbuf.Buffer{}, sockDir: filepath.Join(dir, "run")}
	d.p = daemonbin.Start(t, bin, daemonbin.Options{
		Args:   append([]string{"--host=simulated", "--socket-dir=" + d.sockDir}, args...),
		Output: d.stderr, StderrOnly: true, AtEnd: daemonbin.Kill,
		Ready: func() error {
			// Every endpoint is created before the daemon logs that it
			// started; the socket alone would not say the others exist.
			if fi, err := os.Lstat(d.socket(wait)); err != nil || fi.Mode().Type() != os.ModeSocket {
				return fmt.Errorf("%s did not appear", d.socket(wait))
			}
			if !strings.Contains(d.stderr.String(), "csi-node-proxy started") {
				return errors.New("the daemon has not logged that it started")
			}
			return nil
		},
		ReadyTimeout: 20 * time.Second,
	})
	d.cmd = d.p.Cmd
	return d
}

func (d *daemon) socket(name string) string {
	return transport.Endpoint{Name: name, Options: transport.Options{SocketDir: d.sockDir}}.Address()
}

func (d *daemon) conn(t *testing.T, name string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(transport.Target(d.socket(name)), transport.DialOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// stop sends SIGTERM and waits for a clean exit; a daemon that does not
// exit 0 within 30 s ends the test.
func (d *daemon) stop(t *testing.T) {
	t.Helper()
	failed := t.Failed()
	d.p.Stop(t, 30*time.Second)
	if !failed && t.Failed() {
		t.FailNow()
	}
}

// auditLines reads an audit file's outcome records, one per call: a
// change's intent record (written before it ran, same id) is checked to
// come first, and to have its outcome (auditlog.CheckIntents), and left
// out. No refusal is excused from having an intent: none is expected here.
func auditLines(t *testing.T, path string) []auditlog.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	recs := auditlog.Parse(t, b)
	for _, p := range auditlog.CheckIntents(recs, auditlog.IntentOptions{}) {
		t.Error(p)
	}
	return auditlog.Done(recs)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

// waitUntil waits up to 10 s for cond, checking every 20 ms.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Must(t, what, 10*time.Second, 20*time.Millisecond, cond)
}

// TestDaemonPolicyAndAudit runs the daemon with a policy and an audit
// log, changes the policy under it, and rotates the audit log with SIGHUP.
func TestDaemonPolicyAndAudit(t *testing.T) {
	bin := buildDaemon(t)
	dir := t.TempDir()
	policyPath := filepath.Join(dir, "policy.yaml")
	auditPath := filepath.Join(dir, "audit.log")
	me := os.Geteuid()
	allowMe := `
rules:
- name: me
  callers: [{uids: [` + itoa(me) + `]}]
  allow:
  - groups: [disk, filesystem]
    methods: ["*"]
  pathRoots: ['C:\var\lib\kubelet\plugins']
`
	writeFile(t, policyPath, allowMe)
	d := startDaemon(t, bin, "csi-proxy-filesystem-v1", "--policy="+policyPath, "--policy-reload-interval=50ms",
		"--audit-log="+auditPath, "--apis=disk-v1,filesystem-v1,system-v1alpha1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fs := filesystemv1.NewFilesystemClient(d.conn(t, "csi-proxy-filesystem-v1"))
	disk := diskv1.NewDiskClient(d.conn(t, "csi-proxy-disk-v1"))

	if _, err := fs.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: `C:\var\lib\kubelet\plugins\x`}); err != nil {
		t.Fatalf("allowed Mkdir: %v", err)
	}
	_, err := fs.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: `C:\var\lib\kubelet\pods\x`})
	if st := status.Convert(err); st.Code() != codes.PermissionDenied || !strings.Contains(st.Message(), "outside the path roots") {
		t.Errorf("Mkdir outside the path roots = %v", err)
	}
	if _, err := disk.ListDiskLocations(ctx, &diskv1.ListDiskLocationsRequest{}); err != nil {
		t.Errorf("read: %v", err)
	}
	recs := auditLines(t, auditPath)
	if len(recs) != 2 || recs[0].Decision != "allow" || recs[0].Rule != "me" || recs[1].Decision != "deny" {
		t.Fatalf("audit records %+v; want the Mkdir and the denial, no read", recs)
	}

	// Rotate: rename, SIGHUP, and the next record lands in a new file.
	if err := os.Rename(auditPath, auditPath+".1"); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the audit log is reopened", func() bool { return strings.Contains(d.stderr.String(), "Audit log reopened") })
	if _, err := fs.Rmdir(ctx, &filesystemv1.RmdirRequest{Path: `C:\var\lib\kubelet\plugins\x`}); err != nil {
		t.Fatalf("Rmdir: %v", err)
	}
	if recs := auditLines(t, auditPath); len(recs) != 1 || recs[0].Method != "Rmdir" {
		t.Errorf("new audit file: %+v", recs)
	}

	// A broken policy changes nothing.
	writeFile(t, policyPath, "rules: [")
	waitUntil(t, "the broken policy is reported", func() bool {
		return strings.Contains(d.stderr.String(), "Policy file not reloaded; the previous policy stays in force")
	})
	if _, err := fs.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: `C:\var\lib\kubelet\plugins\y`}); err != nil {
		t.Errorf("Mkdir after a broken policy file: %v", err)
	}
	// Deleting the policy file does not open anything up either.
	if err := os.Remove(policyPath); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: `C:\var\lib\kubelet\pods\y`}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("Mkdir outside the roots with the policy file gone = %v", err)
	}
	// A valid change takes effect without a restart: now nobody may.
	writeFile(t, policyPath, strings.Replace(allowMe, "uids: ["+itoa(me)+"]", "uids: [4242]", 1))
	waitUntil(t, "the new policy applies", func() bool {
		_, err := fs.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: `C:\var\lib\kubelet\plugins\z`})
		return status.Code(err) == codes.PermissionDenied
	})
	d.stop(t)
	logs := d.stderr.String()
	for _, want := range []string{`"Policy loaded"`, `"Auditing calls"`, `"call denied"`, `"Policy reloaded"`, `caller="pid `} {
		if !strings.Contains(logs, want) {
			t.Errorf("daemon log lacks %q", want)
		}
	}
}

// TestDaemonRefusesBrokenPolicy: a daemon told to use a policy it cannot
// load does not start at all.
func TestDaemonRefusesBrokenPolicy(t *testing.T) {
	bin := buildDaemon(t)
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.yaml")
	writeFile(t, broken, "rules:\n- name: x\n  callers: [{uid: [0]}]\n  allow: [{methods: ['*']}]\n")
	badRoot := filepath.Join(dir, "badroot.yaml")
	writeFile(t, badRoot, "rules:\n- name: x\n  callers: [{uids: [0]}]\n  allow: [{methods: ['*']}]\n  pathRoots: [/var/lib/kubelet]\n")
	unknownMethod := filepath.Join(dir, "method.yaml")
	writeFile(t, unknownMethod, "rules:\n- name: x\n  callers: [{uids: [0]}]\n  allow: [{groups: [disk], methods: [FormatDisk]}]\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy=" + filepath.Join(dir, "missing.yaml")}, "no such file"},
		{[]string{"--policy=" + broken}, `unknown field "rules[0].callers[0].uid"`},
		{[]string{"--policy=" + badRoot}, "pathRoots"}, // a POSIX root on the Windows-style simulated host
		{[]string{"--policy=" + unknownMethod}, `no method "FormatDisk"`},
		{[]string{"--audit-log=" + filepath.Join(dir, "no", "such", "dir", "audit.log")}, "audit log"},
		{[]string{"--pipe-group=Users"}, "not a SID"},
	} {
		sock, err := os.MkdirTemp("", "cnp")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(sock)
		code, stderr := daemonbin.RunToExit(t, bin, append([]string{"--host=simulated", "--socket-dir=" + sock}, tc.args...)...)
		if code != exitFailure {
			t.Errorf("%q: exit status %d, want %d", tc.args, code, exitFailure)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: stderr %q lacks %q", tc.args, stderr, tc.want)
		}
		if entries, _ := os.ReadDir(sock); len(entries) != 0 {
			t.Errorf("%q: endpoints created before refusing: %v", tc.args, entries)
		}
	}
}
