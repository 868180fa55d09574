//go:build windows

package winsvc_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/winsvc"
	"github.com/csi-node-proxy/csi-node-proxy/internal/winsvc/winsvctest"
)

// TestSCMAdapter installs, re-installs and uninstalls a service (never
// started) through the real SCM: what Install and Uninstall ask for, the
// SCM stores and reports back. It runs under Wine, or on Windows with
// CSI_NODE_PROXY_TEST_SCM=1.
func TestSCMAdapter(t *testing.T) {
	winsvctest.NeedSCM(t)
	m, err := winsvc.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Disconnect() }) // registered first, so it runs after the uninstall below
	m = winsvctest.WineTolerant(t, m)
	name := fmt.Sprintf("cnp-adapter-test-%d", os.Getpid())
	prog, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts := winsvc.InstallOptions{
		Name:      name,
		Program:   prog,
		Args:      []string{"-windows-service", "-v=2", `-working-dir=C:\dir with space\`, `quote"d`},
		StartType: winsvc.StartManual,
		Progress:  func(s string) { t.Log(s) },
	}
	t.Cleanup(func() {
		if _, err := winsvc.Uninstall(m, winsvc.UninstallOptions{Name: name, Timeout: 10 * time.Second}); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	res, err := winsvc.Install(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created {
		t.Fatalf("%s existed already", name)
	}
	s, err := m.OpenService(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Query()
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if cfg.BinaryPathName != res.BinaryPathName || cfg.DisplayName != winsvc.DefaultDisplayName || cfg.StartType != winsvc.StartManual ||
		!strings.EqualFold(cfg.ServiceStartName, winsvc.LocalSystem) || st.State != winsvc.Stopped {
		t.Errorf("the SCM reports %+v, %+v; installed %q", cfg, st, res.BinaryPathName)
	}
	if cfg.Description != winsvc.DefaultDescription {
		t.Logf("description read back: %q", cfg.Description)
		if !winsvctest.UnderWine() {
			t.Errorf("description %q", cfg.Description)
		}
	}

	// Again, as an upgrade: the service is updated in place.
	opts.Args = []string{"-windows-service", "-v=4"}
	opts.StartType = winsvc.StartAutomatic
	opts.DisplayName = "cnp test"
	res, err = winsvc.Install(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Created || res.Previous == nil || !strings.Contains(res.Previous.BinaryPathName, `"-working-dir=C:\dir with space\\"`) {
		t.Errorf("re-install %+v", res)
	}
	s, err = m.OpenService(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err = s.Config()
	s.Close()
	if err != nil || cfg.BinaryPathName != res.BinaryPathName || cfg.StartType != winsvc.StartAutomatic || cfg.DisplayName != "cnp test" {
		t.Errorf("after the update the SCM reports %+v, %v", cfg, err)
	}

	ures, err := winsvc.Uninstall(m, winsvc.UninstallOptions{Name: name, Timeout: 10 * time.Second})
	if err != nil || !ures.Existed {
		t.Fatalf("uninstall: %+v, %v", ures, err)
	}
	if _, err := m.OpenService(name); !errors.Is(err, winsvc.ErrServiceNotExist) {
		t.Errorf("after uninstall OpenService = %v, want ErrServiceNotExist", err)
	}
}

// TestRunOutsideSCM: -windows-service typed in a console fails at once
// with ErrNotAService.
func TestRunOutsideSCM(t *testing.T) {
	if winsvctest.UnderWine() {
		t.Skip("Wine's StartServiceCtrlDispatcher waits for a service start instead of failing with ERROR_FAILED_SERVICE_CONTROLLER_CONNECT")
	}
	done := make(chan error, 1)
	go func() { done <- winsvc.Run("x", &winsvc.Handler{}) }()
	select {
	case err := <-done:
		if !errors.Is(err, winsvc.ErrNotAService) {
			t.Errorf("Run outside the SCM = %v, want ErrNotAService", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run outside the SCM did not return")
	}
}
