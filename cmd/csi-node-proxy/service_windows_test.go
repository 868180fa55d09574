//go:build windows

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
	"github.com/csi-node-proxy/csi-node-proxy/internal/winsvc"
	"github.com/csi-node-proxy/csi-node-proxy/internal/winsvc/winsvctest"
)

// serviceHelper, after "--" on the test binary's command line, makes
// TestServiceHelperProcess run the daemon with the arguments that follow.
const serviceHelper = "csi-node-proxy-service-helper"

// TestServiceHelperProcess is not a test: the SCM starts this test binary
// as the service of TestWindowsService_UnderSCM_DrainsInFlightCalls, with
// "-test.run=^TestServiceHelperProcess$ -- csi-node-proxy-service-helper
// <daemon flags>", and this runs the daemon as csi-node-proxy.exe would.
// (It cannot be an init function: the SCM calls the service on a thread
// Go only lets run once initialisation is over.)
func TestServiceHelperProcess(t *testing.T) {
	args := flag.Args()
	if len(args) == 0 || args[0] != serviceHelper {
		t.Skip("only the service process of TestWindowsService_UnderSCM_DrainsInFlightCalls runs this")
	}
	os.Exit(realMain(args[1:]))
}

// TestWindowsService_UnderSCM_DrainsInFlightCalls installs the daemon (this
// test binary) into the service control manager with winsvc.Install,
// starts it, calls it over its named pipe, stops it through the SCM while
// a call is in flight, and checks that the service stays StopPending until
// the call completes, then stops with exit code 0 and is uninstalled.
// It runs under Wine (whose SCM hosts it; recovery actions are not
// implemented there and are skipped), or on Windows as administrator with
// CSI_NODE_PROXY_TEST_SCM=1 and no other csi-proxy serving disk-v1.
func TestWindowsService_UnderSCM_DrainsInFlightCalls(t *testing.T) {
	winsvctest.NeedSCM(t)
	resetKlog(t)
	m, err := winsvc.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Disconnect() })
	m = winsvctest.WineTolerant(t, m)
	name := fmt.Sprintf("cnp-test-%d", os.Getpid())
	prog, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "service.log")
	daemon := []string{"-windows-service", "--host=simulated", "--apis=disk-v1", "--shutdown-timeout=20s", "-v=2", "-log_file=" + logFile, "-logtostderr=false"}
	// The daemon flags pass install-service's check, which adds the
	// node-admin preset (no --policy given: every install path starts
	// with it) and says so. The service below runs the flags as given,
	// without a policy: this test is about draining a call, and Wine's
	// user is no Administrator the preset would admit.
	checked, notes, err := serviceArgs(daemon, name, os.Getenv)
	if err != nil || !slices.Equal(checked, append(slices.Clone(daemon), "--policy-preset=node-admin")) || len(notes) != 1 {
		t.Fatalf("serviceArgs = %q, %q, %v", checked, notes, err)
	}
	checked = daemon
	t.Cleanup(func() {
		if _, err := winsvc.Uninstall(m, winsvc.UninstallOptions{Name: name, Timeout: 30 * time.Second}); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		if t.Failed() {
			log, _ := os.ReadFile(logFile)
			t.Logf("service log:\n%s", log)
		}
	})
	res, err := winsvc.Install(m, winsvc.InstallOptions{
		Name:      name,
		Program:   prog,
		Args:      append([]string{"-test.run=^TestServiceHelperProcess$", "--", serviceHelper}, checked...),
		StartType: winsvc.StartManual,
		Start:     true,
		Timeout:   30 * time.Second,
		Progress:  func(s string) { t.Log(s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created || !res.Started {
		t.Fatalf("install: %+v", res)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	address := transport.Endpoint{Name: "csi-proxy-disk-v1", Options: transport.DefaultOptions()}.Address()
	cc, err := grpc.NewClient(transport.Target(address), transport.DialOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	// A call in flight (its request not sent yet), then a second call on
	// the same connection, answered after the server saw the first.
	stream, err := cc.NewStream(ctx, &grpc.StreamDesc{}, diskv1.Disk_ListDiskLocations_FullMethodName)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health over %s = %v, %v", address, r, err)
	}

	s, err := m.OpenService(name)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Control(winsvc.Stop); err != nil {
		t.Fatalf("stop: %v", err)
	}
	// The handler takes the control, then reports StopPending.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st, err := s.Query()
		if err != nil {
			t.Fatal(err)
		}
		if st.State != winsvc.Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("still RUNNING 10 s after Stop")
		}
	}
	// The service drains: StopPending for as long as the call is open.
	for range 10 {
		st, err := s.Query()
		if err != nil {
			t.Fatal(err)
		}
		if st.State != winsvc.StopPending {
			t.Fatalf("state %s while a call is in flight, want STOP_PENDING", st.State)
		}
		time.Sleep(50 * time.Millisecond)
	}
	finishHeldCall(t, stream)
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := s.Query()
		if err != nil {
			t.Fatal(err)
		}
		if st.State == winsvc.Stopped {
			if st.Win32ExitCode != 0 {
				t.Errorf("stopped with %+v, want exit code 0", st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %s 30 s after the call completed", st.State)
		}
		time.Sleep(50 * time.Millisecond)
	}
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"Running as a Windows service" service="` + name + `"`, `"Serving" api="csi-proxy-disk-v1"`, `"Shutting down" timeout="20s"`, `"Stopped"`} {
		if !strings.Contains(string(log), want) {
			t.Errorf("service log lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("service log:\n%s", log)
	}
}
