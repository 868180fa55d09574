package services

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
)

// fakeSvc is one service of fakeSCM. Pending states advance one step per
// Query, the way a real service reports progress between polls.
type fakeSvc struct {
	display   string
	startType uint32
	state     uint32
	exitCode  uint32
	// dependsOn lists the services this one needs.
	dependsOn []string
	// failStart makes the service stop again right after starting.
	failStart bool
	// stuck keeps a pending state forever.
	stuck bool
	// acceptsStop false makes ControlService(STOP) fail with 1052.
	noStop bool
}

// fakeSCM is a recording service control manager.
type fakeSCM struct {
	svcs  map[string]*fakeSvc
	calls []string
	// openErr injects an OpenService error by name.
	openErr map[string]error
}

func newFakeSCM() *fakeSCM {
	return &fakeSCM{svcs: map[string]*fakeSvc{}, openErr: map[string]error{}}
}

func (m *fakeSCM) Open(name string, access uint32) (serviceHandle, error) {
	m.calls = append(m.calls, fmt.Sprintf("Open %s %#x", name, access))
	if err := m.openErr[name]; err != nil {
		return nil, err
	}
	s := m.svcs[strings.ToLower(name)]
	if s == nil {
		return nil, errServiceDoesNotExist
	}
	return &fakeHandle{m: m, name: strings.ToLower(name), s: s}, nil
}

// activeDependents returns the running services that need name, directly.
func (m *fakeSCM) activeDependents(name string) []string {
	var out []string
	for n, s := range m.svcs {
		if s.state == stateStopped {
			continue
		}
		for _, d := range s.dependsOn {
			if d == name {
				out = append(out, n)
			}
		}
	}
	return out
}

type fakeHandle struct {
	m    *fakeSCM
	name string
	s    *fakeSvc
}

func (h *fakeHandle) rec(op string) { h.m.calls = append(h.m.calls, op+" "+h.name) }

func (h *fakeHandle) Query() (status, error) {
	st := status{State: h.s.state, Win32ExitCode: h.s.exitCode}
	if !h.s.stuck {
		switch h.s.state {
		case stateStartPending:
			if h.s.failStart {
				h.s.state, h.s.exitCode = stateStopped, 1067
			} else {
				h.s.state = stateRunning
			}
		case stateStopPending:
			h.s.state = stateStopped
		case stateContinuePending:
			h.s.state = stateRunning
		}
	}
	return st, nil
}

func (h *fakeHandle) Config() (string, uint32, error) {
	h.rec("Config")
	return h.s.display, h.s.startType, nil
}

func (h *fakeHandle) Start() error {
	h.rec("Start")
	switch {
	case h.s.startType == 4:
		return errServiceDisabled
	case h.s.state != stateStopped:
		return errServiceAlreadyRunning
	}
	h.s.state = stateStartPending
	return nil
}

func (h *fakeHandle) Control(code uint32) error {
	h.rec(fmt.Sprintf("Control(%d)", code))
	switch code {
	case controlStop:
		switch {
		case h.s.noStop:
			return errInvalidServiceControl
		case h.s.state == stateStopped:
			return errServiceNotActive
		case len(h.m.activeDependents(h.name)) > 0:
			return errDependentServicesRun
		}
		h.s.state = stateStopPending
	case controlContinue:
		h.s.state = stateContinuePending
	}
	return nil
}

func (h *fakeHandle) ActiveDependents() ([]string, error) {
	h.rec("ActiveDependents")
	return h.m.activeDependents(h.name), nil
}

func (h *fakeHandle) Close() {}

type fakeFirmware struct {
	raw []byte
	err error
}

func (f fakeFirmware) RawSMBIOS() ([]byte, error) { return f.raw, f.err }

// testHost returns a Host over scm with a fake clock: sleeping advances
// it, so timeouts are reached instantly.
func testHost(scm *fakeSCM) (*Host, *int) {
	h := newHost(scm, fakeFirmware{})
	now := time.Unix(0, 0)
	sleeps := 0
	h.now = func() time.Time { return now }
	h.sleep = func(ctx context.Context, d time.Duration) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		sleeps++
		now = now.Add(d)
		return nil
	}
	return h, &sleeps
}

func ops(calls []string, prefix string) []string {
	var out []string
	for _, c := range calls {
		if !strings.HasPrefix(c, "Open ") || prefix == "Open" {
			if strings.HasPrefix(c, prefix) {
				out = append(out, c)
			}
		}
	}
	return out
}

func TestGetService(t *testing.T) {
	scm := newFakeSCM()
	scm.svcs["msiscsi"] = &fakeSvc{display: "Microsoft iSCSI Initiator Service", startType: 3, state: stateRunning}
	h, _ := testHost(scm)
	info, err := h.GetService(context.Background(), "MSiSCSI")
	if err != nil {
		t.Fatal(err)
	}
	want := system.ServiceInfo{DisplayName: "Microsoft iSCSI Initiator Service", StartType: system.StartManual, Status: system.StatusRunning}
	if info != want {
		t.Errorf("got %+v, want %+v", info, want)
	}
	// Least rights: query config and status only.
	if scm.calls[0] != "Open MSiSCSI 0x5" {
		t.Errorf("opened with %q", scm.calls[0])
	}
	_, err = h.GetService(context.Background(), "nosuch")
	if !errors.Is(err, errdefs.ErrNotFound) || !strings.Contains(err.Error(), "1060") {
		t.Errorf("unknown service: %v", err)
	}
	scm.openErr["locked"] = errAccessDenied
	_, err = h.GetService(context.Background(), "locked")
	if !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("access denied: %v", err)
	}
}

func TestStartService(t *testing.T) {
	scm := newFakeSCM()
	scm.svcs["a"] = &fakeSvc{startType: 3, state: stateStopped}
	h, sleeps := testHost(scm)
	if err := h.StartService(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if scm.svcs["a"].state != stateRunning {
		t.Error("not running")
	}
	if want := []string{"Open a 0x54", "Start a"}; !reflect.DeepEqual(scm.calls, want) {
		t.Errorf("calls %q, want %q", scm.calls, want)
	}
	if *sleeps == 0 {
		t.Error("did not wait for the running state")
	}
	// Running: success without a start.
	scm.calls = nil
	if err := h.StartService(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if len(ops(scm.calls, "Start")) != 0 {
		t.Errorf("started a running service: %q", scm.calls)
	}
}

func TestStartServiceErrors(t *testing.T) {
	scm := newFakeSCM()
	scm.svcs["off"] = &fakeSvc{startType: 4, state: stateStopped}
	scm.svcs["crash"] = &fakeSvc{startType: 3, state: stateStopped, failStart: true}
	scm.svcs["slow"] = &fakeSvc{startType: 3, state: stateStartPending, stuck: true}
	scm.svcs["paused"] = &fakeSvc{startType: 3, state: statePaused}
	h, _ := testHost(scm)
	ctx := context.Background()
	err := h.StartService(ctx, "off")
	if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "1058") {
		t.Errorf("disabled: %v", err)
	}
	err = h.StartService(ctx, "crash")
	if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "1067") {
		t.Errorf("crashing service: %v", err)
	}
	err = h.StartService(ctx, "slow")
	if !errors.Is(err, errdefs.ErrUnavailable) || !strings.Contains(err.Error(), "30s") {
		t.Errorf("stuck service: %v", err)
	}
	if err := h.StartService(ctx, "paused"); err != nil {
		t.Errorf("paused service: %v", err)
	}
	if !errors.Is(h.StartService(ctx, "missing"), errdefs.ErrNotFound) {
		t.Error("missing service not NotFound")
	}
	// The caller's context bounds the wait.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	scm.svcs["slow2"] = &fakeSvc{startType: 3, state: stateStartPending, stuck: true}
	if err := h.StartService(cctx, "slow2"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestStopService(t *testing.T) {
	scm := newFakeSCM()
	scm.svcs["a"] = &fakeSvc{state: stateRunning}
	h, _ := testHost(scm)
	if err := h.StopService(context.Background(), "a", false); err != nil {
		t.Fatal(err)
	}
	if scm.svcs["a"].state != stateStopped {
		t.Error("not stopped")
	}
	if want := []string{"Open a 0x2c", "ActiveDependents a", "Control(1) a"}; !reflect.DeepEqual(scm.calls, want) {
		t.Errorf("calls %q, want %q", scm.calls, want)
	}
	// Stopped: success without a control.
	scm.calls = nil
	if err := h.StopService(context.Background(), "a", false); err != nil {
		t.Fatal(err)
	}
	if len(ops(scm.calls, "Control")) != 0 {
		t.Errorf("stopped a stopped service: %q", scm.calls)
	}
}

func TestStopServiceDependents(t *testing.T) {
	setup := func() *fakeSCM {
		scm := newFakeSCM()
		scm.svcs["base"] = &fakeSvc{state: stateRunning}
		scm.svcs["mid"] = &fakeSvc{state: stateRunning, dependsOn: []string{"base"}}
		scm.svcs["top"] = &fakeSvc{state: stateRunning, dependsOn: []string{"mid"}}
		scm.svcs["idle"] = &fakeSvc{state: stateStopped, dependsOn: []string{"base"}}
		return scm
	}
	scm := setup()
	h, _ := testHost(scm)
	err := h.StopService(context.Background(), "base", false)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "mid") || !strings.Contains(err.Error(), "1051") {
		t.Fatalf("without force: %v", err)
	}
	if scm.svcs["base"].state != stateRunning || scm.svcs["mid"].state != stateRunning {
		t.Error("something stopped without force")
	}

	scm = setup()
	h, _ = testHost(scm)
	if err := h.StopService(context.Background(), "base", true); err != nil {
		t.Fatal(err)
	}
	for n, s := range scm.svcs {
		if s.state != stateStopped {
			t.Errorf("%s still %s", n, stateName(s.state))
		}
	}
	// Dependents are stopped first, deepest first.
	if got, want := ops(scm.calls, "Control"), []string{"Control(1) top", "Control(1) mid", "Control(1) base"}; !reflect.DeepEqual(got, want) {
		t.Errorf("stop order %q, want %q", got, want)
	}
}

func TestStopServiceErrors(t *testing.T) {
	scm := newFakeSCM()
	scm.svcs["nostop"] = &fakeSvc{state: stateRunning, noStop: true}
	scm.svcs["hang"] = &fakeSvc{state: stateStopPending, stuck: true}
	h, _ := testHost(scm)
	ctx := context.Background()
	if err := h.StopService(ctx, "nostop", true); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("service refusing stop: %v", err)
	}
	if err := h.StopService(ctx, "hang", true); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("hanging stop: %v", err)
	}
	if err := h.StopService(ctx, "missing", true); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
}

func TestScmErrorKeepsErrno(t *testing.T) {
	err := scmError(syscall.Errno(1060), "open service %q", "x")
	if !errors.Is(err, errdefs.ErrNotFound) || !errors.Is(err, errServiceDoesNotExist) {
		t.Errorf("%v", err)
	}
	err = scmError(syscall.Errno(9999), "x")
	if errgrpc.Code(err).String() != "Internal" {
		t.Errorf("unknown code maps to %v", errgrpc.Code(err))
	}
}

func TestBIOSSerialNumber(t *testing.T) {
	h := newHost(newFakeSCM(), fakeFirmware{raw: rawSMBIOS(
		structure(0, []byte{0, 1, 2, 0, 0}, "American Megatrends", "1.0"),
		structure(1, sysInfo(4), "Dell Inc.", "PowerEdge", "A01", "ABC1234"),
		structure(127, nil),
	)})
	sn, err := h.BIOSSerialNumber(context.Background())
	if err != nil || sn != "ABC1234" {
		t.Errorf("got %q, %v", sn, err)
	}
	h = newHost(newFakeSCM(), fakeFirmware{err: syscall.Errno(1)})
	if _, err := h.BIOSSerialNumber(context.Background()); err == nil {
		t.Error("firmware error swallowed")
	}
}
