package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/winsvc"
	"github.com/csi-node-proxy/csi-node-proxy/internal/winsvc/winsvctest"
)

// finishHeldCall completes the ListDiskLocations call that the service
// tests hold open across a Stop (its stream open, its request not sent),
// and fails the test unless the draining service still answers it with the
// simulated host's disks. The Windows service test and its Unix stand-in
// prove the same drain, so they finish the call the same way.
func finishHeldCall(t *testing.T, stream grpc.ClientStream) {
	t.Helper()
	if err := stream.SendMsg(&diskv1.ListDiskLocationsRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	var resp diskv1.ListDiskLocationsResponse
	if err := stream.RecvMsg(&resp); err != nil {
		t.Fatalf("the call in flight when Stop arrived failed: %v", err)
	}
	if len(resp.DiskLocations) == 0 {
		t.Errorf("empty answer: %v", &resp)
	}
}

// fakeEnv is a Windows machine as the service subcommands see it, with
// the SCM faked; out and errOut collect what they print.
func fakeEnv(m *winsvctest.Manager) (serviceEnv, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return serviceEnv{
		connect:    func() (winsvc.Manager, error) { return m, nil },
		executable: func() (string, error) { return `C:\Program Files\csi-node-proxy\csi-node-proxy.exe`, nil },
		getenv: func(k string) string {
			if k == "ProgramData" {
				return `D:\ProgramData`
			}
			return ""
		},
		stdout: &out, stderr: &errOut,
		clock: winsvctest.NewClock(),
	}, &out, &errOut
}

// upstreamService is upstream csi-proxy's service as its README installs
// it, running.
func upstreamService() *winsvctest.Service {
	return &winsvctest.Service{
		Name: "csiproxy",
		Config: winsvc.Config{
			BinaryPathName:   `C:\etc\kubernetes\node\bin\csi-proxy.exe -v=5 -windows-service -log_file=C:\etc\kubernetes\logs\csi-proxy.log -logtostderr=false`,
			DisplayName:      "csiproxy",
			StartType:        winsvc.StartAutomatic,
			ServiceStartName: "LocalSystem",
		},
		State:          winsvc.Running,
		PendingQueries: 2,
	}
}

// TestInstallServiceReplacesUpstream: install-service with upstream's
// flags replaces upstream's running csiproxy in place; the fake SCM
// records the stop, the new configuration with the quoted command line,
// the recovery actions and the restart.
func TestInstallServiceReplacesUpstream(t *testing.T) {
	resetKlog(t)
	m := winsvctest.NewManager(upstreamService())
	env, out, errOut := fakeEnv(m)
	code := installService([]string{"--now", "--", "-v=5", "-windows-service", `-log_file=C:\etc\kubernetes\logs\csi-node-proxy.log`,
		"-logtostderr=false", `-working-dir=C:\Program Files\data`, "-working-dir=D:\\"}, env)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	bin := `"C:\Program Files\csi-node-proxy\csi-node-proxy.exe" -v=5 -windows-service -log_file=C:\etc\kubernetes\logs\csi-node-proxy.log -logtostderr=false "-working-dir=C:\Program Files\data" -working-dir=D:\ --policy-preset=node-admin`
	cfg := winsvc.Config{BinaryPathName: bin, DisplayName: winsvc.DefaultDisplayName, Description: winsvc.DefaultDescription,
		StartType: winsvc.StartAutomatic, ServiceStartName: winsvc.LocalSystem}
	want := []string{
		"OpenService csiproxy",
		"Control csiproxy Stop",
		"UpdateConfig csiproxy " + winsvctest.FormatConfig(cfg),
		"SetRecoveryActions csiproxy restart/5s restart/10s restart/30s reset=24h0m0s",
		"SetRecoveryActionsOnNonCrashFailures csiproxy true",
		"AddEventSource csiproxy",
		"Start csiproxy",
		"Close csiproxy",
		"Disconnect",
	}
	if got := m.Ops(); !slices.Equal(got, want) {
		t.Errorf("SCM operations:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	// The command line reads back as the daemon flags given.
	if got := winsvc.SplitCommandLine(bin)[1:]; !slices.Equal(got, []string{"-v=5", "-windows-service", `-log_file=C:\etc\kubernetes\logs\csi-node-proxy.log`,
		"-logtostderr=false", `-working-dir=C:\Program Files\data`, `-working-dir=D:\`, "--policy-preset=node-admin"}) {
		t.Errorf("arguments %q", got)
	}
	rollback := `To roll back: sc.exe stop csiproxy; sc.exe config csiproxy binPath= "C:\etc\kubernetes\node\bin\csi-proxy.exe -v=5 -windows-service -log_file=C:\etc\kubernetes\logs\csi-proxy.log -logtostderr=false"; sc.exe start csiproxy`
	// The one note: the policy every install path starts with.
	if s := out.String(); !strings.Contains(s, rollback) || strings.Count(s, "Note:") != 1 || !strings.Contains(s, "Note: added --policy-preset=node-admin") {
		t.Errorf("stdout:\n%s", s)
	}
	t.Logf("stdout:\n%s", out)
}

// TestInstallServiceValidatesFirst: daemon flags the daemon would refuse
// stop install-service before it connects to the SCM.
func TestInstallServiceValidatesFirst(t *testing.T) {
	resetKlog(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--", "-no-such-flag"}, "flag provided but not defined: -no-such-flag"},
		{[]string{"--", "-apis=nope"}, `unknown API "nope"`},
		{[]string{"--", "-shutdown-timeout=0s"}, "-shutdown-timeout must be positive"},
		{[]string{"--", "-version"}, "do not belong in a service"},
		{[]string{"--", "--host=linux"}, "--host=linux cannot run as a Windows service"},
		{[]string{"--", "-windows-service=false"}, "contradicts install-service"},
		{[]string{"--", "stray"}, "takes flags only"},
		{[]string{"-no-such-flag"}, "flag provided but not defined: -no-such-flag"},
		{[]string{"-timeout"}, "flag needs an argument: -timeout"},
		{[]string{"--start=sometimes"}, "want auto, delayed-auto"},
	} {
		m := winsvctest.NewManager()
		connected := false
		env, _, errOut := fakeEnv(m)
		env.connect = func() (winsvc.Manager, error) { connected = true; return m, nil }
		if code := installService(tc.args, env); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", tc.args, code, exitUsage)
		}
		if !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%q: stderr %q lacks %q", tc.args, errOut, tc.want)
		}
		if connected || len(m.Calls()) > 0 {
			t.Errorf("%q: the SCM was contacted", tc.args)
		}
	}
}

// TestInstallServiceAddsWhatAServiceNeeds: -windows-service, the
// node-admin preset when the flags name no policy (every install path's
// default) and, when the flags send logs only to stderr, a log file are
// added, and said so.
func TestInstallServiceAddsWhatAServiceNeeds(t *testing.T) {
	for _, tc := range []struct {
		args, want []string
	}{
		{nil, []string{"-windows-service", "--policy-preset=node-admin", `-log_file=D:\ProgramData\csi-node-proxy\csiproxy.log`, "-logtostderr=false"}},
		{[]string{"-v=2"}, []string{"-windows-service", "-v=2", "--policy-preset=node-admin", `-log_file=D:\ProgramData\csi-node-proxy\csiproxy.log`, "-logtostderr=false"}},
		{[]string{`-log_file=C:\l\x.log`, "--policy-preset=smb"}, []string{"-windows-service", `-log_file=C:\l\x.log`, "--policy-preset=smb", "-logtostderr=false"}},
		{[]string{`-log_dir=C:\l`, `--policy=C:\p.yaml`}, []string{"-windows-service", `-log_dir=C:\l`, `--policy=C:\p.yaml`, "-logtostderr=false"}},
		{[]string{"--windows-service", `-log_file=C:\l\x.log`, "-logtostderr=false"}, []string{"--windows-service", `-log_file=C:\l\x.log`, "-logtostderr=false", "--policy-preset=node-admin"}},
	} {
		resetKlog(t)
		args, notes, err := serviceArgs(tc.args, "csiproxy", func(string) string { return `D:\ProgramData` })
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if !slices.Equal(args, tc.want) {
			t.Errorf("%q: service arguments %q, want %q", tc.args, args, tc.want)
		}
		if len(notes) != len(tc.want)-len(tc.args) {
			t.Errorf("%q: notes %q", tc.args, notes)
		}
	}
}

func TestInstallServiceDryRun(t *testing.T) {
	resetKlog(t)
	m := winsvctest.NewManager()
	env, out, _ := fakeEnv(m)
	if code := installService([]string{"--dry-run", "--service-name=cnp", "--start=delayed-auto", "--", "-v=2"}, env); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if len(m.Calls()) != 0 {
		t.Errorf("dry run called the SCM: %q", m.Calls())
	}
	want := `Command line: "C:\Program Files\csi-node-proxy\csi-node-proxy.exe" -windows-service -v=2 --policy-preset=node-admin -log_file=D:\ProgramData\csi-node-proxy\cnp.log -logtostderr=false`
	if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "start delayed-auto") {
		t.Errorf("stdout:\n%s\nlacks %s", out, want)
	}
}

func TestInstallServiceOptions(t *testing.T) {
	resetKlog(t)
	m := winsvctest.NewManager()
	env, out, errOut := fakeEnv(m)
	code := installService([]string{"--service-name=csi-node-proxy", "--display-name=CSI", "--description=d", "--start=demand", "--", "-v=2"}, env)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	s := m.Service("csi-node-proxy")
	if s == nil || s.Config.DisplayName != "CSI" || s.Config.Description != "d" || s.Config.StartType != winsvc.StartManual || s.State != winsvc.Stopped {
		t.Fatalf("service %+v", s)
	}
	if !strings.Contains(out.String(), "sc.exe start csi-node-proxy") {
		t.Errorf("stdout:\n%s", out)
	}
}

func TestInstallServiceSCMFailure(t *testing.T) {
	resetKlog(t)
	m := winsvctest.NewManager(&winsvctest.Service{Name: "csiproxy", Config: winsvc.Config{BinaryPathName: `C:\Windows\System32\svchost.exe -k netsvcs`}})
	env, _, errOut := fakeEnv(m)
	if code := installService([]string{"--", "-v=2"}, env); code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	if !strings.Contains(errOut.String(), "--force") {
		t.Errorf("stderr %q", errOut)
	}
}

func TestUninstallServiceCommand(t *testing.T) {
	m := winsvctest.NewManager(upstreamService())
	env, out, errOut := fakeEnv(m)
	if code := uninstallService(nil, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := []string{"OpenService csiproxy", "Control csiproxy Stop", "Delete csiproxy", "Close csiproxy", "OpenService csiproxy", "RemoveEventSource csiproxy", "Disconnect"}
	if got := m.Ops(); !slices.Equal(got, want) {
		t.Errorf("SCM operations %q, want %q", got, want)
	}
	if !strings.Contains(out.String(), "Service csiproxy removed") {
		t.Errorf("stdout:\n%s", out)
	}
	// Again: nothing to remove is not an error.
	out.Reset()
	if code := uninstallService([]string{"--service-name=csiproxy"}, env); code != 0 || !strings.Contains(out.String(), "not installed") {
		t.Errorf("second uninstall: exit %d, stdout %s", code, out)
	}
	if code := uninstallService([]string{"extra"}, env); code != exitUsage {
		t.Errorf("extra argument: exit %d", code)
	}
}

// TestServiceSubcommands: realMain sends the subcommand words to them; on
// an OS without an SCM they check their flags and then say so.
func TestServiceSubcommands(t *testing.T) {
	resetKlog(t)
	if _, ok := subcommand([]string{"-v=2", "install-service"}); ok {
		t.Error("a subcommand word after a flag is taken as a subcommand")
	}
	for _, w := range []string{cmdInstallService, cmdUninstallService} {
		if _, ok := subcommand([]string{w}); !ok {
			t.Errorf("%s is not a subcommand", w)
		}
	}
	if runtime.GOOS == "windows" {
		return // the real SCM would answer
	}
	var out, errOut bytes.Buffer
	env := realServiceEnv()
	env.stdout, env.stderr = &out, &errOut
	if code := installService([]string{"--", "-v=2"}, env); code != exitFailure || !strings.Contains(errOut.String(), "only available on Windows") {
		t.Errorf("install-service: exit %d, stderr %q", code, errOut.String())
	}
}

// TestServiceLogging: the run mode sends klog's output to a file.
func TestServiceLogging(t *testing.T) {
	dir := t.TempDir()
	getenv := func(k string) string {
		if k == "ProgramData" {
			return dir
		}
		return ""
	}
	// Default flags: %ProgramData%\csi-node-proxy\<service>.log, created.
	resetKlog(t)
	if _, err := parseFlagsWith([]string{"-windows-service"}, registry); err != nil {
		t.Fatal(err)
	}
	dest, err := serviceLogging("svc1", getenv)
	want := filepath.Join(dir, "csi-node-proxy", "svc1.log")
	if err != nil || dest != want {
		t.Fatalf("serviceLogging = %q, %v; want %q", dest, err, want)
	}
	if _, err := os.Stat(want); err != nil {
		t.Error(err)
	}
	kl := klogSettings()
	if kl.Lookup("logtostderr").Value.String() != "false" || kl.Lookup("log_file").Value.String() != want {
		t.Errorf("klog not redirected: logtostderr=%s log_file=%s", kl.Lookup("logtostderr").Value, kl.Lookup("log_file").Value)
	}

	// -log_file wins, its directory is created, -logtostderr turned off.
	resetKlog(t)
	file := filepath.Join(dir, "a", "b", "x.log")
	if _, err := parseFlagsWith([]string{"-windows-service", "-log_file=" + file}, registry); err != nil {
		t.Fatal(err)
	}
	if dest, err := serviceLogging("svc1", getenv); err != nil || dest != file {
		t.Errorf("serviceLogging = %q, %v; want %q", dest, err, file)
	}
	if klogSettings().Lookup("logtostderr").Value.String() != "false" {
		t.Error("-logtostderr still true")
	}

	// A log file that cannot be created stops the start with the reason.
	resetKlog(t)
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := parseFlagsWith([]string{"-windows-service", "-log_file=" + filepath.Join(blocker, "x.log"), "-logtostderr=false"}, registry); err != nil {
		t.Fatal(err)
	}
	if _, err := serviceLogging("svc1", getenv); err == nil || !strings.Contains(err.Error(), "log file") {
		t.Errorf("serviceLogging = %v, want a log file error", err)
	}
}

// TestSplitInstallArgs: install-service's options are picked out by name
// anywhere; everything else, and all after "--", is the daemon's.
func TestSplitInstallArgs(t *testing.T) {
	for _, tc := range []struct{ in, own, daemon []string }{
		{[]string{"--now", "-v=2", "--service-name", "x", "-kubelet-path", `C:\k`, "-timeout=5s", "-working-dir=D:\\"},
			[]string{"--now", "--service-name", "x", "-timeout=5s"}, []string{"-v=2", "-kubelet-path", `C:\k`, "-working-dir=D:\\"}},
		{[]string{"-force=false", "--", "--now", "-v=2"}, []string{"-force=false"}, []string{"--now", "-v=2"}},
		{[]string{"-h"}, []string{"-h"}, nil},
		{[]string{"stray", "-dry-run"}, []string{"-dry-run"}, []string{"stray"}},
	} {
		var o installOptions
		own, daemon := splitInstallArgs(tc.in, newInstallFlags(&o))
		if !slices.Equal(own, tc.own) || !slices.Equal(daemon, tc.daemon) {
			t.Errorf("%q: own %q daemon %q, want %q and %q", tc.in, own, daemon, tc.own, tc.daemon)
		}
	}
}

// TestInstallOptionsDoNotShadowDaemonFlags: an install-service option of
// the same name as a daemon flag would take that flag away from the
// service's command line.
func TestInstallOptionsDoNotShadowDaemonFlags(t *testing.T) {
	resetKlog(t)
	var cfg Config
	var apis string
	daemon := newFlagSet(&cfg, &apis)
	var o installOptions
	newInstallFlags(&o).VisitAll(func(f *flag.Flag) {
		if daemon.Lookup(f.Name) != nil {
			t.Errorf("install-service's -%s shadows the daemon's", f.Name)
		}
	})
}
