package systemd

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
)

func wantErr(t *testing.T, what string, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Errorf("%s: error %v, want %v", what, err, kind)
	}
}

func TestStatusOf(t *testing.T) {
	for _, c := range []struct {
		active, sub string
		want        system.ServiceStatus
	}{
		{"active", "running", system.StatusRunning},
		{"active", "exited", system.StatusRunning}, // oneshot with RemainAfterExit
		{"reloading", "reload", system.StatusRunning},
		{"refreshing", "running", system.StatusRunning},
		{"activating", "start-pre", system.StatusStartPending},
		{"activating", "auto-restart", system.StatusStartPending},
		{"deactivating", "stop-sigterm", system.StatusStopPending},
		{"inactive", "dead", system.StatusStopped},
		{"failed", "failed", system.StatusStopped},
		{"maintenance", "cleaning", system.StatusStopped},
		{"", "", system.StatusUnknown},
		{"something-new", "x", system.StatusUnknown},
	} {
		if got := StatusOf(c.active, c.sub); got != c.want {
			t.Errorf("StatusOf(%q, %q) = %v, want %v", c.active, c.sub, got, c.want)
		}
	}
}

func TestStartTypeOf(t *testing.T) {
	for state, want := range map[string]system.StartType{
		"enabled": system.StartAutomatic, "enabled-runtime": system.StartAutomatic, "generated": system.StartAutomatic,
		"disabled": system.StartDisabled, "masked": system.StartDisabled, "masked-runtime": system.StartDisabled,
		"static": system.StartManual, "indirect": system.StartManual, "linked": system.StartManual,
		"linked-runtime": system.StartManual, "alias": system.StartManual, "transient": system.StartManual,
		"bad": system.StartManual, "": system.StartManual,
	} {
		if got := StartTypeOf(state); got != want {
			t.Errorf("StartTypeOf(%q) = %v, want %v", state, got, want)
		}
	}
}

func TestUnitName(t *testing.T) {
	for name, want := range map[string]string{
		"ssh":                    "ssh.service",
		"ssh.service":            "ssh.service",
		"getty@tty1":             "getty@tty1.service",
		"systemd-udevd":          "systemd-udevd.service",
		"reboot.target":          "reboot.target.service", // never a target
		"dev-sda.mount":          "dev-sda.mount.service", // never a mount
		"a:b_c.d":                "a:b_c.d.service",
		strings.Repeat("x", 247): strings.Repeat("x", 247) + ".service",
	} {
		if got, err := UnitName(name); err != nil || got != want {
			t.Errorf("UnitName(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	for _, name := range []string{"", ".service", "getty@", "getty@.service", "@x", "a@b@c", "a b", "a/b", `a\x2db`, "ünï", "a;reboot", strings.Repeat("x", 248)} {
		if got, err := UnitName(name); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("UnitName(%q) = %q, %v; want ErrInvalidArgument", name, got, err)
		}
	}
}

func TestJobResultError(t *testing.T) {
	for result, kind := range map[string]error{
		"done": nil, "skipped": nil,
		"failed": errdefs.ErrFailedPrecondition, "dependency": errdefs.ErrFailedPrecondition,
		"canceled": errdefs.ErrUnavailable, "timeout": errdefs.ErrUnavailable,
	} {
		err := JobResultError("StartUnit", "foo.service", result)
		if kind == nil && err != nil || kind != nil && !errors.Is(err, kind) {
			t.Errorf("JobResultError(%q) = %v, want %v", result, err, kind)
		}
	}
	if err := JobResultError("StopUnit", "foo.service", "weird"); err == nil || errgrpc.Code(err).String() != "Internal" {
		t.Errorf("unknown result: %v", err)
	}
	if err := JobResultError("StartUnit", "foo.service", "failed"); !strings.Contains(err.Error(), "journalctl -u foo.service") {
		t.Errorf("failed start should point at the journal: %v", err)
	}
}

func TestBusError(t *testing.T) {
	for name, kind := range map[string]error{
		"org.freedesktop.systemd1.NoSuchUnit":                         errdefs.ErrNotFound,
		"org.freedesktop.systemd1.UnitMasked":                         errdefs.ErrFailedPrecondition,
		"org.freedesktop.systemd1.OnlyByDependency":                   errdefs.ErrFailedPrecondition,
		"org.freedesktop.DBus.Error.AccessDenied":                     errdefs.ErrPermissionDenied,
		"org.freedesktop.DBus.Error.InteractiveAuthorizationRequired": errdefs.ErrPermissionDenied,
		"org.freedesktop.DBus.Error.ServiceUnknown":                   errdefs.ErrUnavailable,
		"org.freedesktop.DBus.Error.NoReply":                          errdefs.ErrUnavailable,
		"org.freedesktop.DBus.Error.InvalidArgs":                      errdefs.ErrInvalidArgument,
	} {
		err := fmt.Errorf("wrapped: %w", &BusError{Name: name, Message: "m"})
		if !errors.Is(err, kind) {
			t.Errorf("%s: %v is not %v", name, err, kind)
		}
		if !strings.Contains(err.Error(), name+": m") {
			t.Errorf("%s: text %q lacks the D-Bus name", name, err)
		}
	}
	if err := (&BusError{Name: "org.example.Odd"}); errgrpc.Code(err).String() != "Internal" || err.Error() != "org.example.Odd" {
		t.Errorf("unknown name: %v code %v", err, errgrpc.Code(err))
	}
	if got := socketOf("unix:path=/run/dbus/system_bus_socket"); got != "/run/dbus/system_bus_socket" {
		t.Errorf("socketOf = %q", got)
	}
	if got := socketOf("unix:abstract=x,guid=1"); got != "unix:abstract=x,guid=1" {
		t.Errorf("socketOf(abstract) = %q", got)
	}
}

func TestUnitFromProperties(t *testing.T) {
	u := unitFromProperties("a.service", map[string]any{
		"Description": "A", "LoadState": "loaded", "ActiveState": "active", "SubState": "running",
		"UnitFileState": "enabled", "RequiredBy": []string{"b.service"}, "BoundBy": []string{"c.service"},
		"ConsistsOf": []string{}, "Id": "a.service", "ActiveEnterTimestamp": uint64(5),
		"RequisiteOf": 7, // mistyped: ignored, not a failure
	})
	want := Unit{Name: "a.service", Description: "A", LoadState: "loaded", ActiveState: "active", SubState: "running",
		UnitFileState: "enabled", RequiredBy: []string{"b.service"}, BoundBy: []string{"c.service"}, ConsistsOf: []string{}}
	if !reflect.DeepEqual(u, want) {
		t.Errorf("unitFromProperties = %+v\nwant %+v", u, want)
	}
}

// fixture is a small systemd: a running enabled service that a running
// unit requires, a disabled stopped one, a masked one and a static one
// that only a stopped unit requires and a running one merely wants.
func fixture() *FakeBus {
	return NewFakeBus(
		Unit{Name: "iscsid.service", Description: "iSCSI initiator daemon", ActiveState: "active", SubState: "running",
			UnitFileState: "enabled", RequiredBy: []string{"open-iscsi.service"}, ConsistsOf: []string{"iscsid-helper.service"}},
		Unit{Name: "open-iscsi.service", Description: "Login to default iSCSI targets", ActiveState: "active", SubState: "exited", UnitFileState: "enabled"},
		Unit{Name: "iscsid-helper.service", ActiveState: "active", SubState: "running", UnitFileState: "static"},
		Unit{Name: "smbd.service", Description: "Samba SMB Daemon", ActiveState: "inactive", SubState: "dead", UnitFileState: "disabled"},
		Unit{Name: "masked.service", LoadState: "masked", ActiveState: "inactive", SubState: "dead", UnitFileState: "masked"},
		Unit{Name: "lonely.service", ActiveState: "active", SubState: "running", UnitFileState: "static",
			RequiredBy: []string{"stopped.service"}},
		Unit{Name: "stopped.service", ActiveState: "inactive", SubState: "dead", UnitFileState: "disabled"},
	)
}

func TestGetService(t *testing.T) {
	h := New(t.TempDir(), fixture())
	ctx := context.Background()
	for name, want := range map[string]system.ServiceInfo{
		"iscsid":        {DisplayName: "iSCSI initiator daemon", StartType: system.StartAutomatic, Status: system.StatusRunning},
		"smbd.service":  {DisplayName: "Samba SMB Daemon", StartType: system.StartDisabled, Status: system.StatusStopped},
		"masked":        {DisplayName: "masked.service", StartType: system.StartDisabled, Status: system.StatusStopped},
		"iscsid-helper": {DisplayName: "iscsid-helper.service", StartType: system.StartManual, Status: system.StatusRunning},
	} {
		got, err := h.GetService(ctx, name)
		if err != nil || got != want {
			t.Errorf("GetService(%s) = %+v, %v; want %+v", name, got, err, want)
		}
	}
	_, err := h.GetService(ctx, "nosuch")
	wantErr(t, "GetService(nosuch)", err, errdefs.ErrNotFound)
	_, err = h.GetService(ctx, "getty@")
	wantErr(t, "GetService(template)", err, errdefs.ErrInvalidArgument)
}

func TestStartService(t *testing.T) {
	bus := fixture()
	h := New("", bus)
	ctx := context.Background()
	if err := h.StartService(ctx, "smbd"); err != nil {
		t.Fatal(err)
	}
	if info, _ := h.GetService(ctx, "smbd"); info.Status != system.StatusRunning {
		t.Errorf("smbd is %v after start", info.Status)
	}
	if err := h.StartService(ctx, "iscsid"); err != nil { // running: no job
		t.Error(err)
	}
	if got, want := bus.Jobs(), []string{"StartUnit smbd.service replace"}; !reflect.DeepEqual(got, want) {
		t.Errorf("jobs = %q, want %q", got, want)
	}
	wantErr(t, "start nosuch", h.StartService(ctx, "nosuch"), errdefs.ErrNotFound)
	wantErr(t, "start masked", h.StartService(ctx, "masked"), errdefs.ErrFailedPrecondition)
	bus.FailNextJob("StartUnit", "stopped.service", "failed")
	wantErr(t, "start failing", h.StartService(ctx, "stopped"), errdefs.ErrFailedPrecondition)
	bus.FailNextJob("StartUnit", "stopped.service", "canceled")
	wantErr(t, "start canceled", h.StartService(ctx, "stopped"), errdefs.ErrUnavailable)
	if info, _ := h.GetService(ctx, "stopped"); info.Status != system.StatusStopped {
		t.Errorf("a failed start left the unit %v", info.Status)
	}
}

func TestStopService(t *testing.T) {
	bus := fixture()
	h := New("", bus)
	ctx := context.Background()

	// Without force, running units that require it block the stop.
	err := h.StopService(ctx, "iscsid", false)
	wantErr(t, "stop with dependents", err, errdefs.ErrFailedPrecondition)
	if err != nil && !strings.Contains(err.Error(), "iscsid-helper.service, open-iscsi.service") {
		t.Errorf("the error should name the dependents: %v", err)
	}
	if len(bus.Jobs()) != 0 {
		t.Errorf("jobs ran: %q", bus.Jobs())
	}
	// With force, systemd stops them with it.
	if err := h.StopService(ctx, "iscsid", true); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"iscsid", "open-iscsi", "iscsid-helper"} {
		if info, _ := h.GetService(ctx, n); info.Status != system.StatusStopped {
			t.Errorf("%s is %v after a forced stop", n, info.Status)
		}
	}
	// A dependent that is itself stopped does not block.
	if err := h.StopService(ctx, "lonely", false); err != nil {
		t.Errorf("stop with a stopped dependent: %v", err)
	}
	// Stopped is success, without a job.
	if err := h.StopService(ctx, "smbd", false); err != nil {
		t.Error(err)
	}
	if got, want := bus.Jobs(), []string{"StopUnit iscsid.service replace", "StopUnit lonely.service replace"}; !reflect.DeepEqual(got, want) {
		t.Errorf("jobs = %q, want %q", got, want)
	}
	wantErr(t, "stop nosuch", h.StopService(ctx, "nosuch", true), errdefs.ErrNotFound)
	bus.SetUnit(Unit{Name: "slow.service", ActiveState: "active"})
	bus.FailNextJob("StopUnit", "slow.service", "timeout")
	wantErr(t, "stop timing out", h.StopService(ctx, "slow", false), errdefs.ErrUnavailable)
}

func TestBusFailure(t *testing.T) {
	bus := fixture()
	bus.SetError(errdefs.Errorf(errdefs.ErrUnavailable, "systemd is not reachable over D-Bus at /run/dbus/system_bus_socket"))
	h := New("", bus)
	ctx := context.Background()
	_, err := h.GetService(ctx, "iscsid")
	wantErr(t, "GetService", err, errdefs.ErrUnavailable)
	wantErr(t, "StartService", h.StartService(ctx, "smbd"), errdefs.ErrUnavailable)
	wantErr(t, "StopService", h.StopService(ctx, "iscsid", true), errdefs.ErrUnavailable)
	if len(bus.Jobs()) != 0 {
		t.Errorf("jobs ran: %q", bus.Jobs())
	}
}

func TestBIOSSerialNumber(t *testing.T) {
	ctx := context.Background()
	sn, err := New("testdata/sysfs", nil).BIOSSerialNumber(ctx)
	if want := "VMware-42 1a 2b 3c 4d 5e 6f 70-81 92 a3 b4 c5 d6 e7 f8"; err != nil || sn != want {
		t.Errorf("BIOSSerialNumber = %q, %v; want %q", sn, err, want)
	}
	_, err = New(t.TempDir(), nil).BIOSSerialNumber(ctx)
	wantErr(t, "no DMI", err, errdefs.ErrNotFound)
	if err != nil && !strings.Contains(err.Error(), "the firmware reports no serial number") {
		t.Errorf("message: %v", err)
	}
	_, err = New("testdata/sysfs-empty-serial", nil).BIOSSerialNumber(ctx)
	wantErr(t, "blank serial", err, errdefs.ErrNotFound)
}
