package smbmap

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/files"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

const password = "S3cr3t:pa\\ss"

// fakeMappings records the calls the logic makes and keeps the mappings.
type fakeMappings struct {
	maps      map[string]uint32 // share -> Status
	calls     []string
	createErr error
	// creds records the credential strings Create received (test only).
	creds []string
}

func (f *fakeMappings) Get(_ context.Context, share string) (mapping, bool, error) {
	f.calls = append(f.calls, "Get "+share)
	st, ok := f.maps[share]
	return mapping{RemotePath: share, Status: st}, ok, nil
}

func (f *fakeMappings) List(context.Context) ([]mapping, error) {
	f.calls = append(f.calls, "List")
	var out []mapping
	for share, st := range f.maps {
		out = append(out, mapping{RemotePath: share, Status: st})
	}
	return out, nil
}

func (f *fakeMappings) Create(_ context.Context, share string, cred *credential, rp bool) error {
	user := ""
	if cred != nil {
		user = cred.User
		f.creds = append(f.creds, credentialString(cred.User, cred.Password))
	}
	f.calls = append(f.calls, fmt.Sprintf("Create %s user=%q privacy=%v", share, user, rp))
	if f.createErr != nil {
		return f.createErr
	}
	f.maps[share] = statusOK
	return nil
}

func (f *fakeMappings) Remove(_ context.Context, share string) error {
	f.calls = append(f.calls, "Remove "+share)
	if _, ok := f.maps[share]; !ok {
		return errdefs.Errorf(errdefs.ErrNotFound, "there is no SMB global mapping of %s", share)
	}
	delete(f.maps, share)
	return nil
}

// fakeLinks records link calls; state says what CheckLink reports.
type fakeLinks struct {
	state files.LinkState
	calls []string
	found []files.FoundLink // what ListLinks reports
}

func (l *fakeLinks) CheckLink(_ context.Context, link, target string) (files.LinkState, error) {
	l.calls = append(l.calls, "CheckLink "+link+" "+target)
	return l.state, nil
}

func (l *fakeLinks) ListLinks(_ context.Context, roots []string) ([]files.FoundLink, error) {
	l.calls = append(l.calls, fmt.Sprintf("ListLinks %q", roots))
	return l.found, nil
}

func (l *fakeLinks) CreateDirLink(_ context.Context, target, link string) error {
	l.calls = append(l.calls, "CreateDirLink "+link+" -> "+target)
	return nil
}

type env struct {
	h     *Host
	m     *fakeMappings
	l     *fakeLinks
	reach map[string]error
}

func newEnv(cfg Config) *env {
	e := &env{m: &fakeMappings{maps: map[string]uint32{}}, l: &fakeLinks{}, reach: map[string]error{}}
	e.h = newHost(cfg, e.m, func(s string) error { return e.reach[s] }, e.l)
	return e
}

// mappedEnv is an env in which req("") has been mapped, with the calls
// that made the mapping forgotten, so a test sees only what a second
// request does.
func mappedEnv(t *testing.T) (*env, context.Context) {
	t.Helper()
	e := newEnv(DefaultConfig())
	ctx := context.Background()
	if err := e.h.NewSmbGlobalMapping(ctx, req("")); err != nil {
		t.Fatal(err)
	}
	e.m.calls = nil
	return e, ctx
}

func req(local string) smb.Mapping {
	return smb.Mapping{Share: `\\srv\share`, RemotePath: `\\srv\share\pv1`, LocalPath: local, Username: `DOM\alice`, Password: password}
}

func TestNewMappingWithLink(t *testing.T) {
	e := newEnv(DefaultConfig())
	if err := e.h.NewSmbGlobalMapping(context.Background(), req(`C:\k\stage`)); err != nil {
		t.Fatal(err)
	}
	if want := []string{`Get \\srv\share`, `Create \\srv\share user="DOM\\alice" privacy=true`}; !reflect.DeepEqual(e.m.calls, want) {
		t.Errorf("mapping calls %q, want %q", e.m.calls, want)
	}
	if want := []string{`CheckLink C:\k\stage \\srv\share\pv1\`, `CreateDirLink C:\k\stage -> \\srv\share\pv1\`}; !reflect.DeepEqual(e.l.calls, want) {
		t.Errorf("link calls %q, want %q", e.l.calls, want)
	}
	if want := `DOM\\alice:` + password; e.m.creds[0] != want {
		t.Errorf("credential %q, want %q", e.m.creds[0], want)
	}
}

func TestRequirePrivacyFromConfig(t *testing.T) {
	e := newEnv(Config{RequirePrivacy: false})
	if err := e.h.NewSmbGlobalMapping(context.Background(), req("")); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(e.m.calls[1], "privacy=false") {
		t.Errorf("calls %q", e.m.calls)
	}
	if len(e.l.calls) != 0 {
		t.Errorf("no local path, but link calls %q", e.l.calls)
	}
}

func TestNoCredentialWithoutUser(t *testing.T) {
	e := newEnv(DefaultConfig())
	m := req("")
	m.Username, m.Password = "", ""
	if err := e.h.NewSmbGlobalMapping(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if len(e.m.creds) != 0 || !strings.Contains(e.m.calls[1], `user=""`) {
		t.Errorf("calls %q creds %d", e.m.calls, len(e.m.creds))
	}
}

func TestMappingOfUnknownUserReused(t *testing.T) {
	// A mapping made before this process started: its user is unknown, so
	// it is reused as upstream does.
	e := newEnv(DefaultConfig())
	e.m.maps[`\\srv\share`] = statusOK
	if err := e.h.NewSmbGlobalMapping(context.Background(), req("")); err != nil {
		t.Fatal(err)
	}
	if want := []string{`Get \\srv\share`}; !reflect.DeepEqual(e.m.calls, want) {
		t.Errorf("calls %q, want %q", e.m.calls, want)
	}
}

// TestHealthyMappingReusedWhateverTheUser follows upstream csi-proxy
// (kubernetes-csi/csi-proxy pkg/server/smb/server.go NewSmbGlobalMapping and
// pkg/os/smb/api.go IsSmbMapped, commit eeba4706): a mapping of the same
// remote path whose Status is OK and whose share answers is reused, whoever
// asks. csi-driver-smb stages several PVs of one share with credentials that
// may be another user or the same user spelled differently.
func TestHealthyMappingReusedWhateverTheUser(t *testing.T) {
	for name, c := range map[string]struct{ user, password string }{
		"another user":               {"bob", "bobs-password"},
		"same user without a domain": {"alice", "bobs-password"},
		"same user as a UPN":         {"alice@dom.example", "bobs-password"},
		// Same user and password, another spelling: reused without a new Create.
		"same user, another spelling": {`dom\ALICE`, password},
	} {
		t.Run(name, func(t *testing.T) {
			e, ctx := mappedEnv(t)
			m := req(`C:\k\p2`)
			m.Username, m.Password = c.user, c.password
			if err := e.h.NewSmbGlobalMapping(ctx, m); err != nil {
				t.Fatalf("second mapping as %q: %v; want the healthy mapping reused", c.user, err)
			}
			if want := []string{`Get \\srv\share`}; !reflect.DeepEqual(e.m.calls, want) {
				t.Errorf("calls %q, want %q: the mapping was touched", e.m.calls, want)
			}
			if want := `CreateDirLink C:\k\p2 -> \\srv\share\pv1\`; len(e.l.calls) == 0 || e.l.calls[len(e.l.calls)-1] != want {
				t.Errorf("link calls %q, want the last to be %q", e.l.calls, want)
			}
		})
	}
}

// TestOtherUserRecreatesStaleMapping: a stale mapping is re-created with the
// credentials of the request that found it stale, as upstream re-maps with
// the request's user name.
func TestOtherUserRecreatesStaleMapping(t *testing.T) {
	e, ctx := mappedEnv(t)
	e.reach[`\\srv\share`] = errors.New("logon failure")
	m := req("")
	m.Username, m.Password = "bob", "bobs-password"
	if err := e.h.NewSmbGlobalMapping(ctx, m); err != nil {
		t.Fatal(err)
	}
	want := []string{`Get \\srv\share`, `Remove \\srv\share`, `Create \\srv\share user="bob" privacy=true`}
	if !reflect.DeepEqual(e.m.calls, want) {
		t.Errorf("calls %q, want %q", e.m.calls, want)
	}
}

func TestStaleMappingRecreated(t *testing.T) {
	for name, setup := range map[string]func(e *env){
		"OK but unreachable": func(e *env) {
			e.m.maps[`\\srv\share`] = statusOK
			e.reach[`\\srv\share`] = errors.New("logon failure")
		},
		"Disconnected": func(e *env) { e.m.maps[`\\srv\share`] = statusDisconnected },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(DefaultConfig())
			setup(e)
			if err := e.h.NewSmbGlobalMapping(context.Background(), req("")); err != nil {
				t.Fatal(err)
			}
			want := []string{`Get \\srv\share`, `Remove \\srv\share`, `Create \\srv\share user="DOM\\alice" privacy=true`}
			if !reflect.DeepEqual(e.m.calls, want) {
				t.Errorf("calls %q, want %q", e.m.calls, want)
			}
		})
	}
}

func TestLocalPathTakenFailsBeforeMapping(t *testing.T) {
	e := newEnv(DefaultConfig())
	e.l.state = files.LinkOther
	err := e.h.NewSmbGlobalMapping(context.Background(), req(`C:\k\stage`))
	if !errors.Is(err, errdefs.ErrAlreadyExists) {
		t.Fatalf("error %v", err)
	}
	if len(e.m.calls) != 0 {
		t.Errorf("mapping touched: %q", e.m.calls)
	}
}

func TestExistingLinkToSameRemote(t *testing.T) {
	e := newEnv(DefaultConfig())
	e.l.state = files.LinkToTarget
	if err := e.h.NewSmbGlobalMapping(context.Background(), req(`C:\k\stage`)); err != nil {
		t.Fatal(err)
	}
}

func TestCreateErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		kind error
		want string
	}{
		{"1219 as ReturnValue", &wmi.MethodError{Class: mappingClass, Method: "Create", Code: 1219}, errdefs.ErrAlreadyExists, "one user name per server"},
		{"1219 in the exception text", &wmi.COMError{Op: "MSFT_SmbGlobalMapping.Create", HRESULT: 0x80020009, SCode: 0x80041001, Description: "Multiple connections ... Windows System Error 1219."}, errdefs.ErrAlreadyExists, "1219"},
		{"wrong password as HRESULT", &wmi.COMError{Op: "MSFT_SmbGlobalMapping.Create", HRESULT: 0x80020009, SCode: 0x8007052E}, errdefs.ErrPermissionDenied, `check the user name "DOM\\alice"`},
		{"86", &wmi.MethodError{Class: mappingClass, Method: "Create", Code: 86}, errdefs.ErrPermissionDenied, "password"},
		{"bad net path", &wmi.MethodError{Class: mappingClass, Method: "Create", Code: 53}, errdefs.ErrNotFound, "TCP 445"},
		{"bad net name", &wmi.MethodError{Class: mappingClass, Method: "Create", Code: 67}, errdefs.ErrNotFound, "cannot be found"},
		{"65 and RequirePrivacy", &wmi.MethodError{Class: mappingClass, Method: "Create", Code: 65}, errdefs.ErrPermissionDenied, "-require-privacy=false"},
		{"no SMB provider", &wmi.COMError{Op: "Get", HRESULT: 0x80020009, SCode: 0x8004100E}, errdefs.ErrUnimplemented, "WBEM_E_INVALID_NAMESPACE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			api := &fakeWMI{callErr: c.err}
			e := newEnv(DefaultConfig())
			e.h.mappings = wmiMappings{c: api}
			err := e.h.NewSmbGlobalMapping(context.Background(), req(""))
			if !errors.Is(err, c.kind) {
				t.Fatalf("error %v, want kind %v", err, c.kind)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
			assertNoSecret(t, err)
		})
	}
}

func assertNoSecret(t *testing.T, err error) {
	t.Helper()
	for _, s := range []string{password, credentialString(`DOM\alice`, password), "S3cr3t"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error %q contains a secret", err)
		}
	}
}

func TestProviderEchoingTheCredentialIsRedacted(t *testing.T) {
	cred := credentialString(`DOM\alice`, password)
	api := &fakeWMI{callErr: &wmi.COMError{Op: "Create", HRESULT: 0x80020009, SCode: 0x80041008, Description: "bad Credential '" + cred + "' (" + password + ")"}}
	e := newEnv(DefaultConfig())
	e.h.mappings = wmiMappings{c: api}
	err := e.h.NewSmbGlobalMapping(context.Background(), req(""))
	if err == nil {
		t.Fatal("no error")
	}
	assertNoSecret(t, err)
	if !strings.Contains(err.Error(), "<redacted>") {
		t.Errorf("error %q", err)
	}
}

func TestRemove(t *testing.T) {
	e := newEnv(DefaultConfig())
	ctx := context.Background()
	if err := e.h.NewSmbGlobalMapping(ctx, req("")); err != nil {
		t.Fatal(err)
	}
	if err := e.h.RemoveSmbGlobalMapping(ctx, `\\SRV\share`); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(e.h.RemoveSmbGlobalMapping(ctx, `\\srv\share`), errdefs.ErrNotFound) {
		t.Error("second remove is not NotFound")
	}
	// After removal another user may map the share.
	m := req("")
	m.Username = "bob"
	if err := e.h.NewSmbGlobalMapping(ctx, m); err != nil {
		t.Errorf("mapping for another user after removal: %v", err)
	}
}

func TestCredentialString(t *testing.T) {
	for _, c := range []struct{ user, pw, want string }{
		{`DOMAIN\user`, "pw", `DOMAIN\\user:pw`},
		{`a:b`, "pw", `a\:b:pw`},
		{`a\:b`, "pw", `a\\\:b:pw`},
		{"user", `p:w\x`, `user:p:w\x`},
		{"user@corp.example", "", "user@corp.example:"},
	} {
		if got := credentialString(c.user, c.pw); got != c.want {
			t.Errorf("credentialString(%q, %q) = %q, want %q", c.user, c.pw, got, c.want)
		}
	}
}

// fakeWMI is a recording wmi.API holding MSFT_SmbGlobalMapping rows.
type fakeWMI struct {
	rows    []wmi.Props
	calls   []string
	callErr error
}

func (f *fakeWMI) Query(_ context.Context, q *wmi.WQL) ([]wmi.Props, error) {
	f.calls = append(f.calls, "Query "+q.String())
	return f.rows, nil
}

func (f *fakeWMI) Call(_ context.Context, q *wmi.WQL, method string, in ...wmi.Param) (wmi.Props, error) {
	f.calls = append(f.calls, fmt.Sprintf("Call %s %s %v", q.String(), method, in))
	if len(f.rows) == 0 {
		return nil, errdefs.Errorf(errdefs.ErrNotFound, "no %s instance matches", q.Class())
	}
	return wmi.Props{"ReturnValue": int64(0)}, f.callErr
}

func (f *fakeWMI) CallStatic(_ context.Context, class, method string, in ...wmi.Param) (wmi.Props, error) {
	var ps []string
	for _, p := range in {
		if p.Value() != nil {
			ps = append(ps, p.Name())
		}
	}
	f.calls = append(f.calls, fmt.Sprintf("CallStatic %s.%s %v", class, method, ps))
	return wmi.Props{}, f.callErr
}

var _ wmi.API = (*fakeWMI)(nil)

func TestWMIMappings(t *testing.T) {
	f := &fakeWMI{rows: []wmi.Props{{"RemotePath": `\\SRV\Share`, "Status": int64(2)}}}
	w := wmiMappings{c: f}
	ctx := context.Background()
	m, ok, err := w.Get(ctx, `\\srv\share`)
	if err != nil || !ok || m.Status != statusDisconnected {
		t.Fatalf("Get = %+v, %v, %v", m, ok, err)
	}
	if err := w.Create(ctx, `\\srv\share`, &credential{User: "u", Password: password}, true); err != nil {
		t.Fatal(err)
	}
	if err := w.Create(ctx, `\\srv\share`, nil, false); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove(ctx, `\\srv\share`); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`Query SELECT RemotePath, Status FROM MSFT_SmbGlobalMapping WHERE RemotePath = '\\\\srv\\share'`,
		`CallStatic MSFT_SmbGlobalMapping.Create [RemotePath Credential RequirePrivacy]`,
		`CallStatic MSFT_SmbGlobalMapping.Create [RemotePath RequirePrivacy]`,
		`Call SELECT * FROM MSFT_SmbGlobalMapping WHERE RemotePath = '\\\\srv\\share' Remove [Force=true]`,
	}
	if !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls\n%q\nwant\n%q", f.calls, want)
	}
	f.rows = nil
	if _, ok, err := w.Get(ctx, `\\srv\share`); ok || err != nil {
		t.Errorf("Get with no rows = %v, %v", ok, err)
	}
	if err := w.Remove(ctx, `\\srv\share`); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("Remove with no mapping: %v", err)
	}
	// Another share's row is not this share's mapping.
	f.rows = []wmi.Props{{"RemotePath": `\\srv\share2`, "Status": int64(0)}}
	if _, ok, _ := w.Get(ctx, `\\srv\share`); ok {
		t.Error("matched another share")
	}
}
