package winsvc_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/winsvc"
	"github.com/csi-node-proxy/csi-node-proxy/internal/winsvc/winsvctest"
)

const (
	program = `C:\Program Files\csi-node-proxy\csi-node-proxy.exe`
	// upstreamBin is upstream's documented service command line, as
	// sc.exe create stores it.
	upstreamBin = `C:\etc\kubernetes\node\bin\csi-proxy.exe -v=5 -windows-service -log_file=C:\etc\kubernetes\logs\csi-proxy.log -logtostderr=false`
)

var daemonArgs = []string{"-windows-service", "-v=2", `-log_file=C:\etc\kubernetes\logs\csi-node-proxy.log`, "-logtostderr=false", `-working-dir=C:\Program Files\x`}

// wantBin is the command line Install builds from program and daemonArgs.
const wantBin = `"C:\Program Files\csi-node-proxy\csi-node-proxy.exe" -windows-service -v=2 -log_file=C:\etc\kubernetes\logs\csi-node-proxy.log -logtostderr=false "-working-dir=C:\Program Files\x"`

// wantConfig is what Install asks for with the default options.
var wantConfig = winsvc.Config{
	BinaryPathName:   wantBin,
	DisplayName:      winsvc.DefaultDisplayName,
	Description:      winsvc.DefaultDescription,
	StartType:        winsvc.StartAutomatic,
	ServiceStartName: winsvc.LocalSystem,
}

var wantRecovery = "SetRecoveryActions csiproxy restart/5s restart/10s restart/30s reset=24h0m0s"

func options(clock winsvc.Clock, progress *[]string) winsvc.InstallOptions {
	return winsvc.InstallOptions{
		Program:  program,
		Args:     daemonArgs,
		Clock:    clock,
		Progress: func(s string) { *progress = append(*progress, s) },
	}
}

func checkOps(t *testing.T, m *winsvctest.Manager, want ...string) {
	t.Helper()
	if got := m.Ops(); !slices.Equal(got, want) {
		t.Errorf("SCM operations:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestInstallCreatesService(t *testing.T) {
	m := winsvctest.NewManager()
	var progress []string
	res, err := winsvc.Install(m, options(winsvctest.NewClock(), &progress))
	if err != nil {
		t.Fatal(err)
	}
	checkOps(t, m,
		"OpenService csiproxy",
		"CreateService csiproxy "+winsvctest.FormatConfig(wantConfig),
		wantRecovery,
		"SetRecoveryActionsOnNonCrashFailures csiproxy true",
		"AddEventSource csiproxy",
		"Close csiproxy",
	)
	if !res.Created || res.Previous != nil || res.WasRunning || res.Started || res.BinaryPathName != wantBin {
		t.Errorf("result %+v", res)
	}
	s := m.Service("csiproxy")
	if s.Config != wantConfig || s.State != winsvc.Stopped || !s.RecoveryOnNonCrash || s.RecoveryReset != 24*time.Hour ||
		!slices.Equal(s.Recovery, winsvc.DefaultRecovery) || !m.HasEventSource("csiproxy") {
		t.Errorf("service %+v", s)
	}
	if n := m.OpenHandles("csiproxy"); n != 0 {
		t.Errorf("%d handles left open", n)
	}
	t.Logf("progress:\n%s", strings.Join(progress, "\n"))
}

func TestInstallStartsAndWaits(t *testing.T) {
	m := winsvctest.NewManager()
	var progress []string
	opts := options(winsvctest.NewClock(), &progress)
	opts.Start = true
	opts.Name = "csi-node-proxy"
	opts.StartType = winsvc.StartAutomatic
	opts.DelayedAutoStart = true
	opts.Recovery = []winsvc.RecoveryAction{{Delay: time.Second}}
	opts.RecoveryReset = time.Hour
	m.Fail["AddEventSource"] = errors.New("registry says no")
	res, err := winsvc.Install(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := wantConfig
	want.DelayedAutoStart = true
	checkOps(t, m,
		"OpenService csi-node-proxy",
		"CreateService csi-node-proxy "+winsvctest.FormatConfig(want),
		"SetRecoveryActions csi-node-proxy restart/1s reset=1h0m0s",
		"SetRecoveryActionsOnNonCrashFailures csi-node-proxy true",
		"AddEventSource csi-node-proxy",
		"Start csi-node-proxy",
		"Close csi-node-proxy",
	)
	if !res.Started || m.Service("csi-node-proxy").State != winsvc.Running {
		t.Errorf("not running: %+v", res)
	}
	// A failed event source registration is a warning, not an error.
	if !slices.ContainsFunc(progress, func(s string) bool { return strings.Contains(s, "Warning") && strings.Contains(s, "registry says no") }) {
		t.Errorf("no warning about the event source in %q", progress)
	}
}

// TestInstallReplacesUpstreamService: upstream's running csiproxy is
// stopped (Install waits until it is), re-configured in place and started
// again; the result keeps its old command line for a rollback.
func TestInstallReplacesUpstreamService(t *testing.T) {
	old := winsvc.Config{BinaryPathName: upstreamBin, DisplayName: "csiproxy", StartType: winsvc.StartAutomatic, ServiceStartName: "LocalSystem"}
	m := winsvctest.NewManager(&winsvctest.Service{Name: "csiproxy", Config: old, State: winsvc.Running, PendingQueries: 3})
	clock := winsvctest.NewClock()
	var progress []string
	res, err := winsvc.Install(m, options(clock, &progress))
	if err != nil {
		t.Fatal(err)
	}
	checkOps(t, m,
		"OpenService csiproxy",
		"Control csiproxy Stop",
		"UpdateConfig csiproxy "+winsvctest.FormatConfig(wantConfig),
		wantRecovery,
		"SetRecoveryActionsOnNonCrashFailures csiproxy true",
		"AddEventSource csiproxy",
		"Start csiproxy",
		"Close csiproxy",
	)
	if res.Created || !res.WasRunning || !res.Started || res.Previous == nil || *res.Previous != old {
		t.Errorf("result %+v", res)
	}
	if m.Count("Query") < 2*4 {
		t.Errorf("%d queries: Install did not wait for the stop and the start", m.Count("Query"))
	}
	// Stop: Running, then StopPending for 3 queries; start: StartPending
	// for 3 queries. One poll interval after each but the last of each.
	if clock.Slept() != 7*winsvc.DefaultPollInterval {
		t.Errorf("slept %s, want 7 polls", clock.Slept())
	}
	if s := m.Service("csiproxy"); s.Config != wantConfig || s.State != winsvc.Running {
		t.Errorf("service %+v", s)
	}
	t.Logf("progress:\n%s", strings.Join(progress, "\n"))
}

// TestInstallStoppedServiceStaysStopped: a stopped service is updated and
// not started, unless asked.
func TestInstallStoppedServiceStaysStopped(t *testing.T) {
	m := winsvctest.NewManager(&winsvctest.Service{Name: "CSIProxy", Config: winsvc.Config{BinaryPathName: upstreamBin}})
	var progress []string
	res, err := winsvc.Install(m, options(winsvctest.NewClock(), &progress))
	if err != nil {
		t.Fatal(err)
	}
	checkOps(t, m,
		"OpenService csiproxy",
		"UpdateConfig CSIProxy "+winsvctest.FormatConfig(wantConfig),
		"SetRecoveryActions CSIProxy restart/5s restart/10s restart/30s reset=24h0m0s",
		"SetRecoveryActionsOnNonCrashFailures CSIProxy true",
		"AddEventSource csiproxy",
		"Close CSIProxy",
	)
	if res.WasRunning || res.Started {
		t.Errorf("result %+v", res)
	}
}

// TestInstallTwice: installing again over our own service works.
func TestInstallTwice(t *testing.T) {
	m := winsvctest.NewManager()
	var progress []string
	opts := options(winsvctest.NewClock(), &progress)
	opts.Start = true
	for i := range 2 {
		if _, err := winsvc.Install(m, opts); err != nil {
			t.Fatalf("install %d: %v", i, err)
		}
	}
	if m.Count("CreateService") != 1 || m.Count("UpdateConfig") != 1 || m.Count("Control") != 1 || m.Count("Start") != 2 {
		t.Errorf("calls %q", m.Ops())
	}
}

// TestInstallRefusesForeignService: a service of that name that runs
// something else is left alone without --force.
func TestInstallRefusesForeignService(t *testing.T) {
	foreign := winsvc.Config{BinaryPathName: `C:\Windows\System32\svchost.exe -k netsvcs`}
	m := winsvctest.NewManager(&winsvctest.Service{Name: "csiproxy", Config: foreign, State: winsvc.Running})
	var progress []string
	_, err := winsvc.Install(m, options(winsvctest.NewClock(), &progress))
	if err == nil || !strings.Contains(err.Error(), "svchost.exe") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("err = %v", err)
	}
	checkOps(t, m, "OpenService csiproxy", "Close csiproxy")

	opts := options(winsvctest.NewClock(), &progress)
	opts.Force = true
	if _, err := winsvc.Install(m, opts); err != nil {
		t.Fatal(err)
	}
	if got := m.Service("csiproxy").Config.BinaryPathName; got != wantBin {
		t.Errorf("with --force: %s", got)
	}
}

// TestInstallDependentsRunning: a stop refused because of running
// dependents ends Install before anything changes.
func TestInstallDependentsRunning(t *testing.T) {
	m := winsvctest.NewManager(&winsvctest.Service{Name: "csiproxy", Config: winsvc.Config{BinaryPathName: upstreamBin}, State: winsvc.Running, DependentsRunning: true})
	var progress []string
	_, err := winsvc.Install(m, options(winsvctest.NewClock(), &progress))
	if !errors.Is(err, winsvc.ErrDependentServicesRunning) || !strings.Contains(err.Error(), "DependentServices") {
		t.Fatalf("err = %v", err)
	}
	checkOps(t, m, "OpenService csiproxy", "Control csiproxy Stop", "Close csiproxy")
}

// TestInstallStopTimeout: a service that does not stop within the timeout
// ends Install, unchanged, after that long.
func TestInstallStopTimeout(t *testing.T) {
	m := winsvctest.NewManager(&winsvctest.Service{Name: "csiproxy", Config: winsvc.Config{BinaryPathName: upstreamBin}, State: winsvc.Running, NeverStops: true})
	clock := winsvctest.NewClock()
	var progress []string
	opts := options(clock, &progress)
	opts.Timeout = 10 * time.Second
	_, err := winsvc.Install(m, opts)
	if err == nil || !strings.Contains(err.Error(), "still STOP_PENDING after 10s") {
		t.Fatalf("err = %v", err)
	}
	if clock.Slept() < 10*time.Second || clock.Slept() > 10*time.Second+winsvc.DefaultPollInterval {
		t.Errorf("waited %s", clock.Slept())
	}
	checkOps(t, m, "OpenService csiproxy", "Control csiproxy Stop", "Close csiproxy")
}

// TestInstallStartPendingThenStop: a service still starting is let start,
// then stopped.
func TestInstallStartPendingThenStop(t *testing.T) {
	m := winsvctest.NewManager(&winsvctest.Service{Name: "csiproxy", Config: winsvc.Config{BinaryPathName: upstreamBin}, State: winsvc.StartPending, PendingQueries: 2})
	var progress []string
	res, err := winsvc.Install(m, options(winsvctest.NewClock(), &progress))
	if err != nil {
		t.Fatal(err)
	}
	if !res.WasRunning || !res.Started || m.Count("Control") != 1 {
		t.Errorf("result %+v, calls %q", res, m.Calls())
	}
}

// TestInstallDeletesHalfMadeService: a new service whose recovery actions
// cannot be set is deleted again.
func TestInstallDeletesHalfMadeService(t *testing.T) {
	m := winsvctest.NewManager()
	m.Fail["SetRecoveryActionsOnNonCrashFailures"] = errors.New("invalid level")
	var progress []string
	res, err := winsvc.Install(m, options(winsvctest.NewClock(), &progress))
	if err == nil || !strings.Contains(err.Error(), "invalid level") || !strings.Contains(err.Error(), "deleted again") {
		t.Fatalf("err = %v", err)
	}
	checkOps(t, m,
		"OpenService csiproxy",
		"CreateService csiproxy "+winsvctest.FormatConfig(wantConfig),
		wantRecovery,
		"SetRecoveryActionsOnNonCrashFailures csiproxy true",
		"Delete csiproxy",
		"Close csiproxy",
	)
	if res.Created || !m.Service("csiproxy").Deleted {
		t.Errorf("result %+v", res)
	}
}

// TestInstallRestartsOldServiceOnFailure: if the configuration cannot be
// replaced after the old service was stopped, the old one runs again.
func TestInstallRestartsOldServiceOnFailure(t *testing.T) {
	m := winsvctest.NewManager(&winsvctest.Service{Name: "csiproxy", Config: winsvc.Config{BinaryPathName: upstreamBin}, State: winsvc.Running})
	m.Fail["UpdateConfig"] = errors.New("access denied")
	var progress []string
	_, err := winsvc.Install(m, options(winsvctest.NewClock(), &progress))
	if err == nil || !strings.Contains(err.Error(), "access denied") || !strings.Contains(err.Error(), "started again") {
		t.Fatalf("err = %v", err)
	}
	checkOps(t, m, "OpenService csiproxy", "Control csiproxy Stop",
		"UpdateConfig csiproxy "+winsvctest.FormatConfig(wantConfig), "Start csiproxy", "Close csiproxy")
	if s := m.Service("csiproxy"); s.Config.BinaryPathName != upstreamBin {
		t.Errorf("config changed: %+v", s.Config)
	}
}

// TestInstallStartFails: a service that stops while starting is reported
// with its exit code.
func TestInstallStartFails(t *testing.T) {
	m := winsvctest.NewManager()
	var progress []string
	opts := options(winsvctest.NewClock(), &progress)
	opts.Start = true
	m.Add(&winsvctest.Service{Name: "csiproxy", Config: winsvc.Config{BinaryPathName: wantBin},
		FailStart: &winsvc.Status{Win32ExitCode: 1066, ServiceSpecificExitCode: winsvc.ExitFailure}})
	_, err := winsvc.Install(m, opts)
	if err == nil || !strings.Contains(err.Error(), "stopped while starting (service-specific exit code 1)") {
		t.Fatalf("err = %v", err)
	}
}

// TestInstallMarkedForDeletion: a name still held by a deleted service
// gets advice.
func TestInstallMarkedForDeletion(t *testing.T) {
	m := winsvctest.NewManager()
	m.Fail["CreateService"] = winsvc.ErrMarkedForDelete
	var progress []string
	_, err := winsvc.Install(m, options(winsvctest.NewClock(), &progress))
	if !errors.Is(err, winsvc.ErrMarkedForDelete) || !strings.Contains(err.Error(), "services.msc") {
		t.Fatalf("err = %v", err)
	}
}

func TestInstallValidates(t *testing.T) {
	for name, mod := range map[string]func(*winsvc.InstallOptions){
		"no -windows-service": func(o *winsvc.InstallOptions) { o.Args = []string{"-v=2"} },
		"relative program":    func(o *winsvc.InstallOptions) { o.Program = `csi-node-proxy.exe` },
		"Linux program":       func(o *winsvc.InstallOptions) { o.Program = `/usr/bin/csi-node-proxy` },
		"quote in program":    func(o *winsvc.InstallOptions) { o.Program = `C:\a"b.exe` },
		"bad name":            func(o *winsvc.InstallOptions) { o.Name = `a\b` },
		"long name":           func(o *winsvc.InstallOptions) { o.Name = strings.Repeat("x", 257) },
		"delayed manual":      func(o *winsvc.InstallOptions) { o.StartType, o.DelayedAutoStart = winsvc.StartManual, true },
		"bad start type":      func(o *winsvc.InstallOptions) { o.StartType = 7 },
	} {
		m := winsvctest.NewManager()
		var progress []string
		opts := options(winsvctest.NewClock(), &progress)
		mod(&opts)
		if _, err := winsvc.Install(m, opts); err == nil {
			t.Errorf("%s: no error", name)
		}
		if calls := m.Calls(); len(calls) != 0 {
			t.Errorf("%s: the SCM was asked: %q", name, calls)
		}
	}
	// Each spelling of the flag counts.
	for _, f := range []string{"-windows-service", "--windows-service", "-windows-service=true", "--windows-service=true"} {
		var progress []string
		opts := options(winsvctest.NewClock(), &progress)
		opts.Args = []string{f}
		if _, err := winsvc.Install(winsvctest.NewManager(), opts); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestUninstall(t *testing.T) {
	m := winsvctest.NewManager(&winsvctest.Service{Name: "csiproxy", Config: wantConfig, State: winsvc.Running, PendingQueries: 2})
	m.AddEventSourceFor("csiproxy")
	var progress []string
	res, err := winsvc.Uninstall(m, winsvc.UninstallOptions{Clock: winsvctest.NewClock(), Progress: func(s string) { progress = append(progress, s) }})
	if err != nil {
		t.Fatal(err)
	}
	checkOps(t, m,
		"OpenService csiproxy",
		"Control csiproxy Stop",
		"Delete csiproxy",
		"Close csiproxy",
		"OpenService csiproxy",
		"RemoveEventSource csiproxy",
	)
	if !res.Existed || res.Previous == nil || res.Previous.BinaryPathName != wantBin || m.Service("csiproxy") != nil || m.HasEventSource("csiproxy") {
		t.Errorf("result %+v; service %+v", res, m.Service("csiproxy"))
	}
	t.Logf("progress:\n%s", strings.Join(progress, "\n"))
}

func TestUninstallNotInstalled(t *testing.T) {
	m := winsvctest.NewManager()
	res, err := winsvc.Uninstall(m, winsvc.UninstallOptions{Name: "other", Clock: winsvctest.NewClock()})
	if err != nil || res.Existed {
		t.Fatalf("%+v, %v", res, err)
	}
	checkOps(t, m, "OpenService other", "RemoveEventSource other")
}

// TestUninstallStopTimeout: a service that does not stop is not deleted.
func TestUninstallStopTimeout(t *testing.T) {
	m := winsvctest.NewManager(&winsvctest.Service{Name: "csiproxy", State: winsvc.Running, NeverStops: true})
	_, err := winsvc.Uninstall(m, winsvc.UninstallOptions{Clock: winsvctest.NewClock(), Timeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "still STOP_PENDING") {
		t.Fatalf("err = %v", err)
	}
	checkOps(t, m, "OpenService csiproxy", "Control csiproxy Stop", "Close csiproxy")
}

// TestUninstallWaitsUntilGone: a service another program holds open
// stays visible for a while; Uninstall waits for it, within the timeout.
func TestUninstallWaitsUntilGone(t *testing.T) {
	m := winsvctest.NewManager(&winsvctest.Service{Name: "csiproxy", HeldOpen: 3})
	clock := winsvctest.NewClock()
	if _, err := winsvc.Uninstall(m, winsvc.UninstallOptions{Clock: clock}); err != nil {
		t.Fatal(err)
	}
	if got := m.Count("OpenService"); got != 5 {
		t.Errorf("%d OpenService calls, want 1 + 3 while held + 1", got)
	}
	if clock.Slept() != 3*winsvc.DefaultPollInterval {
		t.Errorf("slept %s", clock.Slept())
	}

	m = winsvctest.NewManager(&winsvctest.Service{Name: "csiproxy", HeldOpen: -1})
	_, err := winsvc.Uninstall(m, winsvc.UninstallOptions{Clock: winsvctest.NewClock(), Timeout: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "still present") {
		t.Fatalf("err = %v", err)
	}
}
