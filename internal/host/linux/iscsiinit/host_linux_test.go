//go:build linux

package iscsiinit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

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
