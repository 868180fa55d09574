//go:build linux

package iscsiinit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
)

const (
	// The target and portal of the recorded samples.
	recIQN = "iqn.2026-11.io.example:rec1"
	// recRecord is where iscsiadm -o new files the record of recIQN at
	// 127.0.0.1:3260, relative to the node database.
	recRecord = recIQN + "/127.0.0.1,3260"
	// chapSecret is the CHAP secret the tests log in with. It must never
	// reach an iscsiadm argument.
	chapSecret = "S3cr3t,Chap#1"
)

var recPortal = iscsi.Portal{Address: "127.0.0.1", Port: 3260}

// sample is one iscsiadm run from testdata/iscsiadm: its arguments and
// what it printed and returned.
type sample struct {
	name string
	argv []string
	out  output
}

func loadSample(t *testing.T, name string) sample {
	t.Helper()
	read := func(ext string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", "iscsiadm", name+ext))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	rc, err := strconv.Atoi(strings.TrimSpace(string(read(".rc"))))
	if err != nil {
		t.Fatal(err)
	}
	return sample{
		name: name,
		argv: strings.Split(strings.TrimSuffix(string(read(".argv")), "\n"), "\n"),
		out:  output{Stdout: read(".stdout"), Stderr: read(".stderr"), ExitCode: rc},
	}
}

// replay is a runner that plays back samples in order, checking that each
// call has the sample's arguments, and records every call. It also does
// to the node database what iscsiadm would: -m node -o new writes the
// recorded record file, -o delete removes it.
type replay struct {
	t        *testing.T
	queue    []sample
	calls    [][]string
	nodeDir  string
	atLogin  string      // the record file as iscsiadm --login would read it
	modeOnIt os.FileMode // and its permissions
	// newRecord, when set, is the record -o new writes instead of the
	// recorded Debian one.
	newRecord string
}

func newReplay(t *testing.T, names ...string) *replay {
	r := &replay{t: t}
	for _, n := range names {
		r.queue = append(r.queue, loadSample(t, n))
	}
	t.Cleanup(func() {
		if len(r.queue) > 0 {
			t.Errorf("samples not used: %v", r.queue[0].name)
		}
	})
	return r
}

func (r *replay) Run(_ context.Context, name string, args ...string) (output, error) {
	r.t.Helper()
	if name != DefaultIscsiadm {
		r.t.Errorf("ran %q, want %q", name, DefaultIscsiadm)
	}
	r.calls = append(r.calls, args)
	if len(r.queue) == 0 {
		r.t.Errorf("unexpected iscsiadm %q", args)
		return output{ExitCode: 1}, nil
	}
	s := r.queue[0]
	r.queue = r.queue[1:]
	// The locate marker is random: the recorded one stands for any.
	want := s.argv
	if strings.HasSuffix(s.name, "/node_update_locate") && len(args) == len(want) && markerRE.MatchString(args[len(args)-1]) {
		want = append(append([]string(nil), want[:len(want)-1]...), args[len(args)-1])
	}
	if !reflect.DeepEqual(args, want) {
		r.t.Errorf("iscsiadm %q, want %q (sample %s)", args, s.argv, s.name)
	}
	rec := filepath.Join(r.nodeDir, recRecord)
	switch {
	case s.out.ExitCode == 0 && strings.HasSuffix(s.name, "/node_new"):
		b, err := os.ReadFile(filepath.Join("testdata", "iscsiadm", "recorded", "node_record_file"))
		if err != nil {
			r.t.Fatal(err)
		}
		if r.newRecord != "" {
			b = []byte(r.newRecord)
		}
		_ = os.MkdirAll(filepath.Dir(rec), 0o700)
		if err := os.WriteFile(rec, b, 0o600); err != nil {
			r.t.Fatal(err)
		}
	case s.out.ExitCode == 0 && strings.Contains(s.name, "/node_update_"):
		// What iscsiadm -o update does to the record: the line of the
		// key set to the value, inserted after the auth method when the
		// record had none (as in node_record_file_after_locate).
		key, value := args[len(args)-3], args[len(args)-1]
		b, err := os.ReadFile(rec)
		if err != nil {
			r.t.Fatalf("update of a record that does not exist: %v", err)
		}
		lines := strings.Split(string(b), "\n")
		done := false
		for i, l := range lines {
			if k, _, ok := strings.Cut(l, " = "); ok && k == key {
				lines[i], done = key+" = "+value, true
			}
		}
		for i, l := range lines {
			if !done && strings.HasPrefix(l, "node.session.auth.authmethod = ") {
				lines = append(lines[:i+1], append([]string{key + " = " + value}, lines[i+1:]...)...)
				done = true
			}
		}
		if err := os.WriteFile(rec, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
			r.t.Fatal(err)
		}
	case s.out.ExitCode == 0 && strings.HasSuffix(s.name, "/node_delete"):
		_ = os.Remove(rec)
	case strings.Contains(s.name, "node_login"):
		if b, err := os.ReadFile(rec); err == nil {
			fi, _ := os.Stat(rec)
			r.atLogin, r.modeOnIt = string(b), fi.Mode().Perm()
		}
	}
	return s.out, nil
}

// markerRE is the form of ConnectTarget's locate marker.
var markerRE = regexp.MustCompile(`^csi-node-proxy-locate-[0-9a-f]{16}$`)

// connectSamples are the iscsiadm runs of ConnectTarget up to the login,
// then more.
func connectSamples(more ...string) []string {
	return append([]string{"recorded/node_new", "recorded/node_update_startup", "recorded/node_update_locate"}, more...)
}

// noSecretInArgs fails t if any recorded argument contains a secret.
func (r *replay) noSecretInArgs(secrets ...string) {
	r.t.Helper()
	for _, c := range r.calls {
		for _, a := range c {
			for _, s := range secrets {
				if s != "" && strings.Contains(a, s) {
					r.t.Errorf("iscsiadm argument %q contains a secret", a)
				}
			}
		}
	}
}

func newTestHost(t *testing.T, r *replay, cfg Config) *Host {
	t.Helper()
	if cfg.NodeDir == "" {
		cfg.NodeDir = filepath.Join(t.TempDir(), "nodes")
		if err := os.Mkdir(cfg.NodeDir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.SysfsRoot == "" {
		cfg.SysfsRoot = t.TempDir()
	}
	cfg.InitiatorName = "iqn.2026-11.io.example:initiator"
	r.nodeDir = cfg.NodeDir
	h, err := newHost(cfg, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func chapLogin(auth iscsi.AuthenticationType) iscsi.Login {
	return iscsi.Login{Portal: recPortal, IQN: recIQN, AuthType: auth, Username: "chapuser", Secret: chapSecret}
}

func TestConnectTarget_RecordedIscsiadm_IscsidDown(t *testing.T) {
	// This machine's real answer: no iscsid (and no kernel transport).
	r := newReplay(t, connectSamples("recorded/node_login_iscsid_down", "recorded/node_delete")...)
	h := newTestHost(t, r, Config{})
	err := h.ConnectTarget(context.Background(), iscsi.Login{Portal: recPortal, IQN: recIQN, AuthType: iscsi.AuthNone})
	if !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	msg := err.Error()
	for _, want := range []string{"exit code 20", "iscsid is not running", "initiator reported error (20 - could not connect to iscsid)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("err = %q, want it to contain %q", msg, want)
		}
	}
	if strings.Contains(msg, "systemd") {
		t.Errorf("err = %q keeps the systemd noise", msg)
	}
	if !strings.Contains(r.atLogin, "node.session.auth.authmethod = None") {
		t.Errorf("record at login:\n%s", r.atLogin)
	}
	if _, err := os.Stat(filepath.Join(r.nodeDir, recRecord)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the record of a failed login stays: %v", err)
	}
}

func TestConnectTarget_ComposedIscsiadm_OneWayCHAPSuccess(t *testing.T) {
	r := newReplay(t, connectSamples("composed/node_login_success")...)
	h := newTestHost(t, r, Config{})
	if err := h.ConnectTarget(context.Background(), chapLogin(iscsi.AuthOneWayCHAP)); err != nil {
		t.Fatal(err)
	}
	r.noSecretInArgs(chapSecret)
	if r.modeOnIt != 0o600 {
		t.Errorf("record mode %v, want 0600", r.modeOnIt)
	}
	orig, err := os.ReadFile(filepath.Join("testdata", "iscsiadm", "recorded", "node_record_file"))
	if err != nil {
		t.Fatal(err)
	}
	// Every line iscsiadm wrote stays, but for the auth method, which
	// becomes the CHAP lines in its place.
	want := strings.Replace(string(orig), "node.session.auth.authmethod = None\n",
		"node.session.auth.authmethod = CHAP\nnode.session.auth.username = chapuser\nnode.session.auth.password = "+chapSecret+"\n", 1)
	if r.atLogin != want {
		t.Errorf("record at login:\n%s\nwant:\n%s", r.atLogin, want)
	}
	entries, _ := os.ReadDir(filepath.Join(r.nodeDir, recIQN))
	if len(entries) != 1 {
		t.Errorf("node directory holds %d entries (temporary files left?)", len(entries))
	}
}

func TestConnectTarget_ComposedIscsiadm_AuthFailure(t *testing.T) {
	r := newReplay(t, connectSamples("composed/node_login_auth_failure", "recorded/node_delete")...)
	h := newTestHost(t, r, Config{})
	err := h.ConnectTarget(context.Background(), chapLogin(iscsi.AuthOneWayCHAP))
	if !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Fatalf("err = %v, want ErrPermissionDenied", err)
	}
	for _, want := range []string{`rejected CHAP user "chapuser"`, "authorization failure"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %q, want it to contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), chapSecret) {
		t.Errorf("err = %q contains the secret", err)
	}
	r.noSecretInArgs(chapSecret)
	if _, err := os.Stat(filepath.Join(r.nodeDir, recRecord)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the secret stays on disk after a failed login: %v", err)
	}
}

func TestConnectTarget_ComposedIscsiadm_SessionExists(t *testing.T) {
	r := newReplay(t, connectSamples("composed/node_login_session_exists")...)
	h := newTestHost(t, r, Config{})
	if err := h.ConnectTarget(context.Background(), chapLogin(iscsi.AuthOneWayCHAP)); err != nil {
		t.Fatalf("an existing session must be success: %v", err)
	}
}

func TestConnectTarget_ComposedIscsiadm_MutualCHAP(t *testing.T) {
	ctx := context.Background()
	t.Run("without SetMutualChapSecret", func(t *testing.T) {
		r := newReplay(t)
		h := newTestHost(t, r, Config{})
		if err := h.ConnectTarget(ctx, chapLogin(iscsi.AuthMutualCHAP)); !errors.Is(err, errdefs.ErrFailedPrecondition) {
			t.Fatalf("err = %v, want ErrFailedPrecondition", err)
		}
	})
	for name, tc := range map[string]struct{ cfgUser, wantUser string }{
		"target name defaults to the login's": {"", "chapuser"},
		"configured target name":              {"iqn.2026-11.io.example:target-user", "iqn.2026-11.io.example:target-user"},
	} {
		t.Run(name, func(t *testing.T) {
			const mutual = "Mutu@lSecret9"
			r := newReplay(t, connectSamples("composed/node_login_success")...)
			h := newTestHost(t, r, Config{MutualCHAPUsername: tc.cfgUser})
			if err := h.SetMutualChapSecret(ctx, mutual); err != nil {
				t.Fatal(err)
			}
			if err := h.ConnectTarget(ctx, chapLogin(iscsi.AuthMutualCHAP)); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				"node.session.auth.username = chapuser\n",
				"node.session.auth.password = " + chapSecret + "\n",
				"node.session.auth.username_in = " + tc.wantUser + "\n",
				"node.session.auth.password_in = " + mutual + "\n",
			} {
				if !strings.Contains(r.atLogin, want) {
					t.Errorf("record lacks %q", want)
				}
			}
			r.noSecretInArgs(chapSecret, mutual)
		})
	}
}

func TestConnectTarget_RefusesWhatRecordsCannotHold(t *testing.T) {
	ctx := context.Background()
	r := newReplay(t)
	h := newTestHost(t, r, Config{})
	for name, l := range map[string]iscsi.Login{
		"secret with blanks":  {Portal: recPortal, IQN: recIQN, AuthType: iscsi.AuthOneWayCHAP, Username: "u", Secret: " padded secret "},
		"secret with newline": {Portal: recPortal, IQN: recIQN, AuthType: iscsi.AuthOneWayCHAP, Username: "u", Secret: "line\nnode.x = y"},
		"user with blanks":    {Portal: recPortal, IQN: recIQN, AuthType: iscsi.AuthOneWayCHAP, Username: "u ", Secret: "abcdefghijkl"},
		"IQN with a slash":    {Portal: recPortal, IQN: "iqn.2026-11.io.example:../../etc", AuthType: iscsi.AuthNone},
	} {
		err := h.ConnectTarget(ctx, l)
		if !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("%s: err = %v, want ErrInvalidArgument", name, err)
		} else if l.Secret != "" && strings.Contains(err.Error(), l.Secret) {
			t.Errorf("%s: err = %q quotes the secret", name, err)
		}
	}
	if err := h.SetMutualChapSecret(ctx, "trailing blank "); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("SetMutualChapSecret: %v, want ErrInvalidArgument", err)
	}
	if len(r.calls) != 0 {
		t.Errorf("refused logins reached iscsiadm: %q", r.calls)
	}
}

func TestDisconnectTarget_RecordedIscsiadm_NoSession(t *testing.T) {
	// No session and no record: both exit code 21, both success.
	r := newReplay(t, "recorded/node_logout_no_session", "recorded/node_delete_missing")
	h := newTestHost(t, r, Config{})
	if err := h.DisconnectTarget(context.Background(), recPortal, recIQN); err != nil {
		t.Fatal(err)
	}
}

func TestDisconnectTarget_ComposedIscsiadm_LogsOutAndDeletesRecord(t *testing.T) {
	r := newReplay(t, connectSamples("composed/node_login_success", "composed/node_logout_success", "recorded/node_delete")...)
	h := newTestHost(t, r, Config{})
	ctx := context.Background()
	if err := h.ConnectTarget(ctx, chapLogin(iscsi.AuthOneWayCHAP)); err != nil {
		t.Fatal(err)
	}
	if err := h.DisconnectTarget(ctx, recPortal, recIQN); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r.nodeDir, recRecord)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the record (and its secret) stays after DisconnectTarget: %v", err)
	}
}

func TestListTargetPortals_RecordedIscsiadm(t *testing.T) {
	ctx := context.Background()
	r := newReplay(t, "recorded/discoverydb_list", "recorded/discoverydb_list_empty")
	h := newTestHost(t, r, Config{})
	got, err := h.ListTargetPortals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []iscsi.Portal{{Address: "127.0.0.1", Port: 3260}, {Address: "::1", Port: 3260}, {Address: "Portal.Example.com", Port: 3261}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("portals = %+v, want %+v", got, want)
	}
	got, err = h.ListTargetPortals(ctx)
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("no records: %#v, %v; want an empty list", got, err)
	}
}

func TestRemoveTargetPortal_RecordedIscsiadm(t *testing.T) {
	ctx := context.Background()
	t.Run("registered", func(t *testing.T) {
		r := newReplay(t, "recorded/discoverydb_list", "recorded/discoverydb_delete")
		if err := newTestHost(t, r, Config{}).RemoveTargetPortal(ctx, recPortal); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("not registered", func(t *testing.T) {
		r := newReplay(t, "recorded/discoverydb_list_empty")
		if err := newTestHost(t, r, Config{}).RemoveTargetPortal(ctx, recPortal); !errors.Is(err, errdefs.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})
	t.Run("removed meanwhile", func(t *testing.T) {
		r := newReplay(t, "recorded/discoverydb_list", "recorded/discoverydb_delete_missing")
		if err := newTestHost(t, r, Config{}).RemoveTargetPortal(ctx, recPortal); !errors.Is(err, errdefs.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})
}

func TestAddTargetPortal_RecordedIscsiadm(t *testing.T) {
	ctx := context.Background()
	reachable := func(context.Context, string, string) ([]Target, error) { return nil, nil }
	t.Run("already registered: no new record", func(t *testing.T) {
		r := newReplay(t, "recorded/discoverydb_list")
		h := newTestHost(t, r, Config{})
		h.discover = reachable
		if err := h.AddTargetPortal(ctx, iscsi.Portal{Address: "portal.example.com", Port: 3261}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("new", func(t *testing.T) {
		r := newReplay(t, "recorded/discoverydb_list_empty", "recorded/discoverydb_new")
		h := newTestHost(t, r, Config{})
		h.discover = reachable
		if err := h.AddTargetPortal(ctx, recPortal); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("discovery errors stop it", func(t *testing.T) {
		r := newReplay(t)
		h := newTestHost(t, r, Config{})
		h.discover = func(context.Context, string, string) ([]Target, error) {
			return nil, errdefs.Errorf(errdefs.ErrPermissionDenied, "discovery CHAP")
		}
		if err := h.AddTargetPortal(ctx, recPortal); !errors.Is(err, errdefs.ErrPermissionDenied) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestIscsiadmError_RecordedTransportMissing(t *testing.T) {
	s := loadSample(t, "recorded/discovery_sendtargets_no_kernel")
	err := newIscsiadmError("discover", s.out)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("err = %v, want ErrFailedPrecondition", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "no iSCSI TCP transport") || !strings.Contains(msg, "iSCSI driver tcp is not loaded") || strings.Contains(msg, "systemd") {
		t.Errorf("err = %q", msg)
	}
}

func TestIscsiadmError_Kinds(t *testing.T) {
	for code, kind := range map[int]error{
		24: errdefs.ErrPermissionDenied,
		21: errdefs.ErrNotFound,
		12: errdefs.ErrFailedPrecondition,
		19: errdefs.ErrFailedPrecondition,
		20: errdefs.ErrUnavailable,
		8:  errdefs.ErrUnavailable,
		4:  errdefs.ErrUnavailable,
		15: errdefs.ErrAlreadyExists,
	} {
		if err := newIscsiadmError("op", output{ExitCode: code}); !errors.Is(err, kind) {
			t.Errorf("exit code %d: %v, want %v", code, err, kind)
		}
	}
	if err := newIscsiadmError("op", output{ExitCode: 1, Stderr: []byte("iscsiadm: boom\n")}); err.Unwrap() != nil || !strings.Contains(err.Error(), "iscsiadm: boom") {
		t.Errorf("generic failure: %v", err)
	}
}

// writeNodeAuth writes a into every record of iqn at p under nodeDir, as
// ConnectTarget does once it has located them.
func writeNodeAuth(nodeDir, iqn string, p iscsi.Portal, iface string, a nodeAuth) error {
	root, err := os.OpenRoot(nodeDir)
	if err != nil {
		return err
	}
	files, err := recordFiles(root, iqn, p, iface)
	_ = root.Close()
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return errors.New("no record")
	}
	return writeRecords(nodeDir, files, a)
}

func TestWriteNodeAuth(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("testdata", "iscsiadm", "recorded", "node_record_file"))
	if err != nil {
		t.Fatal(err)
	}
	setup := func(t *testing.T, rel string) string {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), orig, 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	chap := nodeAuth{method: "CHAP", username: "u", password: "p4ssw0rdp4ss"}
	t.Run("CHAP then None", func(t *testing.T) {
		dir := setup(t, recRecord)
		if err := writeNodeAuth(dir, recIQN, recPortal, "default", chap); err != nil {
			t.Fatal(err)
		}
		if err := writeNodeAuth(dir, recIQN, recPortal, "default", nodeAuth{method: "None"}); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(dir, recRecord))
		if string(got) != string(orig) {
			t.Errorf("after None the record differs from iscsiadm's:\n%s", got)
		}
	})
	t.Run("discovery-style record directory", func(t *testing.T) {
		rel := recIQN + "/127.0.0.1,3260,1/default"
		dir := setup(t, rel)
		if err := writeNodeAuth(dir, recIQN, recPortal, "default", chap); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(dir, rel))
		if !strings.Contains(string(got), "node.session.auth.authmethod = CHAP\nnode.session.auth.username = u\nnode.session.auth.password = p4ssw0rdp4ss\nnode.session.auth.chap_algs = MD5\n") {
			t.Errorf("record:\n%s", got)
		}
	})
	t.Run("no record", func(t *testing.T) {
		if err := writeNodeAuth(t.TempDir(), recIQN, recPortal, "default", chap); err == nil {
			t.Error("writing into a missing record succeeded")
		}
	})
	t.Run("a symlink out of the database is not followed", func(t *testing.T) {
		outside := setup(t, "victim/127.0.0.1,3260")
		dir := t.TempDir()
		if err := os.Symlink(filepath.Join(outside, "victim"), filepath.Join(dir, recIQN)); err != nil {
			t.Fatal(err)
		}
		if err := writeNodeAuth(dir, recIQN, recPortal, "default", chap); err == nil {
			t.Error("followed a symlink out of the node database")
		}
		got, _ := os.ReadFile(filepath.Join(outside, "victim", "127.0.0.1,3260"))
		if string(got) != string(orig) {
			t.Error("the file outside the database changed")
		}
	})
}

// buildSysfs lays out the sysfs of two sessions to recIQN (one through
// the recorded portal, one through another) and one to another target.
func buildSysfs(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mkdir := func(rel string) {
		if err := os.MkdirAll(filepath.Join(root, rel), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	session := func(sid, iqn, addr, port string, host string, luns map[string]string) {
		write("class/iscsi_session/session"+sid+"/targetname", iqn)
		write("class/iscsi_connection/connection"+sid+":0/persistent_address", addr)
		write("class/iscsi_connection/connection"+sid+":0/persistent_port", port)
		for lun, dev := range luns {
			d := "class/iscsi_session/session" + sid + "/device/target" + host + ":0:0/" + host + ":0:0:" + lun
			if dev == "" {
				mkdir(d) // a LUN without a block device (the controller)
				continue
			}
			mkdir(d + "/block/" + dev)
		}
	}
	session("1", recIQN, "127.0.0.1", "3260", "2", map[string]string{"0": "", "1": "sdb", "2": "sdc"})
	session("2", recIQN, "10.0.0.2", "3260", "3", map[string]string{"1": "sdd"})
	session("3", "iqn.2026-11.io.example:other", "127.0.0.1", "3260", "4", map[string]string{"1": "sde"})
	write("block/sdb/diskseq", "17")
	write("block/sdc/diskseq", "18")
	write("block/sdd/diskseq", "19")
	write("block/sdx/diskseq", "2147483648")
	return root
}

func TestTargetDisks_FakeSysfs(t *testing.T) {
	ctx := context.Background()
	root := buildSysfs(t)
	r := newReplay(t)
	h := newTestHost(t, r, Config{SysfsRoot: root})
	got, err := h.TargetDisks(ctx, recPortal, recIQN)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint32{17, 18}; !reflect.DeepEqual(got, want) {
		t.Errorf("disks = %v, want %v (diskseq of sdb and sdc only)", got, want)
	}
	if got, err := h.TargetDisks(ctx, iscsi.Portal{Address: "10.0.0.2", Port: 3260}, recIQN); err != nil || !reflect.DeepEqual(got, []uint32{19}) {
		t.Errorf("second portal: %v, %v", got, err)
	}
	// No session: an empty list, as upstream answers for a target that is
	// not connected (csi-proxy pkg/os/iscsi/api.go GetTargetDisks, commit
	// eeba4706).
	if got, err := h.TargetDisks(ctx, recPortal, "iqn.2026-11.io.example:nosession"); err != nil || got == nil || len(got) != 0 {
		t.Errorf("no session: %#v, %v; want an empty list", got, err)
	}
	if got, err := h.TargetDisks(ctx, iscsi.Portal{Address: "127.0.0.1", Port: 3261}, recIQN); err != nil || got == nil || len(got) != 0 {
		t.Errorf("no session through another port: %#v, %v; want an empty list", got, err)
	}

	// The daemon's numbering, not diskseq, when given.
	h2, err := newHost(Config{SysfsRoot: root, NodeDir: t.TempDir()}, r, func(name string) (uint32, error) {
		return uint32(name[2]-'a') + 100, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := h2.TargetDisks(ctx, recPortal, recIQN); err != nil || !reflect.DeepEqual(got, []uint32{101, 102}) {
		t.Errorf("custom numbering: %v, %v", got, err)
	}
	if _, err := DiskSeqNumber(root)("sdx"); !errors.Is(err, errdefs.ErrOutOfRange) {
		t.Errorf("diskseq of 2^31: %v, want ErrOutOfRange", err)
	}
	if _, err := DiskSeqNumber(root)("../etc"); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("device name with a slash: %v", err)
	}
}

func TestExecRunner(t *testing.T) {
	ctx := context.Background()
	var r execRunner
	out, err := r.Run(ctx, "sh", "-c", `printf '%s|' "$@"; echo; env; echo oops >&2; exit 3`, "sh", "a b", "$HOME", ";")
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode != 3 || string(out.Stderr) != "oops\n" {
		t.Errorf("exit %d stderr %q", out.ExitCode, out.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(out.Stdout)), "\n")
	// Arguments arrive verbatim, one each: no shell in between.
	if !strings.HasPrefix(lines[0], "a b|$HOME|;|") {
		t.Errorf("arguments: %q", lines[0])
	}
	env := map[string]bool{}
	for _, l := range lines[1:] {
		k, _, _ := strings.Cut(l, "=")
		env[k] = true
	}
	delete(env, "PWD")   // the shell adds these itself
	delete(env, "SHLVL") //
	delete(env, "_")     //
	delete(env, "OLDPWD")
	if !reflect.DeepEqual(env, map[string]bool{"PATH": true, "LC_ALL": true}) {
		t.Errorf("environment: %v, want only PATH and LC_ALL", env)
	}
	if _, err := r.Run(ctx, "/nonexistent/iscsiadm"); err == nil {
		t.Error("a missing program is no error")
	}
	tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := r.Run(tctx, "sleep", "10"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: %v", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Error("the timeout did not stop the program")
	}
}

func TestReadInitiatorName(t *testing.T) {
	p := filepath.Join(t.TempDir(), "initiatorname.iscsi")
	if err := os.WriteFile(p, []byte("## DO NOT EDIT\n#InitiatorName=iqn.commented\nInitiatorName=iqn.1993-08.org.debian:01:abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadInitiatorName(p); err != nil || got != "iqn.1993-08.org.debian:01:abcdef" {
		t.Errorf("ReadInitiatorName = %q, %v", got, err)
	}
	h, err := newHost(Config{InitiatorNameFile: p, NodeDir: t.TempDir()}, newReplay(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.initiatorName(); got != "iqn.1993-08.org.debian:01:abcdef" {
		t.Errorf("initiatorName = %q", got)
	}
	h.cfg.InitiatorNameFile = filepath.Join(t.TempDir(), "missing")
	if got := h.initiatorName(); !strings.HasPrefix(got, "iqn.2026-01.io.github.csi-node-proxy:") {
		t.Errorf("fallback initiatorName = %q", got)
	}
}

// TestMissingIscsiadmIsFailedPrecondition: a node without open-iscsi
// answers FailedPrecondition, saying so, for a program name looked up in
// PATH and for an absolute path alike.
func TestMissingIscsiadmIsFailedPrecondition(t *testing.T) {
	ctx := context.Background()
	for _, prog := range []string{"csi-node-proxy-no-such-iscsiadm", "/nonexistent/iscsiadm"} {
		cfg := Config{Iscsiadm: prog, NodeDir: filepath.Join(t.TempDir(), "nodes"), SysfsRoot: t.TempDir()}
		if err := os.Mkdir(cfg.NodeDir, 0o700); err != nil {
			t.Fatal(err)
		}
		h, err := newHost(cfg, execRunner{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.ListTargetPortals(ctx)
		if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "open-iscsi is not installed") {
			t.Errorf("%s: ListTargetPortals = %v, want FailedPrecondition saying open-iscsi is not installed", prog, err)
		}
		if err := h.RemoveTargetPortal(ctx, recPortal); !errors.Is(err, errdefs.ErrFailedPrecondition) {
			t.Errorf("%s: RemoveTargetPortal = %v, want FailedPrecondition", prog, err)
		}
	}
}

// TestConnectTarget_RecordedIscsiadm_NodeDatabasePerCall: the node
// database is the one iscsiadm writes to, found on every call: the RHEL
// layout while a stale Debian database exists (which gets no secret), a
// database that appeared after the proxy started, and one the proxy does
// not know of (refused, the record deleted). node.startup is manual at
// login whatever iscsid.conf made it.
func TestConnectTarget_RecordedIscsiadm_NodeDatabasePerCall(t *testing.T) {
	ctx := context.Background()
	orig, err := os.ReadFile(filepath.Join("testdata", "iscsiadm", "recorded", "node_record_file"))
	if err != nil {
		t.Fatal(err)
	}
	// RHEL's iscsid.conf has node.startup = automatic; composed from the
	// recorded Debian record.
	rhelRecord := strings.Replace(string(orig), "node.startup = manual\n", "node.startup = automatic\n", 1)
	setup := func(t *testing.T, login ...string) (*replay, *Host, string, string) {
		base := t.TempDir()
		deb, rhel := filepath.Join(base, "etc", "iscsi", "nodes"), filepath.Join(base, "var", "lib", "iscsi", "nodes")
		r := newReplay(t, connectSamples(login...)...)
		h := newTestHost(t, r, Config{})
		h.nodeDirs = []string{deb, rhel}
		return r, h, deb, rhel
	}

	t.Run("RHEL layout, stale Debian database", func(t *testing.T) {
		r, h, deb, rhel := setup(t, "composed/node_login_success")
		r.nodeDir, r.newRecord = rhel, rhelRecord
		stale := filepath.Join(deb, recRecord)
		if err := os.MkdirAll(filepath.Dir(stale), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(stale, orig, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := h.ConnectTarget(ctx, chapLogin(iscsi.AuthOneWayCHAP)); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"node.startup = manual\n", "node.session.auth.authmethod = CHAP\nnode.session.auth.username = chapuser\nnode.session.auth.password = " + chapSecret + "\n"} {
			if !strings.Contains(r.atLogin, want) {
				t.Errorf("record at login lacks %q:\n%s", want, r.atLogin)
			}
		}
		if strings.Contains(r.atLogin, locateMarkerPrefix) {
			t.Errorf("the locate marker stays in the record:\n%s", r.atLogin)
		}
		if b, _ := os.ReadFile(stale); string(b) != string(orig) {
			t.Errorf("the stale record in the other database changed:\n%s", b)
		}
		r.noSecretInArgs(chapSecret)
	})
	t.Run("database created after start", func(t *testing.T) {
		r, h, deb, _ := setup(t, "recorded/node_login_iscsid_down", "recorded/node_delete")
		r.nodeDir = deb // does not exist yet: -o new creates it
		err := h.ConnectTarget(ctx, iscsi.Login{Portal: recPortal, IQN: recIQN, AuthType: iscsi.AuthNone})
		if !errors.Is(err, errdefs.ErrUnavailable) { // this machine's iscsiadm: no iscsid
			t.Fatalf("err = %v, want the login's ErrUnavailable", err)
		}
		if !strings.Contains(r.atLogin, "node.session.auth.authmethod = None\n") || strings.Contains(r.atLogin, locateMarkerPrefix) {
			t.Errorf("record at login:\n%s", r.atLogin)
		}
	})
	t.Run("unknown database", func(t *testing.T) {
		r, h, _, _ := setup(t, "recorded/node_delete")
		r.nodeDir = filepath.Join(t.TempDir(), "opt", "iscsi", "nodes")
		err := h.ConnectTarget(ctx, chapLogin(iscsi.AuthOneWayCHAP))
		if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "Config.NodeDir") {
			t.Fatalf("err = %v, want ErrFailedPrecondition naming Config.NodeDir", err)
		}
		if strings.Contains(err.Error(), chapSecret) {
			t.Errorf("err = %q quotes the secret", err)
		}
		if _, err := os.Stat(filepath.Join(r.nodeDir, recRecord)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("record left behind: %v", err)
		}
	})
}

// TestReplayUpdateMatchesIscsiadm: the fake's -o update writes the marker
// where iscsiadm 2.1.8 did (recorded node_record_file_after_locate).
func TestReplayUpdateMatchesIscsiadm(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "iscsiadm", "recorded", "node_record_file_after_locate"))
	if err != nil {
		t.Fatal(err)
	}
	r := newReplay(t, "recorded/node_new", "recorded/node_update_startup", "recorded/node_update_locate")
	r.nodeDir = t.TempDir()
	h := newTestHost(t, r, Config{NodeDir: r.nodeDir})
	node := []string{"-m", "node", "-T", recIQN, "-p", "127.0.0.1:3260", "-I", "default"}
	for _, extra := range [][]string{{"-o", "new"}, {"-o", "update", "-n", "node.startup", "-v", "manual"}, {"-o", "update", "-n", "node.session.auth.username", "-v", locateMarkerPrefix + "0123456789abcdef"}} {
		if _, err := h.iscsiadm(context.Background(), append(node, extra...)...); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(filepath.Join(r.nodeDir, recRecord))
	if string(got) != string(want) {
		t.Errorf("fake update wrote:\n%s\nwant (recorded):\n%s", got, want)
	}
}

// buildSysfsWithoutDiskseq is buildSysfs as a kernel before 5.15 lays it
// out: the same sessions and disks, each disk with its dev file, none
// with a diskseq file.
func buildSysfsWithoutDiskseq(t *testing.T) string {
	t.Helper()
	root := buildSysfs(t)
	for dev, majMin := range map[string]string{"sdb": "8:16", "sdc": "8:32", "sdd": "8:48", "sdx": "65:0"} {
		if err := os.Remove(filepath.Join(root, "block", dev, "diskseq")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "block", dev, "dev"), []byte(majMin+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestTargetDisks_FakeSysfsWithoutDiskseq: on kernels before 5.15 the
// disks of a session are numbered by the disk group's numbering the
// daemon passes (here a stand-in that, like blockdev's, numbers disks from
// 2^31 per device and gives a re-plugged disk a new number); without it
// they are refused as FailedPrecondition naming the cause, not as a file
// error.
func TestTargetDisks_FakeSysfsWithoutDiskseq(t *testing.T) {
	ctx := context.Background()
	root := buildSysfsWithoutDiskseq(t)
	numbers := map[string]uint32{}
	generation := 0 // bumped when a disk is re-plugged
	blockdevLike := func(name string) (uint32, error) {
		dev, err := os.ReadFile(filepath.Join(root, "block", name, "dev"))
		if err != nil {
			return 0, err
		}
		key := fmt.Sprintf("%s %s %d", name, strings.TrimSpace(string(dev)), generation)
		if n, ok := numbers[key]; ok {
			return n, nil
		}
		numbers[key] = 1<<31 + uint32(len(numbers))
		return numbers[key], nil
	}
	r := newReplay(t)
	h, err := newHost(Config{SysfsRoot: root, NodeDir: t.TempDir()}, r, blockdevLike)
	if err != nil {
		t.Fatal(err)
	}
	first, err := h.TargetDisks(ctx, recPortal, recIQN)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint32{1 << 31, 1<<31 + 1}; !reflect.DeepEqual(first, want) {
		t.Errorf("disks = %v, want %v", first, want)
	}
	if again, err := h.TargetDisks(ctx, recPortal, recIQN); err != nil || !reflect.DeepEqual(again, first) {
		t.Errorf("asked again: %v, %v; want the same %v", again, err, first)
	}
	// The LUNs come back under the same sdb and sdc after a reconnect: new
	// disks, new numbers, never the old ones.
	generation++
	if replugged, err := h.TargetDisks(ctx, recPortal, recIQN); err != nil || reflect.DeepEqual(replugged, first) || len(replugged) != 2 {
		t.Errorf("after re-plug: %v, %v; want two new numbers (not %v)", replugged, err, first)
	}

	plain, err := newHost(Config{SysfsRoot: root, NodeDir: t.TempDir()}, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = plain.TargetDisks(ctx, recPortal, recIQN)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "no diskseq (a kernel before 5.15)") {
		t.Errorf("default numbering without diskseq: %v, want ErrFailedPrecondition naming the kernel", err)
	}
	if _, err := DiskSeqNumber(root)("sdq"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("a disk that is gone: %v, want ErrNotFound", err)
	}
}
