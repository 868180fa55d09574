//go:build linux

package systemd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

func TestDBusUnreachable(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "no_bus_here")
	h := New("", NewDBus("unix:path="+sock))
	_, err := h.GetService(context.Background(), "ssh")
	wantErr(t, "GetService", err, errdefs.ErrUnavailable)
	if want := "systemd is not reachable over D-Bus at " + sock; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want it to say %q", err, want)
	}
	wantErr(t, "StartService", h.StartService(context.Background(), "ssh"), errdefs.ErrUnavailable)

	// The default address names the system bus socket.
	if _, err := os.Stat("/run/dbus/system_bus_socket"); err == nil {
		t.Skip("this host has a system bus")
	}
	err = New("", NewDBus("")).StopService(context.Background(), "ssh", false)
	if want := "systemd is not reachable over D-Bus at /run/dbus/system_bus_socket"; err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("error %v, want ErrUnavailable saying %q", err, want)
	}
}

// startBus runs a private dbus-daemon and returns its address; it is
// stopped (by PID) when the test ends.
func startBus(t *testing.T) string {
	t.Helper()
	testutil.RequireTool(t, "dbus-daemon", "dbus-daemon")
	dir := t.TempDir()
	sock := filepath.Join(dir, "bus")
	conf := fmt.Sprintf(`<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`, sock)
	if err := os.WriteFile(filepath.Join(dir, "bus.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("dbus-daemon", "--config-file="+filepath.Join(dir, "bus.conf"), "--nofork", "--nopidfile")
	var stderr bytes.Buffer // it complains it cannot raise its fd limit (no CAP_SYS_RESOURCE here)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("dbus-daemon: %s", stderr.String())
		}
	})
	// The socket exists from bind(2) on but refuses connections until
	// listen(2): wait until one is accepted.
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("unix", sock); err == nil {
			_ = c.Close()
			return "unix:path=" + sock
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("dbus-daemon did not accept connections on its socket")
	return ""
}

// fakeSystemd serves the slice of org.freedesktop.systemd1 that DBus
// uses, on a real bus, backed by a FakeBus.
type fakeSystemd struct {
	conn *dbus.Conn
	bus  *FakeBus

	mu      sync.Mutex
	nextJob uint32
	// how JobRemoved is sent: "before" the method reply, "after" it,
	// "never", or "spoofed" (a peer sends a unicast "done" first, then
	// systemd the real result, after the reply).
	mode    string
	spoofer *dbus.Conn
	victim  string // the client's unique name, for the spoofer
}

// set changes how the next jobs end, and whom the spoofer targets.
func (s *fakeSystemd) set(mode, victim string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode, s.victim = mode, victim
}

func (s *fakeSystemd) LoadUnit(name string) (dbus.ObjectPath, *dbus.Error) {
	path := dbus.ObjectPath("/org/freedesktop/systemd1/unit/" + strings.NewReplacer(".", "_2e", "-", "_2d", "@", "_40").Replace(name))
	if err := s.conn.Export(fakeUnit{s, name}, path, "org.freedesktop.DBus.Properties"); err != nil {
		return "", dbus.MakeFailedError(err)
	}
	return path, nil
}

func (s *fakeSystemd) Subscribe() *dbus.Error { return nil }

func (s *fakeSystemd) StartUnit(name, mode string) (dbus.ObjectPath, *dbus.Error) {
	return s.job("StartUnit", name, mode)
}

func (s *fakeSystemd) StopUnit(name, mode string) (dbus.ObjectPath, *dbus.Error) {
	return s.job("StopUnit", name, mode)
}

func (s *fakeSystemd) job(method, name, mode string) (dbus.ObjectPath, *dbus.Error) {
	result, err := s.bus.RunJob(context.Background(), method, name, mode)
	var be *BusError
	if errors.As(err, &be) {
		return "", dbus.NewError(be.Name, []any{be.Message})
	}
	if err != nil {
		return "", dbus.MakeFailedError(err)
	}
	s.mu.Lock()
	s.nextJob++
	id, how, victim := s.nextJob, s.mode, s.victim
	s.mu.Unlock()
	path := dbus.ObjectPath(fmt.Sprintf("/org/freedesktop/systemd1/job/%d", id))
	emit := func(r string) { _ = s.conn.Emit(managerPath, jobRemoved, id, path, name, r) }
	// Another job's removal first: it must not be taken for ours.
	_ = s.conn.Emit(managerPath, jobRemoved, id+1000, dbus.ObjectPath("/org/freedesktop/systemd1/job/999999"), name, "failed")
	switch how {
	case "before":
		emit(result)
	case "after":
		go func() { time.Sleep(20 * time.Millisecond); emit(result) }()
	case "spoofed":
		msg := &dbus.Message{Type: dbus.TypeSignal, Headers: map[dbus.HeaderField]dbus.Variant{
			dbus.FieldPath:        dbus.MakeVariant(managerPath),
			dbus.FieldInterface:   dbus.MakeVariant(managerIface),
			dbus.FieldMember:      dbus.MakeVariant("JobRemoved"),
			dbus.FieldDestination: dbus.MakeVariant(victim),
			dbus.FieldSignature:   dbus.MakeVariant(dbus.SignatureOf(id, path, name, "done")),
		}, Body: []any{id, path, name, "done"}}
		s.spoofer.Send(msg, nil)
		go func() { time.Sleep(50 * time.Millisecond); emit(result) }()
	}
	return path, nil
}

// fakeUnit is a unit object's org.freedesktop.DBus.Properties.
type fakeUnit struct {
	s    *fakeSystemd
	name string
}

func (u fakeUnit) GetAll(iface string) (map[string]dbus.Variant, *dbus.Error) {
	if iface != unitIface {
		return nil, dbus.NewError("org.freedesktop.DBus.Error.UnknownInterface", []any{iface})
	}
	x, _ := u.s.bus.Unit(context.Background(), u.name)
	strs := func(v []string) dbus.Variant {
		if v == nil {
			v = []string{}
		}
		return dbus.MakeVariant(v)
	}
	return map[string]dbus.Variant{
		"Id": dbus.MakeVariant(u.name), "Description": dbus.MakeVariant(x.Description),
		"LoadState": dbus.MakeVariant(x.LoadState), "ActiveState": dbus.MakeVariant(x.ActiveState),
		"SubState": dbus.MakeVariant(x.SubState), "UnitFileState": dbus.MakeVariant(x.UnitFileState),
		"RequiredBy": strs(x.RequiredBy), "RequisiteOf": strs(x.RequisiteOf),
		"BoundBy": strs(x.BoundBy), "ConsistsOf": strs(x.ConsistsOf),
		"ActiveEnterTimestamp": dbus.MakeVariant(uint64(1)),
	}, nil
}

// TestDBusAgainstFakeSystemd drives DBus over a real dbus-daemon against a
// fake systemd: the wire encoding, the signal handling and the error
// mapping that FakeBus cannot exercise.
func TestDBusAgainstFakeSystemd(t *testing.T) {
	addr := startBus(t)
	ctx := context.Background()
	client := NewDBus(addr)
	t.Cleanup(func() { _ = client.Close() })
	h := New("", client)

	// The bus is up but nobody owns systemd's name.
	_, err := h.GetService(ctx, "iscsid")
	wantErr(t, "GetService without systemd", err, errdefs.ErrUnavailable)
	if err != nil && !strings.Contains(err.Error(), "systemd is not running on the D-Bus bus") {
		t.Errorf("message: %v", err)
	}

	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	spoofer, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = spoofer.Close() })
	fake := &fakeSystemd{conn: conn, bus: fixture(), mode: "before", spoofer: spoofer}
	if err := conn.Export(fake, managerPath, managerIface); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName(systemdName, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("RequestName: %v %v", reply, err)
	}

	info, err := h.GetService(ctx, "iscsid")
	if want := (system.ServiceInfo{DisplayName: "iSCSI initiator daemon", StartType: system.StartAutomatic, Status: system.StatusRunning}); err != nil || info != want {
		t.Errorf("GetService(iscsid) = %+v, %v; want %+v", info, err, want)
	}
	_, err = h.GetService(ctx, "nosuch")
	wantErr(t, "GetService(nosuch)", err, errdefs.ErrNotFound)
	_, err = client.RunJob(ctx, "StartUnit", "nosuch.service", "replace")
	wantErr(t, "StartUnit(nosuch) over the wire", err, errdefs.ErrNotFound)
	if err != nil && !strings.Contains(err.Error(), "org.freedesktop.systemd1.NoSuchUnit") {
		t.Errorf("the error should carry the D-Bus name: %v", err)
	}

	// JobRemoved before the method reply: it must not be missed.
	if err := h.StartService(ctx, "smbd"); err != nil {
		t.Fatalf("StartService(smbd), signal before reply: %v", err)
	}
	// JobRemoved after the reply.
	fake.set("after", "")
	err = h.StopService(ctx, "iscsid", false)
	wantErr(t, "StopService(iscsid) with dependents", err, errdefs.ErrFailedPrecondition)
	if err := h.StopService(ctx, "iscsid", true); err != nil {
		t.Fatalf("StopService(iscsid, force), signal after reply: %v", err)
	}
	if info, _ := h.GetService(ctx, "open-iscsi"); info.Status != system.StatusStopped {
		t.Errorf("open-iscsi is %v after a forced stop of iscsid", info.Status)
	}
	fake.bus.FailNextJob("StartUnit", "stopped.service", "failed")
	wantErr(t, "failing start", h.StartService(ctx, "stopped"), errdefs.ErrFailedPrecondition)

	// A peer that is not systemd cannot fake a job's end.
	client.mu.Lock()
	victim := client.conn.Names()[0]
	client.mu.Unlock()
	fake.set("spoofed", victim)
	fake.bus.FailNextJob("StartUnit", "stopped.service", "failed")
	wantErr(t, "start with a spoofed JobRemoved", h.StartService(ctx, "stopped"), errdefs.ErrFailedPrecondition)

	// A job that never ends: the caller's deadline wins.
	fake.set("never", "")
	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	wantErr(t, "start that never ends", h.StartService(tctx, "stopped"), context.DeadlineExceeded)

	// systemd goes away, then the bus: calls fail as unavailable.
	if _, err := conn.ReleaseName(systemdName); err != nil {
		t.Fatal(err)
	}
	_, err = h.GetService(ctx, "iscsid")
	wantErr(t, "GetService after systemd left", err, errdefs.ErrUnavailable)
}

// ownSystemdName connects to the bus at addr, serves a fakeSystemd of the
// fixture's units on the connection and takes systemd's well-known name
// with it, as systemd does at boot, and returns the connection, which
// closes with the test.
func ownSystemdName(t *testing.T, addr string) *dbus.Conn {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	fake := &fakeSystemd{conn: conn, bus: fixture(), mode: "before"}
	if err := conn.Export(fake, managerPath, managerIface); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.RequestName(systemdName, dbus.NameFlagDoNotQueue); err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestDBusReconnects: after the connection breaks, the next call opens a
// new one.
func TestDBusReconnects(t *testing.T) {
	addr := startBus(t)
	ctx := context.Background()
	ownSystemdName(t, addr)
	client := NewDBus(addr)
	t.Cleanup(func() { _ = client.Close() })
	if _, err := client.Unit(ctx, "iscsid.service"); err != nil {
		t.Fatal(err)
	}
	client.mu.Lock()
	_ = client.conn.Close() // as if the bus dropped it
	client.mu.Unlock()
	if u, err := client.Unit(ctx, "iscsid.service"); err != nil || u.ActiveState != "active" {
		t.Errorf("Unit after reconnect = %+v, %v", u, err)
	}
}

// TestHostCloseClosesConnection: Host.Close closes the DBus connection a
// call opened, so hosts built and closed again (a daemon restarted in
// process, library mode's New and Close) leave no connection on the bus
// and no goroutine reading one.
func TestHostCloseClosesConnection(t *testing.T) {
	addr := startBus(t)
	ctx := context.Background()
	conn := ownSystemdName(t, addr)
	// peers counts the connections on the bus (their unique names),
	// the bus daemon's own and conn's included.
	peers := func() int {
		var names []string
		if err := conn.BusObject().Call("org.freedesktop.DBus.ListNames", 0).Store(&names); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, name := range names {
			if strings.HasPrefix(name, ":") {
				n++
			}
		}
		return n
	}
	basePeers, baseGoroutines := peers(), runtime.NumGoroutine()
	for range 10 {
		h := New("", NewDBus(addr))
		if _, err := h.GetService(ctx, "iscsid"); err != nil {
			t.Fatal(err)
		}
		if err := h.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if err := New("", NewFakeBus()).Close(); err != nil {
		t.Errorf("Close of a Host on a FakeBus: %v", err)
	}
	// The bus daemon notices a closed connection at once; goroutines
	// end shortly after theirs closed (and conn's may come and go).
	deadline := time.Now().Add(5 * time.Second)
	for {
		p, g := peers(), runtime.NumGoroutine()
		if p == basePeers && g <= baseGoroutines {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%d connections on the bus and %d goroutines after 10 hosts were closed, %d and %d before", p, g, basePeers, baseGoroutines)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
}
