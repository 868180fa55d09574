package iscsiinit

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
)

const (
	iqnA   = "iqn.2026-01.example.com:a"
	iqnB   = "iqn.2026-01.example.com:b"
	iqnC   = "iqn.2026-01.example.com:other-portal"
	secret = "twelve-bytes!!"
)

var (
	portal1 = iscsi.Portal{Address: "10.0.0.5", Port: 3260}
	portal2 = iscsi.Portal{Address: "10.0.0.6", Port: 3260}
)

func setup() (*Host, *fakeInitiator) {
	f := newFakeInitiator()
	f.targets = []fakeTarget{
		{iqn: iqnA, portal: spec(portal1), luns: 2},
		{iqn: iqnB, portal: spec(portal1), user: "node1", secret: secret, luns: 1},
		{iqn: iqnC, portal: spec(portal2), user: "node1", secret: secret, mutual: true, luns: 1},
	}
	h := newHost(f)
	h.sleep = func(ctx context.Context, d time.Duration) error { return ctx.Err() }
	return h, f
}

func ctx() context.Context { return context.Background() }

func wantKind(t *testing.T, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error %v, want one wrapping %v", err, kind)
	}
}

func noSecret(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), secret) {
		t.Errorf("error %q contains the CHAP secret", err)
	}
}

func TestAddTargetPortal(t *testing.T) {
	h, f := setup()
	if err := h.AddTargetPortal(ctx(), portal1); err != nil {
		t.Fatal(err)
	}
	if want := []string{"SendTargetPortals", "AddSendTargetPortal 10.0.0.5:3260"}; !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls %q, want %q", f.calls, want)
	}
	// Again: registered, no call.
	f.calls = nil
	if err := h.AddTargetPortal(ctx(), iscsi.Portal{Address: "10.0.0.5", Port: 3260}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"SendTargetPortals"}; !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls %q, want %q", f.calls, want)
	}
	// A concurrent registration between the check and the add.
	f.errs["AddSendTargetPortal"] = status(isdscTargetPortalExists)
	if err := h.AddTargetPortal(ctx(), portal2); err != nil {
		t.Errorf("already exists: %v", err)
	}
	// A warning is success.
	f.errs["AddSendTargetPortal"] = status(0xAFFF002E)
	if err := h.AddTargetPortal(ctx(), iscsi.Portal{Address: "10.0.0.7", Port: 3260}); err != nil {
		t.Errorf("warning: %v", err)
	}
	f.errs["AddSendTargetPortal"] = status(0xEFFF0003)
	err := h.AddTargetPortal(ctx(), iscsi.Portal{Address: "10.0.0.8", Port: 3260})
	wantKind(t, err, errdefs.ErrUnavailable)
	if !strings.Contains(err.Error(), "ISDSC_CONNECTION_FAILED") {
		t.Errorf("message %q", err)
	}
}

func TestListAndRemoveTargetPortals(t *testing.T) {
	h, f := setup()
	for _, p := range []iscsi.Portal{portal2, portal1} {
		if err := h.AddTargetPortal(ctx(), p); err != nil {
			t.Fatal(err)
		}
	}
	// The same portal registered for a specific initiator port as well.
	f.portals = append(f.portals, portalInfo{Initiator: `ROOT\ISCSIPRT\0000_0`, InitiatorPort: 1, Address: "10.0.0.5", Port: 3260})
	got, err := h.ListTargetPortals(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if want := []iscsi.Portal{portal1, portal2}; !reflect.DeepEqual(got, want) {
		t.Errorf("ListTargetPortals = %v, want %v", got, want)
	}
	f.calls = nil
	if err := h.RemoveTargetPortal(ctx(), portal1); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"SendTargetPortals",
		`RemoveSendTargetPortal "" 0xffffffff 10.0.0.5:3260`,
		"SendTargetPortals",
		`RemoveSendTargetPortal "ROOT\\ISCSIPRT\\0000_0" 0x1 10.0.0.5:3260`,
	}
	if !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls\n%q\nwant\n%q", f.calls, want)
	}
	if got, _ := h.ListTargetPortals(ctx()); !reflect.DeepEqual(got, []iscsi.Portal{portal2}) {
		t.Errorf("left %v", got)
	}
	wantKind(t, h.RemoveTargetPortal(ctx(), portal1), errdefs.ErrNotFound)
	if got, err := newHost(newFakeInitiator()).ListTargetPortals(ctx()); err != nil || got == nil || len(got) != 0 {
		t.Errorf("no portals: %v, %v (want an empty, non-nil list)", got, err)
	}
}

func TestDiscoverTargetPortal(t *testing.T) {
	h, f := setup()
	_, err := h.DiscoverTargetPortal(ctx(), portal1)
	wantKind(t, err, errdefs.ErrFailedPrecondition)
	for _, p := range []iscsi.Portal{portal1, portal2} {
		if err := h.AddTargetPortal(ctx(), p); err != nil {
			t.Fatal(err)
		}
	}
	f.calls = nil
	got, err := h.DiscoverTargetPortal(ctx(), portal1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{iqnA, iqnB}; !reflect.DeepEqual(got, want) {
		t.Errorf("targets %q, want %q", got, want)
	}
	if f.calls[1] != "RefreshSendTargetPortal 10.0.0.5:3260" {
		t.Errorf("discovery not refreshed first: %q", f.calls)
	}
	// A mechanism format this code cannot read is an error, not an
	// empty list.
	f.mechanismFormat = "SendTargets:%s/%d?"
	if _, err := h.DiscoverTargetPortal(ctx(), portal1); err == nil {
		t.Error("unreadable discovery mechanism accepted")
	}
}

func TestConnectTarget(t *testing.T) {
	h, f := setup()
	for _, p := range []iscsi.Portal{portal1, portal2} {
		if err := h.AddTargetPortal(ctx(), p); err != nil {
			t.Fatal(err)
		}
	}
	// No authentication.
	f.calls = nil
	if err := h.ConnectTarget(ctx(), iscsi.Login{Portal: portal1, IQN: iqnA, AuthType: iscsi.AuthNone}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"Sessions", `Login iqn.2026-01.example.com:a 10.0.0.5:3260 auth=0 user=""`}; !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls %q, want %q", f.calls, want)
	}
	// Connected: success without a login.
	f.calls = nil
	if err := h.ConnectTarget(ctx(), iscsi.Login{Portal: portal1, IQN: strings.ToUpper(iqnA), AuthType: iscsi.AuthNone}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"Sessions"}; !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls %q, want %q", f.calls, want)
	}
	// One-way CHAP, wrong secret then right.
	err := h.ConnectTarget(ctx(), iscsi.Login{Portal: portal1, IQN: iqnB, AuthType: iscsi.AuthOneWayCHAP, Username: "node1", Secret: "wrong-secret!"})
	wantKind(t, err, errdefs.ErrPermissionDenied)
	if !strings.Contains(err.Error(), "ISDSC_AUTHENTICATION_FAILURE") || strings.Contains(err.Error(), "wrong-secret!") {
		t.Errorf("message %q", err)
	}
	err = h.ConnectTarget(ctx(), iscsi.Login{Portal: portal1, IQN: iqnB, AuthType: iscsi.AuthOneWayCHAP, Username: "node1", Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	if !contains(f.calls, `Login iqn.2026-01.example.com:b 10.0.0.5:3260 auth=1 user="node1"`) {
		t.Errorf("calls %q", f.calls)
	}
	// Mutual CHAP needs the initiator secret.
	mutual := iscsi.Login{Portal: portal2, IQN: iqnC, AuthType: iscsi.AuthMutualCHAP, Username: "node1", Secret: secret}
	err = h.ConnectTarget(ctx(), mutual)
	wantKind(t, err, errdefs.ErrPermissionDenied)
	noSecret(t, err)
	if err := h.SetMutualChapSecret(ctx(), "initiator-secret"); err != nil {
		t.Fatal(err)
	}
	if err := h.ConnectTarget(ctx(), mutual); err != nil {
		t.Fatal(err)
	}
	// A target no portal reported.
	err = h.ConnectTarget(ctx(), iscsi.Login{Portal: portal1, IQN: "iqn.2026-01.example.com:none", AuthType: iscsi.AuthNone})
	wantKind(t, err, errdefs.ErrNotFound)
	// A concurrent login between the session check and ours.
	f.errs["Login"] = status(isdscTargetAlreadyLoggedIn)
	if err := h.ConnectTarget(ctx(), iscsi.Login{Portal: portal1, IQN: "iqn.2026-01.example.com:race", AuthType: iscsi.AuthNone}); err != nil {
		t.Errorf("already logged in: %v", err)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func connected(t *testing.T) (*Host, *fakeInitiator) {
	h, f := setup()
	if err := h.AddTargetPortal(ctx(), portal1); err != nil {
		t.Fatal(err)
	}
	if err := h.ConnectTarget(ctx(), iscsi.Login{Portal: portal1, IQN: iqnA, AuthType: iscsi.AuthNone}); err != nil {
		t.Fatal(err)
	}
	f.calls = nil
	return h, f
}

func TestTargetDisks(t *testing.T) {
	h, f := connected(t)
	got, err := h.TargetDisks(ctx(), portal1, iqnA)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint32{1, 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("disks %v, want %v (the non-disk device skipped)", got, want)
	}
	// A busy session is retried.
	f.busy = 2
	f.calls = nil
	if got, err := h.TargetDisks(ctx(), portal1, iqnA); err != nil || len(got) != 2 {
		t.Fatalf("busy: %v, %v", got, err)
	}
	if n := len(filter(f.calls, "Devices")); n != 3 {
		t.Errorf("%d Devices calls, want 3", n)
	}
	f.busy = 100
	_, err = h.TargetDisks(ctx(), portal1, iqnA)
	wantKind(t, err, errdefs.ErrUnavailable)
}

// TestTargetDisksWithoutSession follows upstream csi-proxy
// (kubernetes-csi/csi-proxy pkg/os/iscsi/api.go GetTargetDisks, commit
// eeba4706): a target the portal reported but with no session answers an
// empty list, not an error; a target the portal did not report (or an
// unregistered portal) is an error, here NotFound.
func TestTargetDisksWithoutSession(t *testing.T) {
	h, _ := connected(t)
	got, err := h.TargetDisks(ctx(), portal1, iqnB) // discovered, never connected
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("TargetDisks of a discovered target without a session = %#v, %v; want an empty list", got, err)
	}
	if err := h.DisconnectTarget(ctx(), portal1, iqnA); err != nil {
		t.Fatal(err)
	}
	got, err = h.TargetDisks(ctx(), portal1, iqnA) // disconnected
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("TargetDisks after DisconnectTarget = %#v, %v; want an empty list", got, err)
	}
	for _, c := range []struct {
		p   iscsi.Portal
		iqn string
	}{
		{portal1, iqnC}, // offered by another portal only
		{portal2, iqnB}, // portal not registered
		{portal1, "iqn.2026-01.example.com:none"}, // unknown
	} {
		_, err := h.TargetDisks(ctx(), c.p, c.iqn)
		wantKind(t, err, errdefs.ErrNotFound)
	}
}

func filter(calls []string, prefix string) []string {
	var out []string
	for _, c := range calls {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

func TestDisconnectTarget(t *testing.T) {
	h, f := connected(t)
	f.persistent[iqnA] = true
	if err := h.DisconnectTarget(ctx(), portal1, iqnA); err != nil {
		t.Fatal(err)
	}
	want := []string{"Sessions", "RemovePersistentTarget " + iqnA, "Logout ffffac0cacbff010-4000013700000016"}
	if !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls %q, want %q", f.calls, want)
	}
	if f.persistent[iqnA] {
		t.Error("persistent login left")
	}
	// No session: success, nothing called but the list.
	f.calls = nil
	if err := h.DisconnectTarget(ctx(), portal1, iqnA); err != nil {
		t.Fatal(err)
	}
	if want := []string{"Sessions"}; !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls %q, want %q", f.calls, want)
	}
}

func TestDisconnectTargetErrors(t *testing.T) {
	h, f := connected(t)
	// No persistent login (an undocumented failure code) does not matter.
	f.errs["Logout"] = status(isdscDeviceBusyOnSession)
	err := h.DisconnectTarget(ctx(), portal1, iqnA)
	wantKind(t, err, errdefs.ErrFailedPrecondition)
	if !strings.Contains(err.Error(), "in use") {
		t.Errorf("message %q", err)
	}
	// The session ended between the list and the logout.
	f.errs["Logout"] = status(isdscInvalidSessionID)
	if err := h.DisconnectTarget(ctx(), portal1, iqnA); err != nil {
		t.Errorf("session gone: %v", err)
	}
}

func TestSetMutualChapSecret(t *testing.T) {
	h, f := setup()
	if err := h.SetMutualChapSecret(ctx(), secret); err != nil {
		t.Fatal(err)
	}
	if f.initSecret != secret || !contains(f.calls, "SetInitiatorCHAPSecret len=14") {
		t.Errorf("calls %q", f.calls)
	}
	f.errs["SetInitiatorCHAPSecret"] = status(0xEFFF004C)
	err := h.SetMutualChapSecret(ctx(), secret)
	wantKind(t, err, errdefs.ErrInvalidArgument)
	noSecret(t, err)
	f.errs["SetInitiatorCHAPSecret"] = status(0xAFFF0048) // ISDSC_SHORT_CHAP_SECRET: a warning
	if err := h.SetMutualChapSecret(ctx(), secret); err != nil {
		t.Errorf("warning: %v", err)
	}
}

func TestServiceNotRunning(t *testing.T) {
	h, f := setup()
	f.errs["SendTargetPortals"] = status(isdscServiceNotRunning)
	_, err := h.ListTargetPortals(ctx())
	wantKind(t, err, errdefs.ErrFailedPrecondition)
	if !strings.Contains(err.Error(), "MSiSCSI") {
		t.Errorf("message %q does not say which service to start", err)
	}
}

func TestIsdscError(t *testing.T) {
	err := isdscError(status(isdscAuthenticationFailure), "log in")
	if err.Error() != "log in: ISDSC_AUTHENTICATION_FAILURE (0xefff0009: authentication failure); check chap_username and chap_secret (for MUTUAL_CHAP also the initiator secret set with SetMutualChapSecret): permission denied" {
		t.Errorf("%q", err)
	}
	if err := isdscError(status(0xEFFF0099), "x"); errgrpc.Code(err).String() != "Internal" || !strings.Contains(err.Error(), "0xefff0099") {
		t.Errorf("unknown status: %v", err)
	}
	for code, want := range map[uint32]bool{0xAFFF002E: true, 0xAFFF003B: true, 0xEFFF0009: false, 5: false} {
		if isWarning(code) != want {
			t.Errorf("isWarning(%#x) != %v", code, want)
		}
	}
}
